//! Sequences and optionals: building, reading and changing sequences of tensors, splitting a
//! tensor into one and concatenating one back, and wrapping or unwrapping optionals.

use onnx_core::ir::DataType;

use super::{Ctx, Kernel, axis, count, input, one, optional};
use crate::error::{KernelError, bad_attribute, bad_input, limit};
use crate::kernels::common::dtype_attr;
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "SequenceEmpty" => |ctx, _| {
            let dt = dtype_attr(ctx, "dtype", DataType::Float)?;
            Data::empty(dt, 0)?;
            Ok(vec![Value::Sequence(Vec::new())])
        },
        "SequenceConstruct" => |_, i| {
            let items = (0..i.len()).map(|k| input(i, k).cloned()).collect::<Result<_, _>>()?;
            Ok(vec![Value::Sequence(items)])
        },
        "SequenceInsert" => |_, i| {
            let mut items = sequence(i, 0)?.to_vec();
            let t = input(i, 1)?.clone();
            let at = position(optional(i, 2)?, items.len(), items.len(), true)?;
            items.insert(at, t);
            Ok(vec![Value::Sequence(items)])
        },
        "SequenceAt" => |_, i| {
            let items = sequence(i, 0)?;
            let at = position(Some(input(i, 1)?), items.len(), 0, false)?;
            one(items.get(at).cloned().ok_or(bad_input!("position out of range"))?)
        },
        "SequenceErase" => |_, i| {
            let mut items = sequence(i, 0)?.to_vec();
            if items.is_empty() {
                return Err(bad_input!("erasing from an empty sequence"));
            }
            let at = position(optional(i, 1)?, items.len(), items.len() - 1, false)?;
            items.remove(at);
            Ok(vec![Value::Sequence(items)])
        },
        "SequenceLength" => |_, i| one(Tensor::scalar(Data::I64(vec![sequence(i, 0)?.len() as i64].into()))),
        "SplitToSequence" => split_to_sequence,
        "ConcatFromSequence" => concat_from_sequence,
        "Optional" => |ctx, i| match i.first().copied().flatten() {
            Some(v) => Ok(vec![Value::Optional(Some(Box::new(v.clone())))]),
            None if ctx.node.attribute("type").is_some() => Ok(vec![Value::Optional(None)]),
            None => Err(bad_attribute!("Optional needs an input or a type")),
        },
        "OptionalHasElement" => |_, i| {
            let has = match i.first().copied().flatten() {
                Some(Value::Optional(v)) => v.is_some(),
                Some(_) => true,
                None => false,
            };
            one(Tensor::scalar(Data::Bool(vec![has])))
        },
        "OptionalGetElement" => |_, i| match i.first().copied().flatten() {
            Some(Value::Optional(Some(v))) => Ok(vec![(**v).clone()]),
            Some(Value::Optional(None)) => Err(bad_input!("the optional is empty")),
            Some(v) => Ok(vec![v.clone()]),
            None => Err(bad_input!("input 0 is missing")),
        },
        _ => return None,
    };
    Some(k)
}

/// Input `i` as a sequence.
fn sequence<'v>(inputs: &[Option<&'v Value>], i: usize) -> Result<&'v [Tensor], KernelError> {
    match inputs.get(i).copied().flatten() {
        Some(Value::Sequence(items)) => Ok(items),
        Some(other) => Err(bad_input!("input {i} is {}, not a sequence", other.describe())),
        None => Err(bad_input!("input {i} is missing")),
    }
}

/// A position in a sequence of `len` elements (negative counts from the end), `default`
/// when absent; `len` itself is a position only where inserting (`at_end`).
fn position(t: Option<&Tensor>, len: usize, default: usize, at_end: bool) -> Result<usize, KernelError> {
    let Some(t) = t else { return Ok(default) };
    let p = *t.to_i64s()?.first().ok_or(bad_input!("the position is empty"))?;
    let at = if p < 0 { p + len as i64 } else { p };
    let limit = if at_end { len } else { len.saturating_sub(1) };
    usize::try_from(at)
        .ok()
        .filter(|&a| a <= limit && (at_end || len > 0))
        .ok_or_else(|| bad_input!("position {p} is out of range for {len} elements"))
}

