//! External data: tensors whose bytes live in a side file named by `external_data`
//! (`location`, `offset`, `length`).
//!
//! Reading follows onnx's rules and is stricter where onnx was bitten (see the advisories in
//! the semantics spec, §6): the location must be relative and made only of normal path
//! components (so `a..b.bin` is fine but `..`, `/etc`, `C:` are not); every component is
//! opened relative to its parent without following symlinks, so neither the file nor any
//! parent directory may be a link; the file must be regular with a single hard link; those
//! checks are made on the opened descriptor, not on a path that could change; `offset` and
//! `length` must be non-negative integers within the file; and the byte count must equal what
//! the tensor's type and shape need. A model read from memory (stdin) has no directory and so
//! cannot use external data at all: onnx silently falls back to the working directory there.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use bytes::Bytes;

use crate::ir::{DATA_LOCATION_EXTERNAL, DataType, Model, Str, StringPair, Tensor, TensorId};

/// Keys onnx defines for `external_data` entries. Others are kept but ignored.
pub const KNOWN_KEYS: &[&str] = &["location", "offset", "length", "checksum", "basepath"];

/// What is wrong with one tensor's external data.
#[derive(Debug, thiserror::Error)]
#[error("tensor '{tensor}': external data '{location}': {reason}")]
pub struct ExternalDataError {
    pub tensor: String,
    pub location: String,
    pub reason: Reason,
}

#[derive(Debug, thiserror::Error)]
pub enum Reason {
    #[error("no 'location' key")]
    NoLocation,
    #[error("the location is empty")]
    EmptyLocation,
    #[error("the location is an absolute path; it must be relative to the model's directory")]
    Absolute,
    #[error("the location leaves the model's directory (component '{0}')")]
    Escapes(String),
    #[error("'{key}' is not a non-negative integer: '{value}'")]
    BadNumber { key: &'static str, value: String },
    #[error("'{0}' is a symbolic link; links are not followed for external data")]
    Symlink(String),
    #[error("'{0}' is not a regular file")]
    NotRegular(String),
    #[error("the file has {0} hard links; a linked file could expose data outside the model")]
    HardLinked(u64),
    #[error("offset {offset} + length {length} exceeds the file size {size}")]
    OutOfBounds { offset: u64, length: u64, size: u64 },
    #[error("it holds {actual} bytes but the tensor's type and shape need {expected}")]
    SizeMismatch { actual: u64, expected: u64 },
    #[error("the tensor's type and shape do not define a byte size (unknown type, string, or bad dims)")]
    NoFixedSize,
    #[error("the model was not read from a file, so there is no directory to resolve it against")]
    NoModelDirectory,
    #[error("the location is not valid UTF-8 or not a valid path on this system")]
    NotAPath,
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// A parsed `external_data` reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalRef {
    pub location: Str,
    pub offset: u64,
    pub length: Option<u64>,
}

fn tensor_label(t: &Tensor) -> String {
    t.name.as_ref().map_or_else(|| "<unnamed>".to_owned(), Str::escaped)
}

/// Parses the `external_data` entries of a tensor.
pub fn parse_ref(tensor: &Tensor) -> Result<ExternalRef, ExternalDataError> {
    let location = tensor.external_value("location").cloned();
    let fail = |reason| ExternalDataError {
        tensor: tensor_label(tensor),
        location: location.as_ref().map_or_else(String::new, Str::escaped),
        reason,
    };
    let Some(loc) = location.clone() else {
        return Err(fail(Reason::NoLocation));
    };
    let number = |key: &'static str| -> Result<Option<u64>, ExternalDataError> {
        match tensor.external_value(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .and_then(|s| s.parse::<u64>().ok())
                .map(Some)
                .ok_or_else(|| fail(Reason::BadNumber { key, value: v.escaped() })),
        }
    };
    Ok(ExternalRef { offset: number("offset")?.unwrap_or(0), length: number("length")?, location: loc })
}

