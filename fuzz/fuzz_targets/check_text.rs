//! Fuzz target: the `check_text` property of `onnx_tests::fuzz`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_tests::fuzz::check_text(data));
