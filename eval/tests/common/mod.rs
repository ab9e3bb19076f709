//! What the golden-case tests share: a case is a directory holding `model.onnx`,
//! `input_K.pb` and the expected `output_K.pb`, matched to the graph's inputs and outputs
//! by position.

use std::path::{Path, PathBuf};

use onnx_core::binary::read_model;
use onnx_eval::compare::value_difference;
use onnx_eval::stored::{numbered, read_value};
use onnx_eval::{Plan, RunOptions};

/// The case directories under `root`, sorted.
pub fn case_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Runs a case and compares every output within `rtol` and `atol`.
pub fn run_case(dir: &Path, rtol: f64, atol: f64) -> Result<(), String> {
    let model = read_model(&dir.join("model.onnx")).map_err(|e| e.to_string())?;
    let plan = Plan::new(&model).map_err(|e| e.to_string().replace('\n', "; "))?;
    let graph = &model.graphs[plan.main];
    let mut inputs = Vec::new();
    for (k, path) in numbered(dir, "input_").map_err(|e| e.to_string())?.into_iter().enumerate() {
        let declared = graph.inputs.get(k).and_then(|v| v.ty.as_ref());
        let (_, value) = read_value(&path, declared)?;
        inputs.push((plan.inputs()[k].0.clone(), value));
    }
    let result = plan.run(inputs, &RunOptions::default()).map_err(|e| e.to_string())?;
    for (k, path) in numbered(dir, "output_").map_err(|e| e.to_string())?.into_iter().enumerate() {
        let (name, got) = result.outputs.get(k).ok_or("fewer outputs than expected")?;
        let (_, want) = read_value(&path, graph.outputs.get(k).and_then(|v| v.ty.as_ref()))?;
        if let Some(e) = value_difference(got, &want, rtol, atol) {
            return Err(format!("output '{name}': {e}"));
        }
    }
    Ok(())
}
