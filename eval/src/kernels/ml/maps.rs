//! The ai.onnx.ml operators of maps: ZipMap (rows of scores to a sequence of maps),
//! DictVectorizer and CastMap (a map to a row).

use std::collections::BTreeMap;

use super::super::{Ctx, one};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::value::{Data, Map, Tensor, Value};

/// A map key as the maps here order them: integers by value, strings by bytes (the order
/// onnxruntime's maps iterate in).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Int(i64),
    Bytes(Vec<u8>),
}

fn keys_of(map: &Map) -> Result<Vec<Key>, KernelError> {
    Ok(match &*map.keys.data {
        Data::Str(v) => v.iter().map(|s| Key::Bytes(s.clone())).collect(),
        _ => map.keys.to_i64s()?.into_iter().map(Key::Int).collect(),
    })
}

fn the_map<'v>(inputs: &[Option<&'v Value>]) -> Result<&'v Map, KernelError> {
    match inputs.first().copied().flatten() {
        Some(Value::Map(m)) => Ok(m),
        Some(other) => Err(bad_input!("expected a map, got {}", other.describe())),
        None => Err(bad_input!("input 0 is missing")),
    }
}

/// ZipMap: each row of scores as a map from the class labels to the row's values, keys
/// in ascending order (a repeated label keeps its last column).
pub fn zip_map(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = super::super::input(inputs, 0)?;
    let (strings, ints) = (ctx.strings("classlabels_strings"), ctx.ints("classlabels_int64s"));
    let keys: Vec<Key> = match (strings, ints) {
        (Some(s), None) => s.into_iter().map(Key::Bytes).collect(),
        (None, Some(i)) => i.iter().copied().map(Key::Int).collect(),
        _ => return Err(bad_attribute!("ZipMap needs exactly one of classlabels_strings and classlabels_int64s")),
    };
    let columns = match x.shape[..] {
        [n] | [_, n] => n,
        _ => return Err(bad_input!("X of shape {:?} is neither 1-D nor 2-D", x.shape)),
    };
    if columns != keys.len() {
        return Err(bad_input!("rows of {columns} scores for {} class labels", keys.len()));
    }
    let Data::F32(values) = &*x.data else {
        return Err(bad_input!("ZipMap takes float scores, not {}", x.data_type().name()));
    };
    let maps = values
        .chunks(columns.max(1))
        .map(|row| {
            let sorted: BTreeMap<&Key, f32> = keys.iter().zip(row.iter().copied()).collect();
            map_of(sorted.keys().map(|k| (*k).clone()).collect(), Data::F32(sorted.into_values().collect()))
        })
        .collect();
    Ok(vec![Value::Maps(maps)])
}

fn map_of(keys: Vec<Key>, values: Data) -> Map {
    let keys = match keys.first() {
        Some(Key::Bytes(_)) => {
            Data::Str(keys.into_iter().map(|k| if let Key::Bytes(b) = k { b } else { Vec::new() }).collect())
        }
        _ => Data::I64(keys.into_iter().map(|k| if let Key::Int(i) = k { i } else { 0 }).collect()),
    };
    Map::new(keys, values)
}

/// DictVectorizer: a row `[1, V]` of the map's values at the vocabulary's keys (zero, or
/// the empty string, where the map has none).
pub fn dict_vectorizer(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let map = the_map(inputs)?;
    let vocabulary: Vec<Key> = match (ctx.strings("string_vocabulary"), ctx.ints("int64_vocabulary")) {
        (Some(s), _) if !s.is_empty() => s.into_iter().map(Key::Bytes).collect(),
        (_, Some(i)) => i.iter().copied().map(Key::Int).collect(),
        _ => return Err(bad_attribute!("DictVectorizer has no vocabulary")),
    };
    let at: BTreeMap<Key, usize> = keys_of(map)?.into_iter().enumerate().map(|(i, k)| (k, i)).collect();
    let mut data = Data::empty(map.values.data_type(), vocabulary.len())?;
    let default = match &*map.values.data {
        Data::Str(_) => Tensor::new(vec![1], Data::Str(vec![Vec::new()])),
        _ => numeric_like(map.values.data_type(), vec![1], vec![0.0])?,
    };
    for key in &vocabulary {
        match at.get(key) {
            Some(&i) => data.extend_from(&map.values.data.pick(std::iter::once(i)))?,
            None => data.extend_from(&default.data)?,
        }
    }
    one(Tensor::new(vec![1, vocabulary.len()], data))
}

