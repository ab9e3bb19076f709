//! Input values made from a model's declarations, for runs that have no data: zeros or
//! seeded random numbers of each input's declared type, symbolic dimensions given numbers.
//! Used by the browser's run dialog and by the evaluator's fuzz target.

use std::collections::BTreeMap;

use onnx_core::ir::{DataType, DimValue, Type, TypeValue};

use crate::cast::cast_to;
use crate::value::{Data, Tensor, Value};

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

/// A tensor of declared type `ty`: zeros (`seed` none) or seeded random numbers (floats
/// in [-1, 1), integers in [0, 10), booleans), with symbolic dimensions taking their
/// number from `dims` (1 when not given) and unknown ones 1; at most `limit` elements.
pub fn made(ty: &Type, dims: &BTreeMap<String, usize>, seed: Option<u64>, limit: usize) -> Result<Value, String> {
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
    Ok(Value::Tensor(cast_to(&Tensor::new(shape, Data::F64(numbers.into())), dt)?))
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
