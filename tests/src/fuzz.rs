//! The properties the fuzz targets (`fuzz/`) check, one function per target, so that the
//! same checks replay every committed finding and seed under plain `cargo test`
//! (`tests/tests/fuzz_regressions.rs`) on a stable toolchain. Each panics when its property
//! does not hold; none may panic on any input otherwise.

use bytes::Bytes;
use onnx_core::analysis::analyze_text;
use onnx_core::check::CheckOptions;
use onnx_core::pipeline::check_model;
use onnx_core::{binary, print};

/// Inputs bigger than this are left alone: the targets look for logic errors, and a
/// megabyte holds every structure the formats have.
const MAX_INPUT: usize = 1 << 20;

/// Binary decode + lowering: whatever decodes re-encodes to bytes that decode again to the
/// same model, and its canonical text reads back to that model.
pub fn binary_roundtrip(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let Ok(model) = binary::decode_model(Bytes::copy_from_slice(data), "fuzz") else { return };
    let encoded = binary::encode_model(&model);
    let again = binary::decode_model(Bytes::from(encoded.clone()), "fuzz").expect("our own encoding decodes");
    assert!(binary::encode_model(&again) == encoded, "re-encoding is not stable");
    canonical_roundtrip(&model, &encoded);
}

/// The canonical text of `model` reads without a syntax or lowering error, to the model
/// whose canonical encoding is `encoded`.
fn canonical_roundtrip(model: &onnx_core::ir::Model, encoded: &[u8]) {
    let text = print::canonical::model(model);
    let analysis = analyze_text(&text);
    assert!(analysis.readable, "the canonical text does not read: {:?}\n{text}", analysis.diagnostics.first());
    assert!(binary::encode_model(&analysis.model) == encoded, "the canonical text reads to another model\n{text}");
}

/// Text lex + parse + lower + resolve: never a panic; a text that reads to a model prints
/// canonically and reads back to it.
pub fn text_roundtrip(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let Ok(source) = std::str::from_utf8(data) else { return };
    let analysis = analyze_text(source);
    if analysis.readable {
        canonical_roundtrip(&analysis.model, &binary::encode_model(&analysis.model));
    }
}

/// `fmt`: a text that formats formats to itself again and reads to the same model.
pub fn fmt_stable(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let Ok(source) = std::str::from_utf8(data) else { return };
    let Ok(formatted) = onnx_syntax::format::format_model(source) else { return };
    let again = onnx_syntax::format::format_model(&formatted).expect("formatted text formats");
    assert!(again == formatted, "formatting is not idempotent");
    let (before, after) = (analyze_text(source), analyze_text(&formatted));
    if before.readable {
        assert!(after.readable, "the formatted text does not read");
        assert!(
            binary::encode_model(&before.model) == binary::encode_model(&after.model),
            "formatting changed the model"
        );
    }
}

/// The checker with inference (onnx's full check) on a binary model: never a panic.
pub fn check_binary(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let Ok(model) = binary::decode_model(Bytes::copy_from_slice(data), "fuzz") else { return };
    let options = CheckOptions { full_check: true, ..CheckOptions::default() };
    let _ = check_model(&model, &options);
}

/// The checker with inference on a text model: never a panic.
pub fn check_text(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let Ok(source) = std::str::from_utf8(data) else { return };
    let analysis = analyze_text(source);
    let options = CheckOptions { full_check: true, ..CheckOptions::default() };
    let _ = check_model(&analysis.model, &options);
    let _ = onnx_core::infer::infer_main_graph(&analysis.model);
}

/// The evaluator on a binary model, with zeros for every input (symbolic dimensions 1)
/// and small limits: an error or a result, never a panic, a huge allocation or a hang.
pub fn run_binary(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let Ok(model) = binary::decode_model(Bytes::copy_from_slice(data), "fuzz") else { return };
    let Ok(plan) = onnx_eval::Plan::new(&model) else { return };
    let limits =
        onnx_eval::Limits { max_tensor_elements: 1 << 16, max_loop_iterations: 64, max_depth: 8, max_memory: 64 << 20 };
    let Some(graph) = model.main_graph() else { return };
    let mut inputs = Vec::new();
    for (name, _) in plan.inputs() {
        let declared = graph.inputs.iter().find(|v| v.name.as_ref().is_some_and(|n| n.to_string() == name));
        let Some(ty) = declared.and_then(|v| v.ty.as_ref()) else { return };
        let Ok(value) = onnx_eval::inputs::made(ty, &Default::default(), None, limits.max_tensor_elements) else {
            return;
        };
        inputs.push((name, value));
    }
    let _ = plan.run(inputs, &onnx_eval::RunOptions { limits, ..onnx_eval::RunOptions::default() });
}

