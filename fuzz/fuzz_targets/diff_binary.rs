//! Fuzz target: the `diff_binary` property of `onnx_tests::fuzz` (`onnx diff`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_tests::fuzz::diff_binary(data));
