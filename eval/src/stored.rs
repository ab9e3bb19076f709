//! Values stored in `.pb` files as onnx's backend tests store them: a TensorProto, or, for an
//! input or output declared as a sequence or an optional, a SequenceProto or OptionalProto.

use std::path::Path;

use onnx_core::binary::{
    MapKeys, StoredMap, StoredValue, decode_map, decode_optional, decode_sequence, decode_tensor, read_bytes,
};
use onnx_core::ir::{Type, TypeValue};

use crate::value::{Data, Map, Tensor, Value};

/// `DIR/PREFIX_K.pb` in numeric order of K (`input_0.pb`, `input_1.pb`, … `input_10.pb`).
pub fn numbered(dir: &Path, prefix: &str) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut files: Vec<(usize, std::path::PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let k = name.strip_prefix(prefix)?.strip_suffix(".pb")?.parse().ok()?;
            Some((k, e.path()))
        })
        .collect();
    files.sort();
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// The value in `path`, read as the message `declared` calls for (a tensor when unknown),
/// and the name stored inside it (tensors only); a `.npy` file is read as NumPy writes it
/// (it holds no name).
pub fn read_value(path: &Path, declared: Option<&Type>) -> Result<(String, Value), String> {
    let file = path.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy")) {
        return Ok((String::new(), Value::Tensor(crate::npy::read(path).map_err(|e| format!("{file}: {e}"))?)));
    }
    let bytes = read_bytes(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let fail = |e: &dyn std::fmt::Display| format!("{file}: {e}");
    match declared.and_then(|t| t.value.as_ref()) {
        Some(TypeValue::Sequence(_)) => {
            let items = decode_sequence(bytes, &file).map_err(|e| fail(&e))?;
            Ok((String::new(), from_stored(StoredValue::Sequence(items)).map_err(|e| fail(&e))?))
        }
        Some(TypeValue::Map { .. }) => {
            let map = decode_map(bytes, &file).map_err(|e| fail(&e))?;
            Ok((String::new(), from_stored(StoredValue::Map(map)).map_err(|e| fail(&e))?))
        }
        Some(TypeValue::Optional(_)) => {
            let content = decode_optional(bytes, &file).map_err(|e| fail(&e))?;
            Ok((String::new(), from_stored(StoredValue::Optional(content.map(Box::new))).map_err(|e| fail(&e))?))
        }
        _ => {
            let t = decode_tensor(bytes, &file).map_err(|e| fail(&e))?;
            let name = t.name.as_ref().map(ToString::to_string).unwrap_or_default();
            Ok((name, Value::Tensor(Tensor::from_ir(&t).map_err(|e| fail(&e))?)))
        }
    }
}

/// Reads the files given for a plan's inputs and names each value: a file given as
/// `Some(name)` is that input; otherwise the name stored inside the file when it is an
/// input's, else the input at the file's position among the model's inputs that need
/// values. Errors name the file.
pub fn read_inputs(
    plan: &crate::Plan<'_>,
    files: Vec<(Option<String>, std::path::PathBuf)>,
) -> Result<Vec<(String, Value)>, String> {
    let expected = plan.inputs();
    let graph = &plan.model.graphs[plan.main];
    let mut values = Vec::new();
    for (i, (named, path)) in files.into_iter().enumerate() {
        let by_position = expected.get(i).map(|(n, _)| n.clone());
        let guess = named.clone().or(by_position.clone()).unwrap_or_default();
        let declared = graph
            .inputs
            .iter()
            .find(|v| v.name.as_ref().is_some_and(|n| n.to_string() == guess))
            .and_then(|v| v.ty.as_ref());
        let (inside, value) = read_value(&path, declared).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = match named {
            Some(n) => n,
            None if expected.iter().any(|(n, _)| *n == inside) => inside,
            None => by_position
                .ok_or_else(|| format!("{}: the model has only {} input(s)", path.display(), expected.len()))?,
        };
        values.push((name, value));
    }
    Ok(values)
}