/// CastMap: an int64-keyed map's values in key order, cast to float, int64 or string;
/// SPARSE places them at their keys in a row of `max_map`, the rest padded.
pub fn cast_map(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let map = the_map(inputs)?;
    let Ok(keys) = map
        .keys
        .to_i64s()
        .and_then(|k| if map.keys.data_type().name() == "int64" { Ok(k) } else { Err(bad_input!("")) })
    else {
        return Err(bad_input!("CastMap takes a map of int64 keys, not {}", map.describe()));
    };
    let sorted: BTreeMap<i64, usize> = keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    let to = ctx.string("cast_to").unwrap_or("TO_FLOAT");
    let cast = |i: usize| -> Result<Cast, KernelError> {
        match (&*map.values.data, to) {
            (Data::Str(v), "TO_STRING") => Ok(Cast::Str(v[i].clone())),
            (Data::Str(v), "TO_FLOAT") => parse_prefix(&v[i]).map(|f| Cast::Float(f as f32)),
            (Data::Str(v), "TO_INT64") => parse_int_prefix(&v[i]).map(Cast::Int),
            (Data::F32(v), "TO_STRING") => Ok(Cast::Str(format!("{:.6}", v[i]).into_bytes())),
            (Data::F32(v), "TO_FLOAT") => Ok(Cast::Float(v[i])),
            (Data::F32(v), "TO_INT64") => Ok(Cast::Int(v[i] as i64)),
            (values, "TO_STRING" | "TO_FLOAT" | "TO_INT64") => {
                Err(bad_input!("CastMap takes string or float values, not {}", values.data_type().name()))
            }
            (_, other) => Err(bad_attribute!("cast_to '{other}' is not TO_FLOAT, TO_STRING or TO_INT64")),
        }
    };
    let mut cells: Vec<Cast> = Vec::new();
    match ctx.string("map_form").unwrap_or("DENSE") {
        "DENSE" => {
            for &i in sorted.values() {
                cells.push(cast(i)?);
            }
        }
        "SPARSE" => {
            let width = usize::try_from(ctx.int("max_map").unwrap_or(1))
                .ok()
                .filter(|&w| w > 0)
                .ok_or(bad_attribute!("max_map must be positive"))?;
            ctx.check_elements(width)?;
            let pad = match to {
                "TO_STRING" => Cast::Str(b"0.f".to_vec()),
                "TO_INT64" => Cast::Int(0),
                _ => Cast::Float(0.0),
            };
            cells = vec![pad; width];
            for (&k, &i) in &sorted {
                let k = usize::try_from(k).map_err(|_| bad_input!("key {k} is negative"))?;
                if k < width {
                    cells[k] = cast(i)?;
                }
            }
        }
        other => return Err(bad_attribute!("map_form '{other}' is not DENSE or SPARSE")),
    }
    let width = cells.len();
    let data = match to {
        "TO_STRING" => {
            Data::Str(cells.into_iter().map(|c| if let Cast::Str(s) = c { s } else { Vec::new() }).collect())
        }
        "TO_INT64" => Data::I64(cells.into_iter().map(|c| if let Cast::Int(i) = c { i } else { 0 }).collect()),
        _ => Data::F32(cells.into_iter().map(|c| if let Cast::Float(f) = c { f } else { 0.0 }).collect()),
    };
    one(Tensor::new(vec![1, width], data))
}

#[derive(Clone)]
enum Cast {
    Float(f32),
    Int(i64),
    Str(Vec<u8>),
}

/// The number a string starts with (after blanks), as C's `strtod` reads it; a string that
/// starts with none is an error.
fn parse_prefix(s: &[u8]) -> Result<f64, KernelError> {
    let text = String::from_utf8_lossy(s);
    let t = text.trim_start();
    (1..=t.len())
        .rev()
        .filter(|&end| t.is_char_boundary(end))
        .find_map(|end| t[..end].parse::<f64>().ok())
        .ok_or_else(|| bad_input!("'{text}' is not a number"))
}

fn parse_int_prefix(s: &[u8]) -> Result<i64, KernelError> {
    let text = String::from_utf8_lossy(s);
    let t = text.trim_start();
    let digits =
        t.char_indices().take_while(|&(i, c)| c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))).count();
    t[..digits].parse::<i64>().map_err(|_| bad_input!("'{text}' is not an integer"))
}
