//! The ai.onnx.ml operators (classical machine learning) that have shape rules in onnx.

use super::{Ctx, Outputs, tensor_of};
use crate::infer::env::{dim, unknown_dim};
use crate::ir::{DataType, DimValue, Dimension};

/// `ctx.opset` is the imported version of ai.onnx.ml here.
pub fn infer(op: &str, ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let float = Some(DataType::Float as i32);
    let batch = || ctx.dims(0).and_then(|d| d.first()).cloned().unwrap_or_default();
    match op {
        "Binarizer" | "Imputer" => Some(Outputs::one(ctx.input_type(0)?.clone())),
        "Normalizer" | "Scaler" => Some(Outputs::one(tensor_of(float, ctx.dims_vec(0)))),
        "LabelEncoder" => Some(Outputs::one(tensor_of(label_encoder_values(ctx), ctx.dims_vec(0)))),
        "ArrayFeatureExtractor" => Some(Outputs::one(tensor_of(ctx.elem(0), array_feature_extractor(ctx)))),
        // [N, n_targets] of the input's type.
        "TreeEnsemble" => {
            let targets = ctx.int("n_targets").map_or_else(unknown_dim, dim);
            Some(Outputs::one(tensor_of(ctx.elem(0), Some(vec![batch(), targets]))))
        }
        "TreeEnsembleRegressor" | "LinearRegressor" => {
            let targets = ctx.int("n_targets").or_else(|| ctx.int("targets")).unwrap_or(1);
            Some(Outputs::one(tensor_of(float, Some(vec![batch(), dim(targets)]))))
        }
        _ => None,
    }
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
