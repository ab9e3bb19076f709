//! Sequence and optional values: their element types follow the tensors put in; shapes
//! that differ between elements become unknown, as onnx's union of shapes does.

use super::{Ctx, Outputs, Rule};
use crate::infer::lattice::union;
use crate::infer::types::{dim, known_dim, sequence_of, tensor, tensor_parts, unknown_dim};
use crate::infer::types::{normalize_axis, tensor_of};
use crate::ir::{AttributeValue, DataType, Dimension, Type, TypeValue};

fn optional_of(element: Type) -> Type {
    Type { value: Some(TypeValue::Optional(Some(Box::new(element)))), denotation: None }
}

/// The element type of a sequence type.
pub(crate) fn element(t: &Type) -> Option<&Type> {
    match &t.value {
        Some(TypeValue::Sequence(Some(e))) => Some(e),
        _ => None,
    }
}

/// Elements together: a common element type, and the shape where all agree.
fn union_all<'t>(mut types: impl Iterator<Item = Option<&'t Type>>) -> Option<Type> {
    let first = types.next()??.clone();
    types.try_fold(first, |acc, t| union(&acc, t?))
}

/// A rule's answer of one output.
fn one(t: Type) -> Option<Outputs> {
    Some(Outputs::one(t))
}

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        "SequenceEmpty" => |ctx| {
            let elem = ctx.int("dtype").and_then(|t| i32::try_from(t).ok()).unwrap_or(DataType::Float as i32);
            one(sequence_of(tensor(elem, None)))
        },
        "SequenceConstruct" => |ctx| {
            let types = (0..ctx.node.inputs.len()).map(|i| ctx.input_type(i));
            one(sequence_of(union_all(types)?))
        },
        "SequenceInsert" => |ctx| {
            let existing = element(ctx.input_type(0)?)?;
            one(sequence_of(union_all([Some(existing), ctx.input_type(1)].into_iter())?))
        },
        "SequenceAt" => |ctx| one(element(ctx.input_type(0)?)?.clone()),
        "SequenceErase" => |ctx| one(ctx.input_type(0)?.clone()),
        "SequenceLength" => |_| one(tensor_of(Some(DataType::Int64 as i32), Some(Vec::new()))),
        "SplitToSequence" => split_to_sequence,
        "ConcatFromSequence" => concat_from_sequence,
        "Optional" => |ctx| match ctx.node.attribute("type").and_then(|a| a.value()) {
            Some(AttributeValue::TypeProto(t)) if !ctx.has_input(0) => one(optional_of(t.clone())),
            _ => one(optional_of(ctx.input_type(0)?.clone())),
        },
        "OptionalHasElement" => |_| one(tensor_of(Some(DataType::Bool as i32), Some(Vec::new()))),
        "OptionalGetElement" => |ctx| {
            let input = ctx.input_type(0)?;
            match &input.value {
                Some(TypeValue::Optional(inner)) => one(inner.as_deref()?.clone()),
                _ => one(input.clone()),
            }
        },
        _ => return None,
    };
    Some(rule)
}

/// Pieces of the input along `axis`: all of one size when `split` is a scalar that divides
/// the axis or a list of equal sizes, else of unknown size; without `split`, pieces of
/// one, the axis kept or dropped by `keepdims`.
fn split_to_sequence(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(0);
    let Some(d) = ctx.dims(0) else {
        return Some(Outputs::one(sequence_of(tensor_of(elem, None))));
    };
    let axis = normalize_axis(ctx.int("axis").unwrap_or(0), d.len())?;
    let mut out = d.to_vec();
    if !ctx.has_input(1) {
        if ctx.int("keepdims").unwrap_or(1) == 0 {
            out.remove(axis);
        } else {
            out[axis] = dim(1);
        }
        return Some(Outputs::one(sequence_of(tensor_of(elem, Some(out)))));
    }
    let sizes = ctx.value(1).and_then(|k| Some((k.ints()?, k.scalar)));
    let length = known_dim(&d[axis]);
    let piece = match (sizes, length) {
        (Some((s, true)), Some(n)) if s.len() == 1 && s[0] > 0 && n % s[0] == 0 => Some(s[0]),
        (Some((s, false)), Some(_)) if !s.is_empty() && s.iter().all(|&x| x == s[0]) => Some(s[0]),
        _ => None,
    };
    out[axis] = piece.map_or_else(unknown_dim, dim);
    Some(Outputs::one(sequence_of(tensor_of(elem, Some(out)))))
}

/// The elements joined along `axis` (of unknown total size), or stacked on a new axis.
fn concat_from_sequence(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let element = element(ctx.input_type(0)?)?;
    let (elem, dims) = tensor_parts(element)?;
    let Some(d) = dims else {
        return Some(Outputs::one(tensor_of(elem, None)));
    };
    let stack = ctx.int("new_axis").unwrap_or(0) == 1;
    let rank = d.len() + usize::from(stack);
    let axis = normalize_axis(ctx.int("axis")?, rank)?;
    let out: Vec<Dimension> = (0..rank)
        .map(|i| match i.cmp(&axis) {
            std::cmp::Ordering::Equal => unknown_dim(),
            std::cmp::Ordering::Greater if stack => d[i - 1].clone(),
            _ => d[i].clone(),
        })
        .collect();
    Some(Outputs::one(tensor_of(elem, Some(out))))
}
