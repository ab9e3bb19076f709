//! `onnx extract` against `onnx.utils.extract_model` (onnx 1.23.2) on the real models of the
//! corpus: the cuts recorded by `tests/fixtures/extract/gen_extract_cases.py` keep the same
//! nodes in the same order; and what a cut cannot be made from is said whole.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

use onnx_tests::corpus_file;
use serde_json::Value;

fn onnx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_onnx")).args(args).output().unwrap()
}

fn cases() -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/extract/cases.json");
    serde_json::from_str::<Value>(&std::fs::read_to_string(path).unwrap()).unwrap().as_array().unwrap().clone()
}

fn names(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

#[test]
fn cuts_keep_the_nodes_onnx_keeps() {
    let dir = tempfile::tempdir().unwrap();
    let (mut compared, mut ours_only) = (0, 0);
    for (i, case) in cases().iter().enumerate() {
        let model = corpus_file("real").join(case["model"].as_str().unwrap());
        let out = dir.path().join(format!("cut{i}.onnx"));
        let (inputs, outputs) = (names(&case["inputs"]).join(","), names(&case["outputs"]).join(","));
        let args =
            ["extract", model.to_str().unwrap(), out.to_str().unwrap(), "--inputs", &inputs, "--outputs", &outputs];
        let result = onnx(&args);
        let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
        let Some(expected) = case.get("nodes") else {
            // onnx refused (its checker rejects the model itself, or inference left a cut
            // value untyped): ours either cuts a model our checker accepts or says why.
            if result.status.success() {
                let check = onnx(&["check", out.to_str().unwrap()]);
                assert!(check.status.success(), "case {i}: {}", String::from_utf8_lossy(&check.stderr));
                ours_only += 1;
            } else {
                assert!(stderr.contains("cannot extract"), "case {i}: {stderr}");
            }
            continue;
        };
        assert!(result.status.success(), "case {i} ({}): {stderr}", case["model"]);
        let cut = onnx_core::binary::read_model(&out).unwrap();
        let g = cut.main_graph().unwrap();
        let kept: Vec<String> = g
            .nodes
            .iter()
            .map(|&n| {
                cut.nodes[n].outputs.iter().find(|o| !o.as_bytes().is_empty()).map_or_else(String::new, |o| o.escaped())
            })
            .collect();
        assert_eq!(kept, names(expected), "case {i} ({}): other nodes than onnx's", case["model"]);
        let check = onnx(&["check", out.to_str().unwrap()]);
        assert!(check.status.success(), "case {i}: {}", String::from_utf8_lossy(&check.stderr));
        compared += 1;
    }
    assert!(compared >= 20, "only {compared} cuts compared with onnx's");
    assert!(ours_only >= 3, "only {ours_only} cuts onnx refuses made by ours");
}

/// A cut that leaves values without a source lists every one of them, and writes nothing.
#[test]
fn a_cut_missing_inputs_lists_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("m.onnxtxt");
    std::fs::write(
        &text,
        "<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[4] a, float[4] b, float[4] c) => (float[4] y) {\n  \
         s = Add(a, b)\n  t = Mul(s, c)\n  u = Sub(t, a)\n  y = Relu(u)\n}\n",
    )
    .unwrap();
    let out = dir.path().join("cut.onnx");
    let result = onnx(&["extract", text.to_str().unwrap(), out.to_str().unwrap(), "--inputs", "s", "--outputs", "y"]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("needs 2 more input(s)")
            && stderr.contains("c (read by t)")
            && stderr.contains("a (read by u)"),
        "{stderr}"
    );
    assert!(!out.exists());
    let result = onnx(&[
        "extract",
        text.to_str().unwrap(),
        out.to_str().unwrap(),
        "--inputs",
        "s,c,a,nope",
        "--outputs",
        "y,zz",
    ]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("no value of the main graph is named nope, zz"), "{stderr}");
    // Enough inputs: three nodes, from s to y.
    let result =
        onnx(&["extract", text.to_str().unwrap(), out.to_str().unwrap(), "--inputs", "s,c,a", "--outputs", "y"]);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let cut = onnx_core::binary::read_model(&out).unwrap();
    assert_eq!(cut.main_graph().unwrap().nodes.len(), 3);
}

/// A node inside an If branch that reads a value of the main graph brings the node that
/// computes it (onnx's extractor leaves it out, and its cut does not load).
#[test]
fn values_read_inside_subgraphs_are_part_of_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("m.onnxtxt");
    std::fs::write(
        &text,
        "<ir_version: 10, opset_import: [\"\" : 21]>\nmain (float[4] x, bool cond) => (float[4] y) {\n  \
         h = Neg(x)\n  y = If(cond) <then_branch = t () => (float[4] a) { a = Abs(h) }, \
         else_branch = e () => (float[4] b) { b = Identity(x) }>\n}\n",
    )
    .unwrap();
    let out = dir.path().join("cut.onnxtxt");
    let result = onnx(&["extract", text.to_str().unwrap(), out.to_str().unwrap(), "--outputs", "y"]);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let cut = std::fs::read_to_string(&out).unwrap();
    assert!(cut.contains("h = Neg (x)"), "{cut}");
}

/// Tensors kept in a side file stay there: the cut refers to the same file, and is refused
/// where those references would not resolve.
#[test]
fn big_tensors_stay_in_their_side_file() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.onnx");
    let source = corpus_file("real").join("pt_ts_espcn_float.onnx");
    let converted = onnx(&["convert", source.to_str().unwrap(), model.to_str().unwrap(), "--external-data", "m.bin"]);
    assert!(converted.status.success(), "{}", String::from_utf8_lossy(&converted.stderr));
    let case =
        cases().into_iter().find(|c| c["model"] == "pt_ts_espcn_float.onnx" && c.get("nodes").is_some()).unwrap();
    let (inputs, outputs) = (names(&case["inputs"]).join(","), names(&case["outputs"]).join(","));
    let cut = dir.path().join("cut.onnx");
    let args = ["extract", model.to_str().unwrap(), cut.to_str().unwrap(), "--inputs", &inputs, "--outputs", &outputs];
    let result = onnx(&args);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    assert!(std::fs::metadata(&cut).unwrap().len() < 20_000, "the weights were copied in");
    let check = onnx(&["check", cut.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    std::fs::create_dir(dir.path().join("away")).unwrap();
    let away = dir.path().join("away/cut.onnx");
    let args = ["extract", model.to_str().unwrap(), away.to_str().unwrap(), "--inputs", &inputs, "--outputs", &outputs];
    let refused = onnx(&args);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("would break those references"));
    assert!(!away.exists());
    // With a side file of its own: only the cut's weights go into it.
    let mut args = args.to_vec();
    args.extend(["--external-data", "cut.bin"]);
    let moved = onnx(&args);
    assert!(moved.status.success(), "{}", String::from_utf8_lossy(&moved.stderr));
    let side = std::fs::metadata(dir.path().join("away/cut.bin")).unwrap().len();
    assert!(side > 0 && side < std::fs::metadata(dir.path().join("m.bin")).unwrap().len(), "{side} bytes");
    let check = onnx(&["check", away.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
}