fn split_to_sequence(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let a = axis(ctx.int("axis").unwrap_or(0), t.rank())?;
    let keep = ctx.int("keepdims").unwrap_or(1) != 0;
    let total = t.shape[a];
    let (sizes, squeeze): (Vec<usize>, bool) = match optional(inputs, 1)? {
        Some(s) if s.rank() == 0 => {
            let each =
                usize::try_from(s.to_i64s()?[0]).ok().filter(|&e| e > 0).ok_or(bad_input!("split must be positive"))?;
            // One tensor per piece: an empty input may declare a long axis.
            let pieces = total.div_ceil(each);
            ctx.check_grown(pieces, t.len())
                .map_err(|e| e.map_message(|m| format!("{m} (tensors in the sequence)")))?;
            ((0..pieces).map(|k| each.min(total - k * each)).collect(), false)
        }
        Some(s) => (s.to_i64s()?.into_iter().map(|v| v.max(0) as usize).collect(), false),
        None => {
            // One tensor per position: an empty input may declare a long axis.
            ctx.check_grown(total, t.len()).map_err(|e| e.map_message(|m| format!("{m} (tensors in the sequence)")))?;
            (vec![1; total], !keep)
        }
    };
    if sizes.iter().try_fold(0usize, |sum, &s| sum.checked_add(s)) != Some(total) {
        return Err(bad_input!("split sizes {sizes:?} do not add up to {total}"));
    }
    let (outer, inner) = (count(&t.shape[..a])?, count(&t.shape[a + 1..])?);
    // An empty input may declare any number of rows: nothing to copy.
    let outer = if t.is_empty() { 0 } else { outer };
    let mut start = 0;
    let mut items = Vec::with_capacity(sizes.len());
    for size in sizes {
        let picked = (0..outer).flat_map(|o| ((o * total + start) * inner)..((o * total + start + size) * inner));
        let mut shape = t.shape.clone();
        if squeeze {
            shape.remove(a);
        } else {
            shape[a] = size;
        }
        items.push(Tensor::new(shape, t.data.pick(picked)));
        start += size;
    }
    Ok(vec![Value::Sequence(items)])
}

fn concat_from_sequence(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let items = sequence(inputs, 0)?;
    let first = items.first().ok_or(bad_input!("concatenating an empty sequence"))?;
    let new_axis = ctx.int("new_axis").unwrap_or(0) != 0;
    let rank = first.rank() + usize::from(new_axis);
    let a = axis(ctx.int("axis").ok_or(bad_attribute!("axis is required"))?, rank)?;
    let parts: Vec<Tensor> = if new_axis {
        items
            .iter()
            .map(|t| {
                let mut s = t.shape.clone();
                s.insert(a, 1);
                t.reshaped(s)
            })
            .collect()
    } else {
        items.to_vec()
    };
    let mut shape = parts[0].shape.clone();
    shape[a] = 0;
    for p in &parts {
        if p.rank() != shape.len() || p.shape.iter().enumerate().any(|(i, &d)| i != a && d != shape[i]) {
            return Err(bad_input!("shapes {:?} and {:?} do not concatenate on axis {a}", parts[0].shape, p.shape));
        }
        shape[a] = shape[a].checked_add(p.shape[a]).ok_or(limit!("the concatenated axis overflows"))?;
    }
    let total = count(&shape)?;
    // An empty result may declare any number of rows: nothing to copy.
    let outer = if total == 0 { 0 } else { count(&shape[..a])? };
    let mut data = Data::empty(first.data_type(), total)?;
    for o in 0..outer {
        for p in &parts {
            let block = count(&p.shape[a..])?;
            data.extend_from_range(&p.data, o * block..(o + 1) * block)?;
        }
    }
    one(Tensor::new(shape, data))
}
