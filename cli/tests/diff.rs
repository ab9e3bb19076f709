//! `onnx diff --run` on the real models of the corpus with their committed inputs: a model
//! against itself agrees; a model whose weight was changed parts first at the node that
//! reads that weight, whatever the budget of values held waiting for their partner.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use bytes::Bytes;
use onnx_core::ir::{DataType, Model, Str};
use serde_json::Value;

fn onnx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_onnx")).args(args).output().unwrap()
}

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// Each real model with committed inputs: (name, model, its run-data folder).
fn models_with_inputs() -> Vec<(String, PathBuf, PathBuf)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(repo("tests/fixtures/run")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let model = repo(&format!("tests/corpus/real/{name}.onnx"));
        if dir.join("input_0.pb").exists() && model.exists() {
            found.push((name, model, dir));
        }
    }
    found.sort();
    assert!(found.len() >= 10, "the real models' run data is missing");
    found
}

fn diff_run(a: &Path, b: &Path, data: &Path, extra: &[&str]) -> (Option<i32>, Value) {
    let mut args =
        vec!["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--run", "--test-data", data.to_str().unwrap()];
    args.extend_from_slice(&["--json"]);
    args.extend_from_slice(extra);
    let out = onnx(&args);
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}: {}", a.display(), String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), json)
}

/// The first main-graph node, in order, that reads a float initializer of at least two
/// values, and the model with every value of that initializer moved by 0.5.
fn with_changed_weight(model: &Model) -> Option<(String, Model)> {
    let graph = model.main_graph()?;
    let floats: Vec<(usize, &Str)> = graph
        .initializers
        .iter()
        .enumerate()
        .filter_map(|(k, &t)| {
            let t = &model.tensors[t];
            let raw = t.raw_data.as_ref()?;
            (t.elem_type() == Some(DataType::Float) && raw.len() >= 8).then_some((k, t.name.as_ref()?))
        })
        .collect();
    let (reader, k) = graph.nodes.iter().find_map(|&n| {
        let node = &model.nodes[n];
        let k = floats.iter().find(|(_, name)| node.inputs.contains(name))?.0;
        Some((n, k))
    })?;
    let mut changed = model.clone();
    let t = changed.graphs[changed.graph?].initializers[k];
    let moved: Vec<u8> = changed.tensors[t]
        .raw_data
        .as_ref()?
        .chunks_exact(4)
        .flat_map(|b| (f32::from_le_bytes(b.try_into().unwrap()) + 0.5).to_le_bytes())
        .collect();
    changed.tensors[t].raw_data = Some(Bytes::from(moved));
    Some((onnx_core::diff::node_label(model, reader), changed))
}

#[test]
fn runs_part_first_at_the_node_reading_a_changed_weight() {
    let temp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (name, path, data) in models_with_inputs() {
        let model = onnx_core::binary::read_model(&path).unwrap();
        let (code, same) = diff_run(&path, &path, &data, &[]);
        assert_eq!(code, Some(0), "{name} against itself: {same}");
        assert!(same["run"]["first_difference"].is_null(), "{name}: {same}");
        let compared = same["run"]["compared"].as_u64().unwrap();
        assert!(compared > 0 && compared == same["run"]["pairs"].as_u64().unwrap(), "{name}: {same}");
        let Some((reader, changed)) = with_changed_weight(&model) else { continue };
        let changed_path = temp.path().join(format!("{name}.onnx"));
        std::fs::write(&changed_path, onnx_core::binary::encode_model(&changed)).unwrap();
        let (code, whole) = diff_run(&path, &changed_path, &data, &[]);
        assert_eq!(code, Some(1), "{name}: {whole}");
        let first = &whole["run"]["first_difference"];
        assert_eq!(first["node_a"], Value::String(reader.clone()), "{name}: {first}");
        assert!(first["a"]["line"].as_u64().is_some(), "{name}: placed on a line: {first}");
        // One kilobyte of values waiting at most: the run ahead waits, the answer is the same.
        let (code, bounded) = diff_run(&path, &changed_path, &data, &["--keep", "1K"]);
        assert_eq!(code, Some(1), "{name}: {bounded}");
        assert_eq!(bounded["run"]["first_difference"]["node_a"], Value::String(reader), "{name}: {bounded}");
        checked += 1;
    }
    assert!(checked >= 10, "too few models with a weight to change: {checked}");
}

