//! Operators whose output has the shape of an input (unary maps), or of the broadcast of
//! their inputs (binary and variadic maps, comparisons, Where).

use super::{Ctx, Outputs, Rule};
use crate::infer::broadcast::broadcast;
use crate::infer::types::tensor_of;
use crate::infer::types::{Known, negated_symbol};
use crate::ir::{DataType, DimValue};

/// The shape rule an operator of this module follows.
#[derive(Clone, Copy, PartialEq)]
enum Family {
    /// Same element type and shape as input 0.
    Unary,
    /// Broadcast of all inputs; element type of input 0.
    Broadcast,
    /// Broadcast of all inputs; bool result.
    Compare,
}

/// A `match` rather than lists searched one name at a time: every node of a model passes
/// through here on its way to its rule, and the compiler turns a `match` on strings into
/// a switch on length and a few byte comparisons.
fn family(op: &str) -> Option<Family> {
    match op {
        "Abs"
        | "Acos"
        | "Acosh"
        | "Asin"
        | "Asinh"
        | "Atan"
        | "Atanh"
        | "Ceil"
        | "Cos"
        | "Cosh"
        | "Erf"
        | "Exp"
        | "Floor"
        | "Log"
        | "Neg"
        | "Reciprocal"
        | "Relu"
        | "Round"
        | "Sigmoid"
        | "Sign"
        | "Sin"
        | "Sinh"
        | "Softplus"
        | "Softsign"
        | "Sqrt"
        | "Tan"
        | "Tanh"
        | "Elu"
        | "Selu"
        | "LeakyRelu"
        | "HardSigmoid"
        | "HardSwish"
        | "ThresholdedRelu"
        | "Celu"
        | "Gelu"
        | "Mish"
        | "Shrink"
        | "Swish"
        | "BitwiseNot"
        | "Clip"
        | "Softmax"
        | "LogSoftmax"
        | "Hardmax"
        | "LRN"
        | "InstanceNormalization"
        | "LpNormalization"
        | "MeanVarianceNormalization"
        | "Trilu"
        | "CumSum"
        | "Not"
        | "Identity"
        | "Dropout"
        | "ReverseSequence"
        | "CumProd"
        | "Scatter"
        | "ScatterElements"
        | "ScatterND"
        // The slope broadcasts to X one way: the output is X's type, as onnx infers it.
        | "PRelu" => Some(Family::Unary),
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "BitShift" | "BitwiseAnd" | "BitwiseOr" | "BitwiseXor"
        | "Max" | "Min" | "Sum" | "Mean" => Some(Family::Broadcast),
        "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" | "Xor" => Some(Family::Compare),
        _ => None,
    }
}

pub fn rule(op: &str) -> Option<Rule> {
    match family(op) {
        Some(Family::Unary) => Some(unary),
        Some(Family::Broadcast) => Some(broadcasting),
        Some(Family::Compare) => Some(|ctx| {
            let value = if ctx.op() == "Equal" { equal(ctx) } else { None };
            Some(Outputs::one(tensor_of(Some(DataType::Bool.code()), broadcast_inputs(ctx))).with_value(value))
        }),
        None if matches!(op, "IsNaN" | "IsInf") => {
            Some(|ctx| Some(Outputs::one(tensor_of(Some(DataType::Bool.code()), ctx.dims(0).map(<[_]>::to_vec)))))
        }
        None if op == "Where" => Some(broadcasting),
        None => None,
    }
}

/// Same type as input 0 (Dropout's mask aside).
fn unary(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let op = ctx.op();
    let ty = ctx.input_type(0)?.clone();
    let mut out = Outputs::one(ty);
    if op == "Dropout" && ctx.node.outputs.len() > 1 {
        out.types.push(Some(tensor_of(Some(DataType::Bool.code()), ctx.dims(0).map(<[_]>::to_vec))));
    }
    if op == "Identity" {
        out = out.with_value(ctx.value(0).cloned());
    }
    if op == "Neg" && !ctx.as_onnx() {
        out = out.with_value(ctx.value(0).map(negate));
    }
    Some(out)
}

/// Data propagation through Neg (ours only: onnx propagates no Neg): numbers negated, a
/// symbol `s` as `-s` and back (see [`negated_symbol`]); a sum is not negated.
fn negate(known: &Known) -> Known {
    let elements = known
        .elements
        .iter()
        .map(|e| match e.as_ref()? {
            DimValue::Value(v) => v.checked_neg().map(DimValue::Value),
            p @ DimValue::Param(name) => match negated_symbol(p) {
                Some(symbol) => Some(DimValue::Param(symbol.into())),
                None => name
                    .as_str()
                    .filter(|n| !n.is_empty() && !n.contains(' '))
                    .map(|n| DimValue::Param(format!("-{n}").into())),
            },
        })
        .collect();
    Known { elements, scalar: known.scalar }
}