/// Splits a location into its normal components, rejecting anything that could leave the
/// model directory. `.` components are dropped.
pub fn location_components(location: &Str) -> Result<Vec<PathBuf>, Reason> {
    let text = location.as_str().ok_or(Reason::NotAPath)?;
    if text.is_empty() {
        return Err(Reason::EmptyLocation);
    }
    if text.contains('\0') {
        return Err(Reason::NotAPath);
    }
    // Both separators count, whatever the host: a model written on Windows must not escape
    // on Linux through `..\\`.
    let mut parts = Vec::new();
    if text.starts_with('/') || text.starts_with('\\') {
        return Err(Reason::Absolute);
    }
    for piece in text.split(['/', '\\']) {
        match piece {
            "" | "." => continue,
            ".." => return Err(Reason::Escapes(piece.to_owned())),
            p if p.len() >= 2 && p.as_bytes()[1] == b':' => return Err(Reason::Absolute),
            p => {
                let mut comps = Path::new(p).components();
                match (comps.next(), comps.next()) {
                    (Some(Component::Normal(_)), None) => parts.push(PathBuf::from(p)),
                    _ => return Err(Reason::Escapes(p.to_owned())),
                }
            }
        }
    }
    if parts.is_empty() {
        return Err(Reason::EmptyLocation);
    }
    Ok(parts)
}

/// The side files the model's external tensors name, resolved against `base_dir` (each
/// once; locations that could leave the directory are left out, since nothing reads them).
pub fn referenced_files(model: &Model, base_dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = external_tensors(model)
        .filter_map(|id| parse_ref(&model.tensors[id]).ok())
        .filter_map(|r| location_components(&r.location).ok())
        .map(|components| {
            let mut path = base_dir.to_owned();
            path.extend(components);
            path
        })
        .collect();
    files.sort();
    files.dedup();
    files
}

/// Reads external tensor bytes for one model directory, mapping each side file once.
#[derive(Debug)]
pub struct ExternalReader {
    base_dir: Option<PathBuf>,
    /// Each side file read, by its path's components: the location it was first named by
    /// and its bytes.
    files: HashMap<Vec<PathBuf>, (Str, Bytes)>,
}

impl ExternalReader {
    /// `base_dir` is the model's directory; `None` for a model read from memory.
    pub fn new(base_dir: Option<PathBuf>) -> Self {
        ExternalReader { base_dir, files: HashMap::new() }
    }

    /// The bytes of an external tensor, checked against its type and shape.
    pub fn read(&mut self, tensor: &Tensor) -> Result<Bytes, ExternalDataError> {
        let r = parse_ref(tensor)?;
        let fail = |reason| ExternalDataError { tensor: tensor_label(tensor), location: r.location.escaped(), reason };
        let base = self.base_dir.clone().ok_or_else(|| fail(Reason::NoModelDirectory))?;
        let components = location_components(&r.location).map_err(fail)?;
        let expected = tensor.expected_raw_size().ok_or_else(|| fail(Reason::NoFixedSize))?;
        let data = match self.files.get(&components) {
            Some((_, d)) => d.clone(),
            None => {
                let file = open_beneath(&base, &components).map_err(fail)?;
                let label = base.join(components.iter().collect::<PathBuf>());
                let data = map_or_read(&file, &label).map_err(|e| fail(Reason::Io(e)))?;
                self.files.insert(components, (r.location.clone(), data.clone()));
                data
            }
        };
        let size = data.len() as u64;
        let length = r.length.unwrap_or(size.saturating_sub(r.offset));
        let end = r.offset.checked_add(length).filter(|&end| end <= size);
        let Some(end) = end else {
            return Err(fail(Reason::OutOfBounds { offset: r.offset, length, size }));
        };
        if length != expected {
            return Err(fail(Reason::SizeMismatch { actual: length, expected }));
        }
        // Both bounds are ≤ size, which is a usize length.
        Ok(data.slice(r.offset as usize..end as usize))
    }
}

