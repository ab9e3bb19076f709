//! Feature preparation of ai.onnx.ml: Normalizer, Scaler, Imputer, OneHotEncoder,
//! CategoryMapper, FeatureVectorizer. Float outputs are float32, as onnxruntime makes them.

use std::collections::HashMap;

use super::super::{Ctx, count, input, one};
use crate::error::{KernelError, bad_attribute, bad_input, limit};
use crate::value::{Data, Tensor, Value};

/// The input's values as float32.
fn f32s(x: &Tensor) -> Result<Vec<f32>, KernelError> {
    Ok(x.to_f32s()?.into_owned())
}

/// The length of a row: the whole of a 1-D input, else the second dimension.
fn stride(x: &Tensor) -> Result<usize, KernelError> {
    match x.shape[..] {
        [] => Err(bad_input!("X is a scalar")),
        [n] => Ok(n),
        [_, n, ..] => Ok(n),
    }
}

fn f32_tensor(shape: Vec<usize>, values: Vec<f32>) -> Result<Vec<Value>, KernelError> {
    one(Tensor::new(shape, Data::F32(values.into())))
}

/// Normalizer: each row divided by its maximum, its L1 norm, or (keeping signs) its L2
/// norm; a row whose norm is zero is kept.
pub fn normalizer(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let width = match x.shape[..] {
        [n] | [_, n] => n,
        _ => return Err(bad_input!("X of shape {:?} is neither 1-D nor 2-D", x.shape)),
    };
    let norm = ctx.string("norm").unwrap_or("MAX");
    let mut values = f32s(x)?;
    for row in values.chunks_mut(width.max(1)) {
        match norm {
            "MAX" => {
                let max = row.iter().copied().fold(f32::MIN, f32::max);
                if max != 0.0 {
                    row.iter_mut().for_each(|v| *v /= max);
                }
            }
            "L1" => {
                let sum: f32 = row.iter().map(|v| v.abs()).sum();
                if sum != 0.0 {
                    row.iter_mut().for_each(|v| *v /= sum);
                }
            }
            "L2" => {
                let sum: f32 = row.iter().map(|v| v * v).sum();
                if sum != 0.0 {
                    row.iter_mut().for_each(|v| *v = (*v * *v / sum).sqrt().copysign(*v));
                }
            }
            other => return Err(bad_attribute!("norm '{other}' is not MAX, L1 or L2")),
        }
    }
    f32_tensor(x.shape.clone(), values)
}

/// Scaler: `(x − offset) · scale`, per column or one pair for all.
pub fn scaler(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let width = stride(x)?;
    let (offset, scale) = (ctx.floats("offset").unwrap_or_default(), ctx.floats("scale").unwrap_or_default());
    let (offset, scale): (Vec<f64>, Vec<f64>) =
        (offset.iter().map(|&v| f64::from(v)).collect(), scale.iter().map(|&v| f64::from(v)).collect());
    if offset.len() != scale.len() || !(scale.len() == width || scale.len() == 1) {
        return Err(bad_attribute!(
            "{} offsets and {} scales for rows of {width}: need one of each per column, or one",
            offset.len(),
            scale.len()
        ));
    }
    let column = |i: usize| if scale.len() == 1 { 0 } else { i % width };
    let values: Vec<f32> = match &*x.data {
        // A double input is scaled in double, others in float.
        Data::F64(v) => {
            v.iter().enumerate().map(|(i, &v)| ((v - offset[column(i)]) * scale[column(i)]) as f32).collect()
        }
        _ => f32s(x)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| (v - offset[column(i)] as f32) * scale[column(i)] as f32)
            .collect(),
    };
    f32_tensor(x.shape.clone(), values)
}

/// Imputer: every value equal to `replaced_value_*` (NaN matching NaN) takes its
/// column's imputed value (or the one value given for all).
pub fn imputer(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let width = stride(x)?;
    let pick = |imputed: usize, i: usize| if imputed == width { i % width.max(1) } else { 0 };
    match &*x.data {
        Data::I64(v) => {
            let imputed = ctx.ints("imputed_value_int64s").unwrap_or_default();
            if imputed.is_empty() {
                return Err(bad_attribute!("imputed_value_int64s is empty for an int64 input"));
            }
            let replaced = ctx.int("replaced_value_int64").unwrap_or(0);
            let out =
                v.iter().enumerate().map(|(i, &v)| if v == replaced { imputed[pick(imputed.len(), i)] } else { v });
            one(Tensor::new(x.shape.clone(), Data::I64(out.collect())))
        }
        Data::F32(v) => {
            let imputed = ctx.floats("imputed_value_floats").unwrap_or_default();
            if imputed.is_empty() {
                return Err(bad_attribute!("imputed_value_floats is empty for a float input"));
            }
            let replaced = ctx.float("replaced_value_float").unwrap_or(0.0);
            let hit = |v: f32| v == replaced || (v.is_nan() && replaced.is_nan());
            let out = v.iter().enumerate().map(|(i, &v)| if hit(v) { imputed[pick(imputed.len(), i)] } else { v });
            f32_tensor(x.shape.clone(), out.collect())
        }
        _ => Err(bad_input!("Imputer takes float or int64, not {}", x.data_type().name())),
    }
}

