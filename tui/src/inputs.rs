//! Values for a run: read from a test-data directory or a file, or made from an input's
//! declared type by the evaluator (`onnx_eval::inputs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use onnx_core::ir::Type;
use onnx_eval::Value;

pub use onnx_eval::inputs::symbolic_dims;

/// Where an input's value comes from when no test data gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Zeros,
    Random {
        seed: u64,
    },
    /// A TensorProto `.pb` or a NumPy `.npy` file.
    File(PathBuf),
}

/// The value of an input of declared type `ty` from `source`: read from its file, or made
/// (see [`onnx_eval::inputs::made`]).
pub fn make(ty: &Type, dims: &BTreeMap<String, usize>, source: &Source, limit: usize) -> Result<Value, String> {
    match source {
        Source::File(path) => onnx_eval::stored::read_value(path, Some(ty)).map(|(_, v)| v),
        Source::Zeros => onnx_eval::inputs::made(ty, dims, None, limit),
        Source::Random { seed } => onnx_eval::inputs::made(ty, dims, Some(*seed), limit),
    }
}

/// Values by name.
pub type Named = Vec<(String, Value)>;

/// The inputs stored in a test-data directory (`input_*.pb`), and its expected outputs
/// (`output_*.pb`, by name when the files hold names, else by position).
pub fn test_data(plan: &onnx_eval::Plan<'_>, dir: &Path) -> Result<(Named, Named), String> {
    let label = dir.display();
    let listed = |prefix| onnx_eval::stored::numbered(dir, prefix).map_err(|e| format!("{label}: cannot list: {e}"));
    let inputs = listed("input_")?.into_iter().map(|p| (None, p)).collect();
    let inputs = onnx_eval::stored::read_inputs(plan, inputs)?;
    let graph = &plan.model.graphs[plan.main];
    let mut expected = Vec::new();
    for (k, path) in listed("output_")?.into_iter().enumerate() {
        let declared = graph.outputs.get(k).and_then(|v| v.ty.as_ref());
        let (inside, value) = onnx_eval::stored::read_value(&path, declared)?;
        let by_position = graph.outputs.get(k).and_then(|v| v.name.as_ref()).map(ToString::to_string);
        let known = graph.outputs.iter().any(|v| v.name.as_ref().is_some_and(|n| n.to_string() == inside));
        expected.push((if known { inside } else { by_position.unwrap_or(inside) }, value));
    }
    Ok((inputs, expected))
}