/// `onnx simplify`'s output against its input: every value of a name both keep agrees
/// (values are paired by name, so a Conv that absorbed its bias Add is compared where the
/// Add's value was); with the tolerance float32 fusion needs (a folded BatchNormalization
/// rounds differently: ppocrv5_det's largest difference is 1.5e-4 on values near 0.1).
#[test]
fn simplified_models_agree_with_their_originals_value_for_value() {
    let temp = tempfile::tempdir().unwrap();
    let mut agreed = 0;
    for (name, path, data) in models_with_inputs() {
        let simplified = temp.path().join(format!("{name}.onnx"));
        let made = onnx(&["simplify", path.to_str().unwrap(), simplified.to_str().unwrap()]);
        assert!(made.status.success(), "{name}: {}", String::from_utf8_lossy(&made.stderr));
        let (code, json) = diff_run(&path, &simplified, &data, &["--rtol", "1e-3", "--atol", "1e-3"]);
        assert!(json["run"]["first_difference"].is_null(), "{name}: {}", json["run"]);
        assert_eq!(code, Some(0), "{name}: {json}");
        assert!(json["run"]["compared"].as_u64().unwrap() > 0, "{name}: nothing compared");
        agreed += 1;
    }
    assert!(agreed >= 10);
}

/// Two runtimes, node by node: onnxruntime's value of every node of a real model
/// (`scripts/onnxruntime_values.py`, in the layout `onnx run --all-values` writes) against
/// ours with `onnx run --compare-values`, and, with a weight moved on onnxruntime's side,
/// the node reading it found by the first difference and by `onnx reduce --against`.
#[test]
fn onnxruntime_values_compare_with_ours_node_by_node() {
    let Some(python) = onnx_tests::reference_python_or_skip("onnxruntime_values_compare_with_ours_node_by_node") else {
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let script = repo("scripts/onnxruntime_values.py");
    let mut moved_runs = 0;
    for name in ["pt_ts_sdp", "keras2onnx_mtcnn_onet", "tf2onnx_deepcut"] {
        let model = repo(&format!("tests/corpus/real/{name}.onnx"));
        let data = repo(&format!("tests/fixtures/run/{name}"));
        let values = temp.path().join(name);
        let out = Command::new(&python).arg(&script).args([&model, &data, &values]).output().unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let (m, d, v) = (model.to_str().unwrap(), data.to_str().unwrap(), values.to_str().unwrap());
        let out = onnx(&["run", m, "--test-data", d, "--compare-values", v]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && stdout.contains("all within tolerance"), "{name}: {stdout}");
        // The same model with one weight moved, run by onnxruntime: ours parts from it at the
        // node that reads the weight.
        let moved = temp.path().join(format!("{name}_moved.onnx"));
        // (sdp keeps its weights in typed fields: no raw weight to move.)
        let Some((node, changed)) = with_changed_weight(&onnx_core::binary::read_model(&model).unwrap()) else {
            continue;
        };
        moved_runs += 1;
        std::fs::write(&moved, onnx_core::binary::encode_model(&changed)).unwrap();
        let moved_values = temp.path().join(format!("{name}_moved_values"));
        let out = Command::new(&python).arg(&script).args([&moved, &data, &moved_values]).output().unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let out = onnx(&["run", m, "--test-data", d, "--compare-values", moved_values.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        let first = stderr.lines().find(|l| l.starts_with("first difference: node")).unwrap_or_default();
        assert!(first.contains(&format!("'{node}'")), "{name}: {node}: {stderr}");
    }
    assert_eq!(moved_runs, 2);
}
