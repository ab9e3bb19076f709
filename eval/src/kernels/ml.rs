//! The ai.onnx.ml operators the backend tests exercise: LabelEncoder, Binarizer,
//! ArrayFeatureExtractor.

use std::collections::HashMap;

use onnx_core::ir::AttributeValue;

use super::elementwise::numeric_like;
use super::{Ctx, Kernel, input, one};
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "LabelEncoder" => label_encoder,
        "Binarizer" => binarizer,
        "ArrayFeatureExtractor" => array_feature_extractor,
        _ => return None,
    };
    Some(k)
}

/// A key as LabelEncoder compares them: strings by bytes, integers exactly, floats by
/// value with NaN equal to NaN.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    Bytes(Vec<u8>),
    Int(i64),
    Float(u64),
}

fn keys_of(data: &Data) -> Result<Vec<Key>, String> {
    Ok(match data {
        Data::Str(v) => v.iter().map(|s| Key::Bytes(s.clone())).collect(),
        Data::F32(_) | Data::F64(_) | Data::F16(_) | Data::Bf16(_) => Tensor::new(vec![data.len()], data.clone())
            .to_f64s()?
            .into_iter()
            .map(|f| Key::Float(if f.is_nan() { f64::NAN.to_bits() } else { (f + 0.0).to_bits() }))
            .collect(),
        _ => Tensor::new(vec![data.len()], data.clone()).to_i64s()?.into_iter().map(Key::Int).collect(),
    })
}

/// A list attribute (`NAME_strings`, `NAME_int64s`, `NAME_floats`) or tensor attribute
/// (`NAME_tensor`) as data.
fn listed(ctx: &Ctx<'_>, name: &str) -> Result<Option<Data>, String> {
    if let Some(t) = ctx.tensor(&format!("{name}_tensor"))? {
        return Ok(Some((*t.data).clone()));
    }
    let attr = |suffix: &str| ctx.node.attribute(&format!("{name}_{suffix}")).and_then(|a| a.value());
    Ok(match (attr("strings"), attr("int64s"), attr("floats")) {
        (Some(AttributeValue::Strings(v)), ..) => Some(Data::Str(v.iter().map(|s| s.as_bytes().to_vec()).collect())),
        (_, Some(AttributeValue::Ints(v)), _) => Some(Data::I64(v.to_vec())),
        (_, _, Some(AttributeValue::Floats(v))) => Some(Data::F32(v.to_vec())),
        _ => None,
    })
}

fn label_encoder(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, String> {
    let x = input(inputs, 0)?;
    let keys = listed(ctx, "keys")?.ok_or("LabelEncoder has no keys")?;
    let values = listed(ctx, "values")?.ok_or("LabelEncoder has no values")?;
    if keys.len() != values.len() {
        return Err(format!("{} keys for {} values", keys.len(), values.len()));
    }
    let default = match ctx.tensor("default_tensor")? {
        Some(t) => (*t.data).clone(),
        None => match &values {
            Data::Str(_) => Data::Str(vec![ctx.string("default_string").unwrap_or("_Unused").as_bytes().to_vec()]),
            Data::I64(_) => Data::I64(vec![ctx.int("default_int64").unwrap_or(-1)]),
            _ => Data::F32(vec![ctx.float("default_float").unwrap_or(-0.0)]),
        },
    };
    let mut table: HashMap<Key, usize> = HashMap::new();
    for (i, k) in keys_of(&keys)?.into_iter().enumerate() {
        table.entry(k).or_insert(i);
    }
    let mut joined = values.clone();
    joined.extend_from(&Tensor::new(vec![1], default).data).map_err(|e| format!("default: {e}"))?;
    let fallback = values.len();
    let picked: Vec<usize> = keys_of(&x.data)?.iter().map(|k| table.get(k).copied().unwrap_or(fallback)).collect();
    one(Tensor::new(x.shape.clone(), joined.pick(picked.into_iter())))
}

fn binarizer(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, String> {
    let x = input(inputs, 0)?;
    let threshold = f64::from(ctx.float("threshold").unwrap_or(0.0));
    let out = x.to_f64s()?.into_iter().map(|v| if v > threshold { 1.0 } else { 0.0 }).collect();
    one(numeric_like(x.data_type(), x.shape.clone(), out)?)
}

/// ArrayFeatureExtractor: the elements of X's last axis at the given indices (a 1-D X
/// reads as one row).
fn array_feature_extractor(_: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, String> {
    let (x, y) = (input(inputs, 0)?, input(inputs, 1)?.to_i64s()?);
    let last = *x.shape.last().ok_or("X is a scalar")?;
    let indices: Vec<usize> = y
        .iter()
        .map(|&i| usize::try_from(i).ok().filter(|&i| i < last).ok_or(format!("index {i} is out of range for {last}")))
        .collect::<Result<_, _>>()?;
    let rows = x.len() / last.max(1);
    let picked = (0..rows).flat_map(|r| indices.iter().map(move |&i| r * last + i));
    let mut shape = if x.rank() == 1 { vec![1] } else { x.shape[..x.rank() - 1].to_vec() };
    shape.push(indices.len());
    one(Tensor::new(shape, x.data.pick(picked)))
}
