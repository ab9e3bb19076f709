//! Fuzz target: the `text_roundtrip` property of `onnx_tests::fuzz`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_tests::fuzz::text_roundtrip(data));
