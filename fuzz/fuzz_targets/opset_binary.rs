//! Fuzz target: the `opset_binary` property of `onnx_tests::fuzz` (`onnx opset`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_tests::fuzz::opset_binary(data));
