//! Binary `.onnx` models: decoding (from a memory map, so tensor bytes are not copied) and
//! encoding (canonical protobuf, the bytes onnx itself writes).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use onnx_proto as pb;

use crate::ir::{Model, Tensor};
use crate::lower;

/// Why a binary model could not be read. Always names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: cannot read: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path}: not a valid ONNX protobuf: {source}")]
    Decode { path: String, source: pb::DecodeError },
}

/// The bytes of a file: memory-mapped when it is a regular file, read otherwise (pipes,
/// stdin). The map is private and read-only.
pub fn read_bytes(path: &Path) -> io::Result<Bytes> {
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() >= 64 * 1024 {
        return map_file(&file);
    }
    let mut buf = Vec::new();
    file.read_to_end(&mut buf)?;
    Ok(Bytes::from(buf))
}

#[allow(unsafe_code)]
pub(crate) fn map_file(file: &File) -> io::Result<Bytes> {
    // SAFETY: the map is read-only and private. Another process truncating the file while we
    // hold the map would fault on access; that is the accepted price of memory-mapping (onnx,
    // onnxruntime and every mmap-based loader share it), and we never write through the map.
    let map = unsafe { memmap2::Mmap::map(file)? };
    Ok(Bytes::from_owner(map))
}

/// Reads all of standard input.
pub fn read_stdin() -> io::Result<Bytes> {
    let mut buf = Vec::new();
    io::stdin().lock().read_to_end(&mut buf)?;
    Ok(Bytes::from(buf))
}

/// Decodes and lowers a model. `what` names the source in errors (a path, or `<stdin>`).
pub fn decode_model(data: Bytes, what: &str) -> Result<Model, ReadError> {
    let proto: pb::ModelProto =
        pb::decode(data).map_err(|source| ReadError::Decode { path: what.to_owned(), source })?;
    Ok(lower::from_proto::model(proto))
}

/// Reads a model file.
pub fn read_model(path: &Path) -> Result<Model, ReadError> {
    let what = path.display().to_string();
    let data = read_bytes(path).map_err(|source| ReadError::Io { path: what.clone(), source })?;
    decode_model(data, &what)
}

/// Encodes a model as canonical protobuf.
pub fn encode_model(model: &Model) -> Vec<u8> {
    pb::encode(&lower::to_proto::model(model))
}

/// Decodes a standalone TensorProto (backend test `input_N.pb` files).
pub fn decode_tensor(data: Bytes, what: &str) -> Result<Tensor, ReadError> {
    let proto: pb::TensorProto =
        pb::decode(data).map_err(|source| ReadError::Decode { path: what.to_owned(), source })?;
    Ok(lower::from_proto::tensor(proto))
}

pub fn encode_tensor(tensor: &Tensor) -> Vec<u8> {
    pb::encode(&lower::to_proto::tensor(tensor))
}

/// The directory external data of a model file is resolved against.
pub fn model_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    }
}
