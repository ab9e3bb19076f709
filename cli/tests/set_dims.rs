//! `onnx set-dims` against onnxruntime 1.32.0's `make_dynamic_shape_fixed` (its
//! `make_dim_param_fixed`, `make_input_shape_fixed` and `fix_output_shapes`) on the real models
//! with dynamic inputs: the cases `tests/fixtures/set_dims/gen_set_dims_cases.py` recorded give
//! the same types to every input, output and value_info of the main graph.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};

use onnx_core::ir::{DimValue, TypeValue, ValueInfo};
use onnx_tests::corpus_file;
use serde_json::Value;

fn onnx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_onnx")).args(args).output().unwrap()
}

/// The recorder's notation: `ELEM:[d,…]` with sizes, `p:NAME` and `?`; `ELEM:none`; `other`.
fn type_text(v: &ValueInfo) -> String {
    let Some(TypeValue::Tensor(t)) = v.ty.as_ref().and_then(|t| t.value.as_ref()) else { return "other".into() };
    let elem = t.elem_type.unwrap_or(0);
    let Some(shape) = &t.shape else { return format!("{elem}:none") };
    let dims: Vec<String> = shape
        .dims
        .iter()
        .map(|d| match &d.value {
            Some(DimValue::Value(v)) => v.to_string(),
            Some(DimValue::Param(p)) => format!("p:{}", p.escaped()),
            None => "?".into(),
        })
        .collect();
    format!("{elem}:[{}]", dims.join(","))
}

fn texts(values: &[ValueInfo]) -> BTreeMap<String, String> {
    values.iter().map(|v| (v.name.as_ref().map_or_else(String::new, |n| n.escaped()), type_text(v))).collect()
}

fn expected(part: &Value) -> BTreeMap<String, String> {
    part.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned())).collect()
}

#[test]
fn fixed_dimensions_are_those_onnxruntimes_tool_fixes() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/set_dims/cases.json");
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for (i, case) in cases.iter().enumerate() {
        let Some(after) = case.get("after") else { continue };
        let model = corpus_file("real").join(case["model"].as_str().unwrap());
        let out = dir.path().join(format!("fixed{i}.onnx"));
        let mut args = vec!["set-dims".to_owned(), model.display().to_string(), out.display().to_string()];
        args.extend(case["settings"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let result = onnx(&args);
        assert!(result.status.success(), "case {i} ({}): {}", case["model"], String::from_utf8_lossy(&result.stderr));
        let fixed = onnx_core::binary::read_model(&out).unwrap();
        let g = fixed.main_graph().unwrap();
        for (part, ours) in [("input", &g.inputs), ("output", &g.outputs), ("value_info", &g.value_info)] {
            assert_eq!(
                texts(ours),
                expected(&after[part]),
                "case {i} ({} {:?}): the {part}s",
                case["model"],
                case["settings"]
            );
        }
        compared += 1;
    }
    assert!(compared >= 15, "only {compared} cases compared");
}

/// Settings that do not apply are all named, and nothing is written.
#[test]
fn settings_that_do_not_apply_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let model = corpus_file("real").join("pt_ts_romanizer_encoder.onnx");
    let out = dir.path().join("fixed.onnx");
    let result = onnx(&["set-dims", model.to_str().unwrap(), out.to_str().unwrap(), "bacth=1", "src:1,2,3", "nope:1"]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no dimension is named bacth (the model's: batch, src_len"), "{stderr}");
    assert!(stderr.contains("input src has rank 2, the shape given has 3 sizes"), "{stderr}");
    assert!(stderr.contains("no graph input is named nope"), "{stderr}");
    assert!(!out.exists());
    let result = onnx(&["set-dims", model.to_str().unwrap(), out.to_str().unwrap(), "batch=0"]);
    assert_eq!(result.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&result.stderr).contains("is not a size"));
}

/// Beyond onnxruntime's tool: a symbol in an input's shape makes that size dynamic; the
/// outputs that follow it take the symbol, and the nodes that pin it are named.
#[test]
fn a_size_made_symbolic_is_followed_or_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dynamic.onnx");
    let model = corpus_file("real").join("cntk_mnist_conv.onnx");
    let result = onnx(&["set-dims", model.to_str().unwrap(), out.to_str().unwrap(), "Input3:N,1,28,28", "--json"]);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let json: Value = serde_json::from_slice(&result.stdout).unwrap();
    assert_eq!(json["made_symbolic"], 1);
    let pins = json["pinned_by"].as_array().unwrap();
    assert_eq!(pins.len(), 1, "{pins:?}");
    assert_eq!(pins[0]["op"], "Reshape");
    assert_eq!(pins[0]["output"], "float[1,256]");
    let fixed = onnx_core::binary::read_model(&out).unwrap();
    assert_eq!(type_text(&fixed.main_graph().unwrap().inputs[0]), "1:[p:N,1,28,28]");

    let model = corpus_file("real").join("pt_ts_espcn_float.onnx");
    let result = onnx(&["set-dims", model.to_str().unwrap(), out.to_str().unwrap(), "input:N,3,4,4"]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success() && !stderr.contains("pinned"), "{stderr}");
    let fixed = onnx_core::binary::read_model(&out).unwrap();
    assert_eq!(type_text(&fixed.main_graph().unwrap().outputs[0]), "1:[p:N,3,12,12]");
    let check = onnx(&["check", out.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
}
