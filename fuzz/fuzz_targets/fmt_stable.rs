//! Fuzz target: the `fmt_stable` property of `onnx_tests::fuzz`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_tests::fuzz::fmt_stable(data));