/// `onnx simplify` on a binary model: it finishes, what it makes encodes and decodes again,
/// has no more nodes, and simplifying that changes nothing more (a fixed point).
pub fn simplify_binary(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let Ok(mut model) = binary::decode_model(Bytes::copy_from_slice(data), "fuzz") else { return };
    let before = model.main_graph().map_or(0, |g| g.nodes.len());
    let options = onnx_core::simplify::Options::default();
    let done = onnx_core::simplify::simplify(&mut model, &onnx_eval::fold::Kernels, options);
    assert!(done.nodes_after <= before, "{before} nodes became {}", done.nodes_after);
    let bytes = binary::encode_model(&model);
    if binary::unwritable(&model, bytes.len()).is_some() {
        return;
    }
    let mut again =
        binary::decode_model(Bytes::from(bytes.clone()), "simplified").expect("the simplified model decodes");
    onnx_core::simplify::simplify(&mut again, &onnx_eval::fold::Kernels, options);
    assert!(binary::encode_model(&again) == bytes, "simplifying the simplified model changed it");
}

/// `onnx diff` on binary models: the input split in two at a point its first byte picks,
/// each half decoded (the whole input where a half does not decode). A model never differs
/// from itself, with or without names; two models are compared, and their values paired,
/// without a panic.
pub fn diff_binary(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let decode = |bytes: &[u8]| binary::decode_model(Bytes::copy_from_slice(bytes), "fuzz").ok();
    let Some(whole) = decode(data) else { return };
    for ignore_names in [false, true] {
        let options = onnx_core::diff::Options { ignore_names, ..Default::default() };
        let found = onnx_core::diff::diff(&whole, &whole, &options);
        assert!(found.is_empty(), "a model differs from itself: {:?}", found.first());
    }
    let split = data.first().map_or(0, |&b| usize::from(b) * data.len() / 256);
    let (a, b) = data.split_at(split);
    let (a, b) = (decode(a).unwrap_or_else(|| whole.clone()), decode(b).unwrap_or_else(|| whole.clone()));
    for ignore_names in [false, true] {
        let options = onnx_core::diff::Options { ignore_names, ..Default::default() };
        for c in onnx_core::diff::diff(&a, &b, &options) {
            assert!(!c.text().is_empty());
        }
        onnx_core::diff::paired_values(&a, &b, ignore_names);
    }
}

/// `onnx opset` on a binary model, to an opset its bytes pick (their sum, so that any
/// mutation may change it while the model still decodes; 1 to 32, beyond the newest too): a conversion or a refusal that names a node and a reason, never a
/// panic; a converted model imports the target, encodes and decodes again, and converts
/// back toward its opset without a panic.
pub fn opset_binary(data: &[u8]) {
    if data.len() > MAX_INPUT {
        return;
    }
    let Ok(model) = binary::decode_model(Bytes::copy_from_slice(data), "fuzz") else { return };
    let sum = data.iter().fold(0u8, |s, &b| s.wrapping_add(b));
    let target = i64::from(sum % 32) + 1;
    let mut converted = model.clone();
    match onnx_core::opset::convert(&mut converted, target) {
        Ok(done) => {
            assert_eq!(converted.opset_version(""), Some(target), "converted to {target}");
            let bytes = binary::encode_model(&converted);
            if binary::unwritable(&converted, bytes.len()).is_some() {
                return;
            }
            let mut back = binary::decode_model(Bytes::from(bytes), "converted").expect("the converted model decodes");
            let _ = onnx_core::opset::convert(&mut back, done.from);
        }
        Err(onnx_core::opset::OpsetError::Blocked { blockers, .. }) => {
            assert!(!blockers.is_empty() && blockers.iter().all(|b| !b.reason.is_empty()), "a refusal without reasons");
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

/// A property: panics when it does not hold for the input.
pub type Property = fn(&[u8]);

/// Every target, by the name of its folder under `fuzz/`.
pub const TARGETS: &[(&str, Property)] = &[
    ("binary_roundtrip", binary_roundtrip),
    ("text_roundtrip", text_roundtrip),
    ("fmt_stable", fmt_stable),
    ("check_binary", check_binary),
    ("check_text", check_text),
    ("run_binary", run_binary),
    ("simplify_binary", simplify_binary),
    ("diff_binary", diff_binary),
    ("opset_binary", opset_binary),
    ("lsp_messages", crate::fuzz_lsp::lsp_messages),
    ("lsp_edits", crate::fuzz_lsp::lsp_edits),
];
