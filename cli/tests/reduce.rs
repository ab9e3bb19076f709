//! `onnx reduce` on real models broken in one node: the check (our evaluator on the
//! candidate, with the values the whole model's run made at its inputs) is reduced to that
//! one node, in about two bisections' worth of checks, and what is written reproduces it.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use onnx_core::ir::{Attribute, AttributeType, Str};
use serde_json::Value;

fn onnx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_onnx")).args(args).output().unwrap()
}

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// The model with its middle Conv given a group count that does not divide its channels,
/// which the evaluator refuses; that node's name.
fn broken_in_the_middle(model: &Path, out: &Path) -> String {
    let mut m = onnx_core::binary::read_model(model).unwrap();
    let g = m.graph.unwrap();
    let convs: Vec<_> = m.graphs[g]
        .nodes
        .iter()
        .copied()
        .filter(|&n| m.nodes[n].op_type.as_ref().is_some_and(|o| *o == "Conv"))
        .collect();
    let n = convs[convs.len() / 2];
    let node = &mut m.nodes[n];
    node.attributes.retain(|a| a.name.as_ref().is_none_or(|x| *x != "group"));
    node.attributes.push(Attribute {
        name: Some(Str::from("group")),
        ty: Some(AttributeType::Int as i32),
        i: Some(7),
        ..Default::default()
    });
    std::fs::write(out, onnx_core::binary::encode_model(&m)).unwrap();
    onnx_core::diff::node_label(&m, n)
}

#[test]
fn a_node_the_evaluator_refuses_is_reduced_to_alone() {
    let temp = tempfile::tempdir().unwrap();
    let check = format!("{} run {{}} --test-data {{data}}", env!("CARGO_BIN_EXE_onnx"));
    for name in ["caffe2_light_inception_v1", "p2o_ppocrv5_det", "keras2onnx_mtcnn_onet"] {
        let broken = temp.path().join(format!("{name}.onnx"));
        let node = broken_in_the_middle(&repo(&format!("tests/corpus/real/{name}.onnx")), &broken);
        let reduced = temp.path().join(format!("{name}_reduced.onnx"));
        let data = repo(&format!("tests/fixtures/run/{name}"));
        let args = [
            "reduce",
            broken.to_str().unwrap(),
            reduced.to_str().unwrap(),
            "--check",
            &check,
            "--test-data",
            data.to_str().unwrap(),
            "--json",
        ];
        let out = onnx(&args);
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(out.status.success(), "{name}: {json}");
        assert_eq!(json["nodes_after"], 1, "{name}: {json}");
        assert_eq!(json["first_node"], Value::String(node), "{name}: {json}");
        // Two bisections over the nodes, the last tries at the ends and the whole model.
        let nodes = json["nodes_before"].as_u64().unwrap();
        let bound = 2 * (64 - nodes.leading_zeros()) as u64 + 3;
        assert!(json["checks"].as_u64().unwrap() <= bound, "{name}: {json} (bound {bound})");
        // What was written fails the check the same way, with the inputs written beside it.
        let inputs = format!("{}_inputs", reduced.display());
        let again = onnx(&["run", reduced.to_str().unwrap(), "--test-data", &inputs]);
        assert!(!again.status.success(), "{name}: the reduced model runs");
        assert!(
            String::from_utf8_lossy(&again.stderr).contains("group"),
            "{name}: {}",
            String::from_utf8_lossy(&again.stderr)
        );
    }
}

#[test]
fn a_check_that_passes_on_the_whole_model_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let model = repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let out = temp.path().join("out.onnx");
    let result = onnx(&["reduce", model.to_str().unwrap(), out.to_str().unwrap(), "--check", "true"]);
    assert_eq!(result.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&result.stderr).contains("the check passes on the whole model"));
    assert!(!out.exists(), "nothing written");
}

/// The model with the first float weight (at least two values) of its middle node that
/// reads one moved by 0.5: what another runtime that computes that node otherwise would
/// give. That node's name.
fn moved_in_the_middle(model: &Path, out: &Path) -> String {
    let mut m = onnx_core::binary::read_model(model).unwrap();
    let g = m.graph.unwrap();
    let weight = |m: &onnx_core::ir::Model, name: &Str| {
        m.graphs[g].initializers.iter().copied().find(|&t| {
            let t = &m.tensors[t];
            t.name.as_ref() == Some(name) && t.data_type == Some(1) && t.element_count().is_some_and(|c| c >= 2)
        })
    };
    let readers: Vec<_> = m.graphs[g]
        .nodes
        .iter()
        .copied()
        .filter(|&n| m.nodes[n].inputs.iter().any(|i| weight(&m, i).is_some()))
        .collect();
    let n = readers[readers.len() / 2];
    let t = m.nodes[n].inputs.iter().find_map(|i| weight(&m, i)).unwrap();
    let mut tensor = onnx_core::ir::tensor_data::raw_to_typed(&m.tensors[t]).unwrap_or_else(|| m.tensors[t].clone());
    for v in &mut tensor.float_data {
        *v += 0.5;
    }
    m.tensors[t] = tensor;
    std::fs::write(out, onnx_core::binary::encode_model(&m)).unwrap();
    onnx_core::diff::node_label(&m, n)
}

#[test]
fn the_built_in_check_finds_the_node_another_runtime_computes_otherwise() {
    let temp = tempfile::tempdir().unwrap();
    for name in ["keras2onnx_mtcnn_onet", "p2o_ppocrv5_det"] {
        let model = repo(&format!("tests/corpus/real/{name}.onnx"));
        let other = temp.path().join(format!("{name}_other.onnx"));
        let node = moved_in_the_middle(&model, &other);
        let data = repo(&format!("tests/fixtures/run/{name}"));
        // The other runtime's values of every node, on the same inputs.
        let values = temp.path().join(format!("{name}_values"));
        let out = onnx(&[
            "run",
            other.to_str().unwrap(),
            "--test-data",
            data.to_str().unwrap(),
            "--all-values",
            "--output-dir",
            values.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let reduced = temp.path().join(format!("{name}_reduced.onnx"));
        let out = onnx(&[
            "reduce",
            model.to_str().unwrap(),
            reduced.to_str().unwrap(),
            "--against",
            values.to_str().unwrap(),
            "--test-data",
            data.to_str().unwrap(),
            "--json",
        ]);
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(out.status.success(), "{name}: {json} {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(json["nodes_after"], 1, "{name}: {json}");
        assert_eq!(json["first_node"], Value::String(node), "{name}: {json}");
        let nodes = json["nodes_before"].as_u64().unwrap();
        let bound = 2 * (64 - nodes.leading_zeros()) as u64 + 3;
        assert!(json["checks"].as_u64().unwrap() <= bound, "{name}: {json} (bound {bound})");
    }
    // Neither --check nor --against: a usage error.
    let model = repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let out = onnx(&["reduce", model.to_str().unwrap(), temp.path().join("x.onnx").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}
