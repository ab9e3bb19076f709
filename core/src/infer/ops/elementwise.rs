//! Operators whose output has the shape of an input (unary maps), or of the broadcast of
//! their inputs (binary and variadic maps, comparisons, Where).

use super::{Ctx, Outputs, Rule};
use crate::infer::broadcast::broadcast;
use crate::infer::types::Known;
use crate::infer::types::tensor_of;
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
        Some(Family::Compare) => {
            Some(|ctx| Some(Outputs::one(tensor_of(Some(DataType::Bool.code()), broadcast_inputs(ctx)))))
        }
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
    Some(out)
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
    let value = if matches!(op, "Add" | "Sub" | "Mul" | "Div") { arithmetic(op, ctx) } else { None };
    Some(Outputs::one(tensor_of(elem, broadcast_inputs(ctx))).with_value(value))
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
