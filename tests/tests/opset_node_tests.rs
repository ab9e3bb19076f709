//! `onnx opset` on onnx's 1,884 node tests: each test's model is converted to every opset
//! from 7 to the newest, and
//! * where onnx's version converter converts it (and onnx's checker accepts the result:
//!   `tests/fixtures/opset/anchors.json`, from `gen_opset_anchors.py`), ours converts it too;
//! * every model ours converts computes what the test expects, run by our evaluator, when
//!   the original does: a conversion that changes what a node means fails here, whether
//!   onnx converts that model or not.
//!
//! The conversions onnx makes that we refuse, and those that change a result, are listed
//! with their reasons below; the test fails when one of them changes either way.

use std::collections::BTreeMap;
use std::path::Path;

use onnx_core::binary::read_model;
use onnx_core::ir::Model;
use onnx_eval::compare::{ATOL, RTOL, value_difference};
use onnx_eval::stored::{numbered, read_value};
use onnx_eval::{Plan, RunOptions};
use onnx_tests::node_tests_dir;

/// Runs `model` on the test's first data set and compares with its expected outputs.
fn passes(model: &Model, dir: &Path) -> Result<(), String> {
    let plan = Plan::new(model).map_err(|e| e.to_string().lines().next().unwrap_or("").to_owned())?;
    let data = dir.join("test_data_set_0");
    let graph = &model.graphs[plan.main];
    let expected = plan.inputs();
    let mut inputs = Vec::new();
    for (i, path) in numbered(&data, "input_").unwrap_or_default().into_iter().enumerate() {
        let wanted = expected.get(i).map(|(n, _)| n.as_str());
        let declared = graph.inputs.iter().find(|v| v.name.as_ref().and_then(|n| n.as_str()) == wanted);
        let (_, value) = read_value(&path, declared.and_then(|v| v.ty.as_ref()))?;
        let name = expected.get(i).map(|(n, _)| n.clone()).ok_or("more inputs than the model has")?;
        inputs.push((name, value));
    }
    let result = plan.run(inputs, &RunOptions::default()).map_err(|e| e.to_string())?;
    for (i, path) in numbered(&data, "output_").unwrap_or_default().into_iter().enumerate() {
        let (name, got) = result.outputs.get(i).ok_or("fewer outputs than expected")?;
        let (_, want) = read_value(&path, graph.outputs.get(i).and_then(|v| v.ty.as_ref()))?;
        if let Some(e) = value_difference(got, &want, RTOL, ATOL) {
            return Err(format!("output '{name}': {e}"));
        }
    }
    Ok(())
}

/// Conversions onnx makes that we refuse, because onnx's result means something else: by
/// test-name prefix and target, with why.
const ONNX_CONVERTS_WRONGLY: &[(&str, i64, &str)] = &[
    (
        "test_resize_",
        18,
        "half_pixel_symmetric is kept, a mode Resize-18 does not have (onnx's checker reads no string values)",
    ),
    ("test_wrap_pad", 18, "mode 'wrap' is kept, which Pad-18 does not have"),
];

fn onnx_converts_wrongly(name: &str, target: i64) -> bool {
    ONNX_CONVERTS_WRONGLY.iter().any(|(prefix, t, _)| name.starts_with(prefix) && *t == target)
}

/// Tests whose expected values are random draws (see node_tests.rs): not compared.
fn random(name: &str) -> bool {
    name.starts_with("test_bernoulli")
}

#[test]
fn node_tests_convert_where_onnx_does_and_compute_the_same() {
    let anchors: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(node_tests_dir().join("../../fixtures/opset/anchors.json")).expect("anchors.json"),
    )
    .expect("anchors.json is JSON");
    let onnx_converts = |name: &str| -> Vec<i64> {
        anchors["models"][format!("node/{name}")]
            .as_array()
            .map(|a| a.iter().filter_map(serde_json::Value::as_i64).collect())
            .unwrap_or_default()
    };
    let newest = onnx_core::opset::newest_opset();
    let mut dirs: Vec<_> =
        std::fs::read_dir(node_tests_dir()).expect("node tests").flatten().map(|e| e.path()).collect();
    dirs.sort();
    let (mut made, mut compared, mut beyond_onnx, mut known) = (0, 0, 0, 0);
    let mut refused_where_onnx_converts: BTreeMap<String, String> = BTreeMap::new();
    let mut wrong: BTreeMap<String, String> = BTreeMap::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let Ok(model) = read_model(&dir.join("model.onnx")) else { continue };
        let Some(own) = model.opset_version("") else { continue };
        let original_passes = !random(&name) && passes(&model, dir).is_ok();
        let theirs = onnx_converts(&name);
        for target in 7..=newest {
            if target == own {
                continue;
            }
            let mut converted = model.clone();
            match onnx_core::opset::convert(&mut converted, target) {
                Ok(_) => {
                    made += 1;
                    if !theirs.contains(&target) {
                        beyond_onnx += 1;
                    }
                    if original_passes {
                        compared += 1;
                        if let Err(e) = passes(&converted, dir) {
                            wrong.insert(format!("{name} → {target}"), e.chars().take(200).collect());
                        }
                        // Down and back up: the up steps on what the down steps wrote.
                        if target < own {
                            let mut back = converted.clone();
                            match onnx_core::opset::convert(&mut back, own) {
                                Ok(_) => {
                                    compared += 1;
                                    if let Err(e) = passes(&back, dir) {
                                        wrong.insert(
                                            format!("{name} → {target} → {own}"),
                                            e.chars().take(200).collect(),
                                        );
                                    }
                                }
                                Err(e) => {
                                    let reason = e.to_string().lines().nth(1).unwrap_or("").trim().to_owned();
                                    wrong.insert(
                                        format!("{name} → {target} → {own}"),
                                        format!("not converted back: {reason}"),
                                    );
                                }
                            }
                        }
                    }
                }
                Err(_) if theirs.contains(&target) && onnx_converts_wrongly(&name, target) => known += 1,
                Err(e) if theirs.contains(&target) => {
                    let reason = e.to_string().lines().nth(1).unwrap_or("").trim().to_owned();
                    refused_where_onnx_converts.insert(format!("{name} → {target}"), reason);
                }
                Err(_) => {}
            }
        }
    }
    eprintln!(
        "{made} conversions made ({beyond_onnx} that onnx refuses), {compared} run and compared; {known} of onnx's refused as wrong"
    );
    let listing = |m: &BTreeMap<String, String>| m.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>();
    let refused = listing(&refused_where_onnx_converts);
    let wrong = listing(&wrong);
    assert!(made > 25_000, "only {made} conversions made");
    // Each known difference still happens (3 refusals when this was written).
    assert_eq!(known, 3, "the conversions onnx makes wrongly changed: update ONNX_CONVERTS_WRONGLY");
    assert!(
        refused.is_empty() && wrong.is_empty(),
        "onnx converts, ours refuses ({}):\n{}\n\nconverted models that compute something else ({}):\n{}",
        refused.len(),
        refused.join("\n"),
        wrong.len(),
        wrong.join("\n")
    );
}