fn map_or_read(file: &File, label: &Path) -> io::Result<Bytes> {
    if file.metadata()?.len() == 0 {
        return Ok(Bytes::new());
    }
    crate::binary::map_file(file, &label.display().to_string())
}

/// Why opening one path component failed: `ELOOP`/`ENOTDIR` under `O_NOFOLLOW` mean the
/// component is a symbolic link.
#[cfg(unix)]
fn component_error(e: rustix::io::Errno, comp: &Path) -> Reason {
    if e == rustix::io::Errno::LOOP || e == rustix::io::Errno::NOTDIR {
        Reason::Symlink(comp.display().to_string())
    } else {
        Reason::Io(io::Error::from(e))
    }
}

/// Opens the directory `base/dirs…`, each component relative to its parent's descriptor
/// and without following symlinks, so no component can lead outside `base`.
#[cfg(unix)]
fn open_dir_beneath(base: &Path, dirs: &[PathBuf]) -> Result<rustix::fd::OwnedFd, Reason> {
    use rustix::fs::{Mode, OFlags, openat};
    let mut dir = rustix::fs::open(base, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| Reason::Io(io::Error::from(e)))?;
    for comp in dirs {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        dir = openat(&dir, comp.as_path(), flags, Mode::empty()).map_err(|e| component_error(e, comp))?;
    }
    Ok(dir)
}

/// Opens `base/components…` refusing symlinks on every component, then checks the opened
/// file is regular and singly linked.
#[cfg(unix)]
fn open_beneath(base: &Path, components: &[PathBuf]) -> Result<File, Reason> {
    use rustix::fs::{Mode, OFlags, openat};
    use std::os::unix::fs::MetadataExt;

    let (last, dirs) = components.split_last().ok_or(Reason::EmptyLocation)?;
    let dir = open_dir_beneath(base, dirs)?;
    // NONBLOCK: opening a FIFO must not hang; it is rejected as not regular below.
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let fd = openat(&dir, last.as_path(), flags, Mode::empty()).map_err(|e| component_error(e, last))?;
    let file = File::from(fd);
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Reason::NotRegular(last.display().to_string()));
    }
    if meta.nlink() > 1 {
        return Err(Reason::HardLinked(meta.nlink()));
    }
    Ok(file)
}

/// Portable fallback: checks each component with `symlink_metadata` before opening. Not
/// race-free; unix builds use the descriptor-relative walk above.
#[cfg(not(unix))]
fn open_beneath(base: &Path, components: &[PathBuf]) -> Result<File, Reason> {
    let mut path = base.to_owned();
    for comp in components {
        path.push(comp);
        let meta = std::fs::symlink_metadata(&path)?;
        if meta.file_type().is_symlink() {
            return Err(Reason::Symlink(comp.display().to_string()));
        }
    }
    let file = File::open(&path)?;
    if !file.metadata()?.is_file() {
        return Err(Reason::NotRegular(path.display().to_string()));
    }
    Ok(file)
}

/// Every tensor of the model stored externally.
pub fn external_tensors(model: &Model) -> impl Iterator<Item = TensorId> + '_ {
    model.tensors.iter().filter(|(_, t)| t.is_external()).map(|(id, _)| id)
}

/// Moves every external tensor's bytes into `raw_data` and drops the references, so the
/// model no longer needs its side files. Returns how many tensors were embedded.
pub fn embed_all(model: &mut Model, base_dir: Option<PathBuf>) -> Result<usize, ExternalDataError> {
    embed_where(model, base_dir, |_| true)
}

/// Whether a location names a binary model (`….onnx`): references into it are a view of that
/// model's own bytes (an outline's, `--reference-input`'s), not a side file of weights.
pub fn is_model_file(location: &Str) -> bool {
    location.as_str().is_some_and(|l| l.to_ascii_lowercase().ends_with(".onnx"))
}

