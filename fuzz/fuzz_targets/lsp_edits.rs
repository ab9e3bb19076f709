//! Fuzz target: the `lsp_edits` property of `onnx_tests::fuzz_lsp`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnx_tests::fuzz_lsp::lsp_edits(data));