/// The broadcast of all inputs' shapes.
fn broadcast_inputs(ctx: &Ctx<'_, '_>) -> Option<Vec<crate::ir::Dimension>> {
    let shapes: Option<smallvec::SmallVec<[_; 4]>> = (0..ctx.node.inputs.len()).map(|i| ctx.dims(i)).collect();
    shapes.and_then(|s| broadcast(&s))
}

/// The broadcast of all inputs, of input 0's element type (Where: of the chosen values').
fn broadcasting(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let op = ctx.op();
    let elem = if op == "Where" { ctx.elem(1) } else { ctx.elem(0) };
    let value = match op {
        "Add" | "Sub" | "Mul" | "Div" => arithmetic(op, ctx),
        "Where" => select(ctx),
        _ => None,
    };
    Some(Outputs::one(tensor_of(elem, broadcast_inputs(ctx))).with_value(value))
}

/// Two known values broadcast element by element (one of length 1 repeated): `None` when
/// their lengths do not broadcast.
fn pairs<'k>(a: &'k Known, b: &'k Known) -> Option<Vec<(&'k Option<DimValue>, &'k Option<DimValue>)>> {
    let (x, y) = (&a.elements, &b.elements);
    let n = x.len().max(y.len());
    if !(x.len() == n || x.len() == 1) || !(y.len() == n || y.len() == 1) {
        return None;
    }
    let at = |v: &'k [Option<DimValue>], i: usize| if v.len() == 1 { &v[0] } else { &v[i] };
    Some((0..n).map(|i| (at(x, i), at(y, i))).collect())
}

/// Data propagation through Equal where the answer is certain: numbers compared, a symbolic
/// dimension (never negative) against a negative number (false: the `shape == -1` test
/// exporters write before an Expand), a symbol against itself (true). 1 for true.
fn equal(ctx: &Ctx<'_, '_>) -> Option<Known> {
    let (a, b) = (ctx.value(0)?, ctx.value(1)?);
    let elements = pairs(a, b)?
        .into_iter()
        .map(|pair| {
            let same = match pair {
                (Some(DimValue::Value(p)), Some(DimValue::Value(q))) => Some(p == q),
                (Some(p @ DimValue::Param(_)), Some(DimValue::Value(v)))
                | (Some(DimValue::Value(v)), Some(p @ DimValue::Param(_)))
                    if *v < 0 && negated_symbol(p).is_none() =>
                {
                    Some(false)
                }
                (Some(DimValue::Param(p)), Some(DimValue::Param(q))) if p == q => Some(true),
                _ => None,
            };
            same.map(|s| DimValue::Value(i64::from(s)))
        })
        .collect();
    Some(Known { elements, scalar: a.scalar && b.scalar })
}

/// Data propagation through Where over known values: each element chosen by its known
/// condition (a symbolic dimension passes as it is).
fn select(ctx: &Ctx<'_, '_>) -> Option<Known> {
    let (c, x, y) = (ctx.value(0)?, ctx.value(1)?, ctx.value(2)?);
    let chosen = pairs(x, y)?;
    let n = chosen.len().max(c.elements.len());
    if !(c.elements.len() == n || c.elements.len() == 1) || !(chosen.len() == n || chosen.len() == 1) {
        return None;
    }
    let elements = (0..n)
        .map(|i| {
            let (x, y) = chosen[if chosen.len() == 1 { 0 } else { i }];
            match c.elements[if c.elements.len() == 1 { 0 } else { i }] {
                Some(DimValue::Value(0)) => y.clone(),
                Some(DimValue::Value(_)) => x.clone(),
                _ => None,
            }
        })
        .collect();
    Some(Known { elements, scalar: c.scalar && x.scalar && y.scalar })
}

/// Data propagation through integer arithmetic on known values (shape computations).
fn arithmetic(op: &str, ctx: &Ctx<'_, '_>) -> Option<Known> {
    let (a, b) = (ctx.value(0)?, ctx.value(1)?);
    let (x, y) = (a.ints()?, b.ints()?);
    let n = x.len().max(y.len());
    if !(x.len() == n || x.len() == 1) || !(y.len() == n || y.len() == 1) {
        return None;
    }
    let at = |v: &[i64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    let elements = (0..n)
        .map(|i| {
            let (p, q) = (at(&x, i), at(&y, i));
            let r = match op {
                "Add" => p.checked_add(q),
                "Sub" => p.checked_sub(q),
                "Div" => p.checked_div(q),
                _ => p.checked_mul(q),
            };
            r.map(DimValue::Value)
        })
        .collect();
    Some(Known { elements, scalar: a.scalar && b.scalar })
}
