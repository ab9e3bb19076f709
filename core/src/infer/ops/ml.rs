//! The ai.onnx.ml operators (classical machine learning) that have shape rules in onnx.

use super::{Ctx, Outputs, Rule};
use crate::infer::types::tensor_of;
use crate::infer::types::{dim, unknown_dim};
use crate::ir::{DataType, DimValue, Dimension, Type, TypeValue};

/// `ctx.opset` is the imported version of ai.onnx.ml here.
const FLOAT: Option<i32> = Some(DataType::Float as i32);

/// The batch dimension: input 0's first.
fn batch(ctx: &Ctx<'_, '_>) -> Dimension {
    ctx.dims(0).and_then(|d| d.first()).cloned().unwrap_or_default()
}

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        "Binarizer" | "Imputer" => |ctx| Some(Outputs::one(ctx.input_type(0)?.clone())),
        "Normalizer" | "Scaler" => |ctx| Some(Outputs::one(tensor_of(FLOAT, ctx.dims_vec(0)))),
        "LabelEncoder" => |ctx| Some(Outputs::one(tensor_of(label_encoder_values(ctx), ctx.dims_vec(0)))),
        "ArrayFeatureExtractor" => |ctx| Some(Outputs::one(tensor_of(ctx.elem(0), array_feature_extractor(ctx)))),
        // [N, n_targets] of the input's type.
        "TreeEnsemble" => |ctx| {
            let targets = ctx.int("n_targets").map_or_else(unknown_dim, dim);
            Some(Outputs::one(tensor_of(ctx.elem(0), Some(vec![batch(ctx), targets]))))
        },
        "LinearClassifier" => |ctx| Some(linear_classifier(ctx)),
        "ZipMap" => |ctx| Some(Outputs::one(zip_map(ctx))),
        "TreeEnsembleRegressor" | "LinearRegressor" => |ctx| {
            let targets = ctx.int("n_targets").or_else(|| ctx.int("targets")).unwrap_or(1);
            Some(Outputs::one(tensor_of(FLOAT, Some(vec![batch(ctx), dim(targets)]))))
        },
        _ => return None,
    };
    Some(rule)
}

/// The label (`[N]`, strings or int64 as the class labels are) and the scores (`[N, E]`
/// floats, E the class count: one per intercept, two for a binary model with one intercept).
/// A 1-D input is one sample.
fn linear_classifier(ctx: &Ctx<'_, '_>) -> Outputs {
    let count = |name: &str, of: fn(&crate::ir::Attribute) -> usize| ctx.node.attribute(name).map_or(0, of);
    let strings = count("classlabels_strings", |a| a.strings.len());
    let ints = count("classlabels_ints", |a| a.ints.len());
    let intercepts = count("intercepts", |a| a.floats.len());
    let labels = if strings > 0 { strings } else { ints };
    let classes = if intercepts == 1 && labels == 2 { 2 } else { intercepts };
    let batch = match ctx.dims(0) {
        Some([_]) => dim(1),
        Some([n, _]) => n.clone(),
        _ => unknown_dim(),
    };
    let label = if strings > 0 { DataType::String } else { DataType::Int64 };
    let float = Some(DataType::Float as i32);
    Outputs {
        types: smallvec::smallvec![
            Some(tensor_of(Some(label as i32), Some(vec![batch.clone()]))),
            Some(tensor_of(float, Some(vec![batch, dim(i64::try_from(classes).unwrap_or(0))]))),
        ],
        values: Vec::new(),
    }
}

/// A sequence of maps from class label (string or int64, as the labels given) to a float
/// scalar.
fn zip_map(ctx: &Ctx<'_, '_>) -> Type {
    let given = |name: &str, of: fn(&crate::ir::Attribute) -> bool| ctx.node.attribute(name).is_some_and(of);
    let key = if given("classlabels_int64s", |a| !a.ints.is_empty()) {
        Some(DataType::Int64 as i32)
    } else if given("classlabels_strings", |a| !a.strings.is_empty()) {
        Some(DataType::String as i32)
    } else {
        None
    };
    let value = tensor_of(Some(DataType::Float as i32), Some(Vec::new()));
    let map =
        Type { value: Some(TypeValue::Map { key_type: key, value_type: Some(Box::new(value)) }), denotation: None };
    crate::infer::types::sequence_of(map)
}

/// Version 2 on: the type of whichever `values_*` attribute is given. Version 1 maps
/// strings to integers and integers to strings.
fn label_encoder_values(ctx: &Ctx<'_, '_>) -> Option<i32> {
    if ctx.opset < 2 {
        let string = DataType::String as i32;
        return ctx.elem(0).map(|e| if e == string { DataType::Int64 as i32 } else { string });
    }
    if let Some(t) = ctx.tensor_attr("values_tensor") {
        return ctx.model.tensors[t].data_type;
    }
    [("values_strings", DataType::String), ("values_int64s", DataType::Int64), ("values_floats", DataType::Float)]
        .iter()
        .find(|(name, _)| ctx.node.attribute(name).is_some())
        .map(|(_, t)| *t as i32)
}

/// The input's leading dims, then one per selected index (a lone symbolic count kept).
fn array_feature_extractor(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let x = ctx.dims(0).filter(|d| d.len() > 1)?;
    let mut out = x[..x.len() - 1].to_vec();
    let count = ctx.dims(1).filter(|d| !d.is_empty()).and_then(|d| {
        let mut product = 1i64;
        let mut symbolic = None;
        for x in d {
            match &x.value {
                Some(DimValue::Value(v)) => product = product.checked_mul(*v)?,
                Some(DimValue::Param(_)) if symbolic.is_none() => symbolic = Some(x.clone()),
                _ => return None,
            }
        }
        match symbolic {
            None => Some(dim(product)),
            Some(s) if product == 1 => Some(s),
            Some(_) => None,
        }
    });
    out.push(count.unwrap_or_else(unknown_dim));
    Some(out)
}