/// OneHotEncoder: a new last axis of one float per category, 1 where the value is that
/// category; an unknown value is all zeros, or an error when `zeros` is 0.
pub fn one_hot_encoder(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let (strings, ints) =
        (ctx.strings("cats_strings").unwrap_or_default(), ctx.ints("cats_int64s").unwrap_or_default());
    let categories = strings.len().max(ints.len());
    if categories == 0 {
        return Err(bad_attribute!("OneHotEncoder has no categories"));
    }
    // The last of repeated categories wins, as in onnxruntime.
    let index: Vec<Option<usize>> = match &*x.data {
        Data::Str(v) => {
            let table: HashMap<&[u8], usize> = strings.iter().enumerate().map(|(i, s)| (s.as_slice(), i)).collect();
            v.iter().map(|s| table.get(s.as_slice()).copied()).collect()
        }
        _ => {
            let table: HashMap<i64, usize> = ints.iter().enumerate().map(|(i, &c)| (c, i)).collect();
            x.to_f64s()?.iter().map(|&v| table.get(&(v as i64)).copied()).collect()
        }
    };
    let zeros = ctx.int("zeros").unwrap_or(1) != 0;
    let total = count(&[x.len(), categories])?;
    ctx.check_grown(total, x.len())?;
    let mut out = vec![0.0f32; total];
    for (i, hit) in index.into_iter().enumerate() {
        match hit {
            Some(c) => out[i * categories + c] = 1.0,
            None if !zeros => return Err(bad_input!("value {i} is no category, and zeros is 0")),
            None => {}
        }
    }
    let mut shape = x.shape.clone();
    shape.push(categories);
    f32_tensor(shape, out)
}

/// CategoryMapper: strings to integers or integers to strings, by the two parallel lists;
/// unknown values take the default.
pub fn category_mapper(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let (strings, ints) =
        (ctx.strings("cats_strings").unwrap_or_default(), ctx.ints("cats_int64s").unwrap_or_default());
    if strings.len() != ints.len() {
        return Err(bad_attribute!("{} cats_strings for {} cats_int64s", strings.len(), ints.len()));
    }
    let data = match &*x.data {
        Data::Str(v) => {
            let table: HashMap<&[u8], i64> = strings.iter().map(Vec::as_slice).zip(ints.iter().copied()).collect();
            let default = ctx.int("default_int64").unwrap_or(-1);
            Data::I64(v.iter().map(|s| table.get(s.as_slice()).copied().unwrap_or(default)).collect())
        }
        Data::I64(v) => {
            let table: HashMap<i64, &[u8]> = ints.iter().copied().zip(strings.iter().map(Vec::as_slice)).collect();
            let default = ctx.string("default_string").unwrap_or("_Unused").as_bytes();
            Data::Str(v.iter().map(|k| table.get(k).copied().unwrap_or(default).to_vec()).collect())
        }
        _ => return Err(bad_input!("CategoryMapper takes string or int64, not {}", x.data_type().name())),
    };
    one(Tensor::new(x.shape.clone(), data))
}

/// FeatureVectorizer: the inputs' rows side by side, each cut or padded with zeros to its
/// `inputdimensions` entry.
pub fn feature_vectorizer(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let dims: Vec<usize> = ctx
        .ints("inputdimensions")
        .unwrap_or_default()
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| bad_attribute!("inputdimensions has {d}")))
        .collect::<Result<_, _>>()?;
    if dims.len() != inputs.len() {
        return Err(bad_attribute!("{} inputs for {} inputdimensions", inputs.len(), dims.len()));
    }
    let width: usize =
        dims.iter().try_fold(0usize, |a, &d| a.checked_add(d)).ok_or(limit!("inputdimensions overflow"))?;
    let mut batch = None;
    let mut parts = Vec::new();
    for i in 0..inputs.len() {
        let x = input(inputs, i)?;
        let (rows, row) = match x.shape[..] {
            [] => return Err(bad_input!("input {i} is a scalar")),
            [n] => (1, n),
            [n, ..] => (n, x.len() / n.max(1)),
        };
        if *batch.get_or_insert(rows) != rows {
            return Err(bad_input!("input {i} has {rows} rows, input 0 has {}", batch.unwrap_or(0)));
        }
        parts.push((f32s(x)?, row));
    }
    let rows = batch.unwrap_or(1);
    let total = count(&[rows, width])?;
    ctx.check_elements(total)?;
    let mut out = vec![0.0f32; total];
    let mut at = 0;
    for ((values, row), &d) in parts.iter().zip(&dims) {
        for r in 0..rows {
            let take = (*row).min(d);
            out[r * width + at..r * width + at + take].copy_from_slice(&values[r * row..r * row + take]);
        }
        at += d;
    }
    f32_tensor(vec![rows, width], out)
}