/// A stored value as a run-time value (sequences of tensors or of maps; maps of scalar
/// values).
pub fn from_stored(v: StoredValue) -> Result<Value, String> {
    Ok(match v {
        StoredValue::Tensor(t) => Value::Tensor(Tensor::from_ir(&t)?),
        StoredValue::Sequence(items) if items.iter().any(|i| matches!(i, StoredValue::Map(_))) => Value::Maps(
            items
                .into_iter()
                .map(|item| match item {
                    StoredValue::Map(m) => map_from_stored(m),
                    _ => Err("a sequence mixes maps with other values".into()),
                })
                .collect::<Result<_, _>>()?,
        ),
        StoredValue::Sequence(items) => Value::Sequence(
            items
                .into_iter()
                .map(|item| match item {
                    StoredValue::Tensor(t) => Ok(Tensor::from_ir(&t)?),
                    _ => Err("sequences of sequences or optionals are not supported yet".to_owned()),
                })
                .collect::<Result<_, _>>()?,
        ),
        StoredValue::Map(m) => Value::Map(map_from_stored(m)?),
        StoredValue::Optional(content) => Value::Optional(content.map(|c| from_stored(*c).map(Box::new)).transpose()?),
    })
}

/// A stored map whose values are each one element (what the ai.onnx.ml operators take).
fn map_from_stored(map: StoredMap) -> Result<Map, String> {
    let keys = match map.keys {
        MapKeys::Strings(keys) => Data::Str(keys.iter().map(|k| k.to_vec()).collect()),
        MapKeys::Ints(dt, keys) => {
            let t = Tensor::new(vec![keys.len()], Data::I64(keys.into()));
            (*crate::cast::cast_to(&t, dt)?.data).clone()
        }
    };
    let mut values: Option<Data> = None;
    for (i, v) in map.values.into_iter().enumerate() {
        let StoredValue::Tensor(t) = v else { return Err(format!("map value {i} is not a tensor")) };
        let t = Tensor::from_ir(&t)?;
        if t.len() != 1 {
            return Err(format!("map value {i} holds {} elements; only one-element values are supported", t.len()));
        }
        match &mut values {
            None => values = Some((*t.data).clone()),
            Some(all) => all.extend_from(&t.data).map_err(|e| format!("map value {i}: {e}"))?,
        }
    }
    Ok(Map::new(keys, values.unwrap_or(Data::F32(Vec::new().into()))))
}

/// A run-time value as the message onnx's backend tests store it in.
pub fn to_stored(value: &Value, name: &str) -> StoredValue {
    let tensor = |t: &Tensor| StoredValue::Tensor(Box::new(t.to_ir(Some(name))));
    match value {
        Value::Tensor(t) => tensor(t),
        Value::Sequence(items) => StoredValue::Sequence(items.iter().map(tensor).collect()),
        Value::Map(m) => StoredValue::Map(map_to_stored(m)),
        Value::Maps(maps) => StoredValue::Sequence(maps.iter().map(|m| StoredValue::Map(map_to_stored(m))).collect()),
        Value::Optional(content) => StoredValue::Optional(content.as_deref().map(|c| Box::new(to_stored(c, name)))),
    }
}

fn map_to_stored(map: &Map) -> StoredMap {
    let keys = match &*map.keys.data {
        Data::Str(keys) => MapKeys::Strings(keys.iter().map(|k| bytes::Bytes::copy_from_slice(k)).collect()),
        _ => MapKeys::Ints(map.keys.data_type(), map.keys.to_i64s().unwrap_or_default()),
    };
    let values = (0..map.values.len())
        .map(|i| {
            let one = Tensor::scalar(map.values.data.pick(std::iter::once(i)));
            StoredValue::Tensor(Box::new(one.to_ir(None)))
        })
        .collect();
    StoredMap { keys, values }
}

/// The bytes of a `.pb` file holding `value`, named `name`.
pub fn encode(value: &Value, name: &str) -> Vec<u8> {
    onnx_core::binary::encode_stored(&to_stored(value, name), Some(name))
}
