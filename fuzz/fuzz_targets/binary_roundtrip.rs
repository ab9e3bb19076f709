//! Fuzz target: the `binary_roundtrip` property of `onnx_tests::fuzz`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_tests::fuzz::binary_roundtrip(data));
