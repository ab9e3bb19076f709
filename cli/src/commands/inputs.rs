//! The inputs of a run a command makes for itself (`onnx diff --run`, `onnx reduce`): given
//! as `onnx run` takes them, or seeded random values of the declared types.

use onnx_core::ir::Model;
use onnx_eval::Plan;

use crate::failure::Failure;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct InputArgs {
    /// An input value, as `onnx run` takes them (`PATH.pb`, `PATH.npy`, `NAME=PATH`;
    /// repeatable). Without inputs or --test-data: seeded random values.
    #[arg(long = "input", value_name = "PATH")]
    pub inputs: Vec<String>,
    /// The inputs from `DIR/input_*.pb`.
    #[arg(long, value_name = "DIR")]
    pub test_data: Option<std::path::PathBuf>,
    /// The seed of the random inputs (floats in [-1, 1), integers in [0, 10)).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The size of a symbolic dimension in the random inputs (`NAME=SIZE`, repeatable; 1
    /// when not given).
    #[arg(long = "dim", value_name = "NAME=SIZE")]
    pub dims: Vec<String>,
}

impl InputArgs {
    /// The values of the run's inputs: read when given, else made.
    pub fn values(&self, plan: &Plan<'_>, model: &Model) -> Result<Vec<(String, onnx_eval::value::Value)>, Failure> {
        if self.inputs.is_empty() && self.test_data.is_none() {
            made(model, &self.dims, self.seed)
        } else {
            crate::commands::run::read_inputs(plan, self.test_data.as_deref(), &self.inputs)
        }
    }
}

/// Seeded random values for every input the model needs, symbolic dimensions from `dims`.
fn made(model: &Model, dims: &[String], seed: u64) -> Result<Vec<(String, onnx_eval::value::Value)>, Failure> {
    let mut sizes = std::collections::BTreeMap::new();
    for setting in dims {
        let parsed =
            setting.split_once('=').and_then(|(name, size)| Some((name.to_owned(), size.parse::<usize>().ok()?)));
        let (name, size) = parsed.ok_or_else(|| Failure::Usage(format!("--dim {setting}: expected NAME=SIZE")))?;
        sizes.insert(name, size);
    }
    let Some(graph) = model.main_graph() else { return Ok(Vec::new()) };
    let initialized: Vec<&onnx_core::ir::Str> =
        graph.initializers.iter().filter_map(|&t| model.tensors[t].name.as_ref()).collect();
    let mut values = Vec::new();
    for (k, input) in graph.inputs.iter().enumerate() {
        let Some(name) = input.name.as_ref().filter(|n| !initialized.contains(n)) else { continue };
        let ty = input
            .ty
            .as_ref()
            .ok_or_else(|| Failure::Usage(format!("input \"{name}\" declares no type: give --input")))?;
        let limits = onnx_eval::Limits::default();
        let value = onnx_eval::inputs::made(ty, &sizes, Some(seed.wrapping_add(k as u64)), limits.max_tensor_elements)
            .map_err(|e| Failure::Usage(format!("input \"{name}\": {e}")))?;
        values.push((name.to_string(), value));
    }
    Ok(values)
}
