//! Fuzz target: the `simplify_binary` property of `onnx_tests::fuzz` (`onnx simplify`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_tests::fuzz::simplify_binary(data));