/// [`embed_all`] for the external tensors whose location `which` accepts.
pub fn embed_where(
    model: &mut Model,
    base_dir: Option<PathBuf>,
    which: impl Fn(&Str) -> bool,
) -> Result<usize, ExternalDataError> {
    embed_with(model, &mut ExternalReader::new(base_dir), which)
}

/// The side files of a model, mapped: what [`read_in_place`] read the model's external
/// tensors from.
#[derive(Debug, Default)]
pub struct SideFiles {
    files: Vec<(Str, Bytes)>,
}

/// Reads every external tensor of the model in, each as a view of its side file's mapping
/// (nothing is copied, and a page is read only when a value is used), so that a command
/// that edits the model (`onnx simplify`) sees every value. [`SideFiles::refer_back`] then
/// makes the tensors still viewing a side file references to it again.
pub fn read_in_place(model: &mut Model, base_dir: Option<PathBuf>) -> Result<SideFiles, ExternalDataError> {
    let mut reader = ExternalReader::new(base_dir);
    embed_with(model, &mut reader, |_| true)?;
    Ok(SideFiles { files: reader.files.into_values().collect() })
}

impl SideFiles {
    /// Turns every initializer and attribute tensor whose bytes are still a view of a side
    /// file (one the edit kept, or a `Constant`'s value made an initializer) back into a
    /// reference to that file, at their offset. Tensors the edit computed are new bytes and
    /// stay in the model. Returns how many tensors refer to a side file again.
    pub fn refer_back(&self, model: &mut Model) -> usize {
        self.files.iter().map(|(location, bytes)| reference_source(model, bytes, &location.to_string(), 0).len()).sum()
    }
}

/// [`embed_where`] through a reader the caller keeps.
fn embed_with(
    model: &mut Model,
    reader: &mut ExternalReader,
    which: impl Fn(&Str) -> bool,
) -> Result<usize, ExternalDataError> {
    let ids: Vec<TensorId> = external_tensors(model)
        .filter(|&id| model.tensors[id].external_value("location").is_some_and(&which))
        .collect();
    for &id in &ids {
        let data = reader.read(&model.tensors[id])?;
        let t = &mut model.tensors[id];
        t.external_data.clear();
        t.data_location = t.data_location_once_embedded.take();
        if std::mem::take(&mut t.typed_once_embedded) {
            // Back into the typed field the reference was made from.
            match t.elem_type() {
                Some(DataType::Double | DataType::Complex128) => {
                    t.double_data =
                        data.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
                }
                _ => {
                    t.float_data = data.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
                }
            }
        } else {
            t.raw_data = Some(data);
        }
    }
    Ok(ids.len())
}

/// Little-endian bytes of a tensor whose values can be stored raw: its `raw_data`, or its
/// typed field when the element width matches the field's (float, double, int32, int64,
/// uint32/uint64 as 64-bit, complex). Narrower types kept in `int32_data` are left inline.
fn raw_bytes(t: &Tensor) -> Option<Bytes> {
    use crate::ir::DataType as D;
    if let Some(raw) = &t.raw_data {
        return Some(raw.clone());
    }
    let ty = t.elem_type()?;
    let mut out = Vec::new();
    match ty {
        D::Float | D::Complex64 => t.float_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        D::Double | D::Complex128 => t.double_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        D::Int32 => t.int32_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        D::Int64 => t.int64_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        D::Uint64 => t.uint64_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        D::Uint32 => t.uint64_data.iter().for_each(|&v| out.extend_from_slice(&(v as u32).to_le_bytes())),
        // int32_data holds one element per entry for the narrower types (the bits of a
        // float16 or bfloat16, the code of a float8): its low bytes are the element.
        D::Int8
        | D::Uint8
        | D::Bool
        | D::Float8e4m3fn
        | D::Float8e4m3fnuz
        | D::Float8e5m2
        | D::Float8e5m2fnuz
        | D::Float8e8m0 => out.extend(t.int32_data.iter().map(|&v| v as u8)),
        D::Int16 | D::Uint16 | D::Float16 | D::Bfloat16 => {
            t.int32_data.iter().for_each(|&v| out.extend_from_slice(&(v as u16).to_le_bytes()))
        }
        _ => return None,
    }
    Some(Bytes::from(out))
}

