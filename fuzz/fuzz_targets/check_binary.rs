//! Fuzz target: the `check_binary` property of `onnx_tests::fuzz`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_tests::fuzz::check_binary(data));
