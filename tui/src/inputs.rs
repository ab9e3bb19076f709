//! Values for a run: read from a test-data directory, or made from an input's declared
//! type (zeros, or seeded random numbers) with its symbolic dimensions given numbers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use onnx_core::ir::{DataType, DimValue, Type, TypeValue};
use onnx_eval::kernels::elementwise::cast_to;
use onnx_eval::{Data, Tensor, Value};

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

/// The symbolic dimension names of the given types, in first-seen order.
pub fn symbolic_dims<'t>(types: impl IntoIterator<Item = &'t Type>) -> Vec<String> {
    let mut names = Vec::new();
    for ty in types {
        if let Some(TypeValue::Tensor(t)) = &ty.value {
            for d in t.shape.iter().flat_map(|s| &s.dims) {
                if let Some(DimValue::Param(p)) = &d.value {
                    let p = p.to_string();
                    if !names.contains(&p) {
                        names.push(p);
                    }
                }
            }
        }
    }
    names
}

/// The value of an input of declared type `ty` from `source`: read from its file, or made
/// with symbolic dimensions taking their number from `dims` (1 when not given), unknown
/// ones 1.
pub fn make(ty: &Type, dims: &BTreeMap<String, usize>, source: &Source, limit: usize) -> Result<Value, String> {
    let seed = match source {
        Source::File(path) => return onnx_eval::stored::read_value(path, Some(ty)).map(|(_, v)| v),
        Source::Zeros => None,
        Source::Random { seed } => Some(*seed),
    };
    let Some(TypeValue::Tensor(t)) = &ty.value else {
        return Err(format!("only tensor inputs can be made up; this one is {ty}"));
    };
    let dt = t.elem_type.and_then(DataType::from_code).ok_or("the input declares no element type")?;
    let shape: Vec<usize> = match &t.shape {
        None => vec![],
        Some(s) => s
            .dims
            .iter()
            .map(|d| match &d.value {
                Some(DimValue::Value(v)) => usize::try_from(*v).map_err(|_| format!("dimension {v} is negative")),
                Some(DimValue::Param(p)) => Ok(dims.get(&p.to_string()).copied().unwrap_or(1)),
                None => Ok(1),
            })
            .collect::<Result<_, _>>()?,
    };
    let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).filter(|&n| n <= limit);
    let count = count.ok_or_else(|| format!("{shape:?} holds more than {limit} elements"))?;
    if dt == DataType::String {
        return Ok(Value::Tensor(Tensor::new(shape, Data::Str(vec![Vec::new(); count]))));
    }
    let numbers = match seed {
        None => vec![0.0; count],
        Some(seed) => {
            let mut state = seed;
            let integer = !matches!(dt.name(), "float" | "double" | "float16" | "bfloat16");
            (0..count)
                .map(|_| {
                    let unit = (next(&mut state) >> 11) as f64 / (1u64 << 53) as f64;
                    if dt == DataType::Bool {
                        (unit < 0.5) as u8 as f64
                    } else if integer {
                        (unit * 10.0).floor()
                    } else {
                        unit * 2.0 - 1.0
                    }
                })
                .collect()
        }
    };
    Ok(Value::Tensor(cast_to(&Tensor::new(shape, Data::F64(numbers)), dt)?))
}

/// splitmix64: a seed gives the same numbers on every machine and version, which a
/// reproducible run needs more than statistical quality.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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