/// Where each tensor of a side file starts: a multiple of this many bytes (zeros between).
/// A reader that maps the file (our evaluator; onnxruntime) can then use every tensor where
/// it lies, whatever its element type and the widest vector load, instead of copying it;
/// packed back to back, a tensor after one of odd length would be misaligned.
pub const SIDE_FILE_ALIGNMENT: u64 = 64;

/// Moves the data of every initializer (in every graph) of at least `threshold` bytes into
/// one side file at `location`, relative to `out_dir`, the directory the model will be
/// written to, each at an offset that is a multiple of [`SIDE_FILE_ALIGNMENT`]. The side
/// file is written atomically. Tensors already external are embedded first by the caller.
/// Returns the number of tensors moved.
pub fn externalize(
    model: &mut Model,
    out_dir: &Path,
    location: &str,
    threshold: u64,
) -> Result<usize, ExternalDataError> {
    let loc = Str::from(location);
    let fail = |reason| ExternalDataError { tensor: String::new(), location: location.to_owned(), reason };
    let components = location_components(&loc).map_err(fail)?;
    let mut target = out_dir.to_owned();
    target.extend(&components);
    // Parent directories must exist and be real directories inside `out_dir`.
    #[cfg(unix)]
    if let Some((_, dirs)) = components.split_last() {
        open_dir_beneath(out_dir, dirs).map_err(fail)?;
    }
    let ids: Vec<TensorId> = model
        .graphs
        .iter()
        .flat_map(|(_, g)| g.initializers.iter().copied())
        .filter(|&id| {
            let t = &model.tensors[id];
            !t.is_external() && t.expected_raw_size().is_some_and(|n| n >= threshold)
        })
        .collect();
    let mut chunks = Vec::new();
    for &id in &ids {
        if let Some(bytes) = raw_bytes(&model.tensors[id]) {
            chunks.push((id, bytes));
        }
    }
    let mut offsets = Vec::with_capacity(chunks.len());
    let mut end = 0u64;
    for (_, bytes) in &chunks {
        let offset = end.next_multiple_of(SIDE_FILE_ALIGNMENT);
        offsets.push(offset);
        end = offset + bytes.len() as u64;
    }
    crate::write_atomically(&target, |out: &mut dyn Write| {
        let mut written = 0u64;
        for ((_, bytes), &offset) in chunks.iter().zip(&offsets) {
            out.write_all(&[0; SIDE_FILE_ALIGNMENT as usize][..(offset - written) as usize])?;
            out.write_all(bytes)?;
            written = offset + bytes.len() as u64;
        }
        Ok(())
    })
    .map_err(|e| fail(Reason::Io(e.source)))?;
    for ((id, bytes), offset) in chunks.iter().zip(offsets) {
        let t = &mut model.tensors[*id];
        let len = bytes.len() as u64;
        t.raw_data = None;
        t.float_data.clear();
        t.double_data.clear();
        t.int32_data.clear();
        t.int64_data.clear();
        t.uint64_data.clear();
        t.external_data =
            vec![pair("location", location), pair("offset", &offset.to_string()), pair("length", &len.to_string())];
        t.data_location = Some(DATA_LOCATION_EXTERNAL);
    }
    Ok(chunks.len())
}

