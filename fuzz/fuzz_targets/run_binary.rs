//! Fuzz target: the `run_binary` property of `onnx_tests::fuzz` (the evaluator).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_tests::fuzz::run_binary(data));