/// Turns every initializer and attribute tensor (in every graph) of at least `threshold`
/// bytes whose bytes lie inside `source` (the mapped bytes of the binary model it was decoded
/// from) into an external reference to that very file: `location` (the model's file name),
/// the offset of its bytes and their length. Those bytes are its raw data, or its floats
/// packed in one typed field ([`packed_values`]; marked to go back there when read in).
/// Nothing is written: the text then points into the original `.onnx` file, which onnx and
/// our reader load as ordinary external data. Tensors in varint fields stay inline. Returns
/// the tensors moved.
pub fn reference_source(model: &mut Model, source: &Bytes, location: &str, threshold: u64) -> Vec<TensorId> {
    let base = source.as_ptr() as usize;
    let end = base + source.len();
    // Initializers, and the tensors of attributes (a `Constant`'s value): where weights live.
    let initializers = model.graphs.iter().flat_map(|(_, g)| g.initializers.iter().copied());
    let attributes =
        model.nodes.iter().flat_map(|(_, n)| &n.attributes).flat_map(|a| a.t.iter().chain(&a.tensors).copied());
    let ids: Vec<TensorId> = initializers.chain(attributes).collect();
    let mut moved = Vec::new();
    for id in ids {
        let t = &mut model.tensors[id];
        // Raw data, or typed values packed in the file as little-endian bytes.
        let typed = t.raw_data.is_none() && packed_values(t).is_some();
        let Some(raw) = t.raw_data.as_ref().or(packed_values(t)) else { continue };
        let (start, len) = (raw.as_ptr() as usize, raw.len());
        // Zero-copy decoding leaves raw_data a slice of the source; anything else (a copy,
        // an empty tensor) cannot be referred to.
        if t.is_external() || (len as u64) < threshold || len == 0 || start < base || start + len > end {
            continue;
        }
        let offset = start - base;
        t.raw_data = None;
        if typed {
            t.float_data = Vec::new();
            t.double_data = Vec::new();
            t.packed_source = crate::ir::PackedSource::default();
            t.typed_once_embedded = true;
        }
        t.data_location_once_embedded = t.data_location;
        t.external_data =
            vec![pair("location", location), pair("offset", &offset.to_string()), pair("length", &len.to_string())];
        t.data_location = Some(DATA_LOCATION_EXTERNAL);
        moved.push(id);
    }
    moved
}

/// The file's bytes of a tensor whose only values are one packed `float_data` or
/// `double_data` field: what an outline can refer to.
pub fn packed_values(t: &Tensor) -> Option<&Bytes> {
    let packed = t.packed_source.0.as_ref()?;
    let others_empty = t.int32_data.is_empty() && t.string_data.is_empty() && t.int64_data.is_empty();
    let fits = match (t.float_data.is_empty(), t.double_data.is_empty()) {
        (false, true) => t.float_data.len() * 4 == packed.len(),
        (true, false) => t.double_data.len() * 8 == packed.len(),
        _ => false,
    };
    (others_empty && fits && t.uint64_data.is_empty() && t.raw_data.is_none()).then_some(packed)
}

fn pair(key: &str, value: &str) -> StringPair {
    StringPair { key: Some(Str::from(key)), value: Some(Str::from(value)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comps(s: &str) -> Result<Vec<PathBuf>, Reason> {
        location_components(&Str::from(s))
    }

    #[test]
    fn locations_are_relative_and_normal() {
        assert_eq!(comps("w.bin").unwrap(), vec![PathBuf::from("w.bin")]);
        assert_eq!(comps("./sub/w.bin").unwrap(), vec![PathBuf::from("sub"), PathBuf::from("w.bin")]);
        assert!(comps("a..b.bin").is_ok(), "a name containing '..' is legal");
        assert!(matches!(comps("../w.bin"), Err(Reason::Escapes(_))));
        assert!(matches!(comps("sub/../../w.bin"), Err(Reason::Escapes(_))));
        assert!(matches!(comps("sub\\..\\..\\w.bin"), Err(Reason::Escapes(_))));
        assert!(matches!(comps("/etc/passwd"), Err(Reason::Absolute)));
        assert!(matches!(comps("C:\\x.bin"), Err(Reason::Absolute)));
        assert!(matches!(comps(""), Err(Reason::EmptyLocation)));
        assert!(matches!(comps("."), Err(Reason::EmptyLocation)));
    }
}
