//! Tensors (semantics spec §1.7): element type, dims, exactly one data field holding enough
//! values, and external data under the path rules of §1.9; sparse tensors and their indices.

use super::Checker;
use crate::diagnostic::{Anchor, Diagnostic};
use crate::external;
use crate::ir::{DataType, SparseTensor, Str, Tensor, TensorId, TypedField};

/// The data fields a tensor fills: name and entry count (bytes for `raw_data`).
fn filled_fields(t: &Tensor) -> Vec<(&'static str, usize)> {
    [
        ("float_data", t.float_data.len()),
        ("int32_data", t.int32_data.len()),
        ("string_data", t.string_data.len()),
        ("int64_data", t.int64_data.len()),
        ("raw_data", t.raw_data.as_ref().map_or(0, |r| r.len())),
        ("double_data", t.double_data.len()),
        ("uint64_data", t.uint64_data.len()),
    ]
    .into_iter()
    .filter(|&(_, len)| len > 0)
    .collect()
}

fn field_names(fields: &[(&str, usize)]) -> String {
    fields.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
}

/// The typed field a type's values go in, and how many entries `n` elements need there.
fn typed_requirement(ty: DataType, n: u64) -> Option<(&'static str, u64)> {
    let field = match ty.typed_field() {
        TypedField::None => return None,
        TypedField::FloatData => "float_data",
        TypedField::Int32Data => "int32_data",
        TypedField::StringData => "string_data",
        TypedField::Int64Data => "int64_data",
        TypedField::DoubleData => "double_data",
        TypedField::Uint64Data => "uint64_data",
    };
    let needed = match ty {
        DataType::Complex64 | DataType::Complex128 => n.saturating_mul(2),
        // Sub-byte types fill one byte of each int32 entry: two 4-bit or four 2-bit values,
        // as onnx.helper.make_tensor packs them and onnxruntime reads them (onnx's checker
        // asks only for the bits' worth, 8 or 16 values an entry, so it lets short ones pass).
        _ if ty.bits() == 4 => n.div_ceil(2),
        _ if ty.bits() == 2 => n.div_ceil(4),
        _ => n,
    };
    Some((field, needed))
}

impl Checker<'_> {
    pub(super) fn tensor(&mut self, id: TensorId, anchor: Anchor) {
        let t = &self.model.tensors[id];
        let name = t.name.as_ref().map_or_else(|| "<unnamed>".to_owned(), Str::escaped);
        let Some(code) = t.data_type.filter(|&c| c != 0) else {
            self.error("missing-data-type", anchor, format!("tensor '{name}' has no element type"));
            return;
        };
        let fields = filled_fields(t);
        if t.is_external() {
            if !fields.is_empty() {
                self.error(
                    "external-with-data",
                    anchor,
                    format!("tensor '{name}' is stored externally but also holds {}", field_names(&fields)),
                );
            }
            self.external(t, &name, anchor);
            return;
        }
        if let Some(&d) = t.dims.iter().find(|&&d| d < 0) {
            self.error("negative-dimension", anchor, format!("tensor '{name}' has a negative dimension ({d})"));
            return;
        }
        let Some(n) = t.element_count().filter(|&n| i64::try_from(n).is_ok()) else {
            self.error("dimension-overflow", anchor, format!("the dimensions of tensor '{name}' multiply past 2^63"));
            return;
        };
        if n == 0 {
            if !fields.is_empty() {
                self.error("tensor-data-count", anchor, format!("tensor '{name}' has no elements but holds data"));
            }
            return;
        }
        if fields.len() != 1 {
            let message = if fields.is_empty() {
                format!("tensor '{name}' has {n} elements but no data")
            } else {
                format!("tensor '{name}' holds data in several fields ({})", field_names(&fields))
            };
            self.error("tensor-data-count", anchor, message);
            return;
        }
        let Some(ty) = DataType::from_code(code) else {
            self.error("unknown-data-type", anchor, format!("tensor '{name}' has an unknown element type ({code})"));
            return;
        };
        let (filled, have) = (fields[0].0, fields[0].1 as u64);
        if filled == "raw_data" {
            let Some(needed) = ty.raw_byte_size(n) else {
                self.error("raw-data-not-allowed", anchor, format!("tensor '{name}' of type {ty} cannot use raw_data"));
                return;
            };
            if have < needed {
                self.error(
                    "tensor-data-short",
                    anchor,
                    format!("tensor '{name}' needs {needed} bytes of raw_data for {n} {ty} values, it has {have}"),
                );
            } else if have > needed {
                self.data_too_long(
                    id,
                    anchor,
                    format!("tensor '{name}' holds {have} bytes of raw_data; its {n} {ty} values take {needed}"),
                );
            }
            return;
        }
        let Some((field, needed)) = typed_requirement(ty, n) else {
            self.error("unknown-data-type", anchor, format!("tensor '{name}' has type {ty}, which holds no values"));
            return;
        };
        if filled != field {
            self.error(
                "tensor-data-field",
                anchor,
                format!("{ty} values of tensor '{name}' belong in {field}, not {filled}"),
            );
            return;
        }
        if have < needed {
            self.error(
                "tensor-data-short",
                anchor,
                format!("tensor '{name}' needs {needed} entries in {field} for {n} {ty} values, it has {have}"),
            );
        } else if have > needed {
            self.data_too_long(
                id,
                anchor,
                format!("tensor '{name}' holds {have} entries in {field}; its {n} {ty} values take {needed}"),
            );
        }
    }

    /// More data than the dims hold. onnx's checker lets it pass (its inference refuses it
    /// only where it parses a constant input), but onnxruntime refuses to load a model
    /// whose node reads such a tensor: an error then. An initializer nothing reads,
    /// which onnxruntime drops unread, keeps the model loadable: a warning.
    fn data_too_long(&mut self, id: TensorId, anchor: Anchor, message: String) {
        let unread_initializer = matches!(anchor, Anchor::Initializer(..)) && !self.read_anywhere(id);
        if unread_initializer {
            self.warning(
                "tensor-data-long",
                anchor,
                format!("{message} (the initializer is unread, so the runtimes load the model)"),
            );
        } else {
            self.error("tensor-data-long", anchor, format!("{message}; onnxruntime refuses to load it"));
        }
    }

    /// Whether some node of the model reads the tensor's name, or some graph outputs it.
    /// The names are gathered in one pass, the first time a tensor holds too much data.
    fn read_anywhere(&self, id: TensorId) -> bool {
        let Some(name) = &self.model.tensors[id].name else { return false };
        let read = self.read_names.get_or_init(|| {
            let inputs = self.model.nodes.iter().flat_map(|(_, node)| node.inputs.iter().cloned());
            let outputs = self.model.graphs.iter().flat_map(|(_, g)| g.outputs.iter().filter_map(|o| o.name.clone()));
            inputs.chain(outputs).collect()
        });
        read.contains(name)
    }

    /// An external tensor: a location under the path rules, and, when the model directory
    /// is known, a regular file in it that holds the tensor's bytes.
    fn external(&mut self, t: &Tensor, name: &str, anchor: Anchor) {
        // Every `location` entry must keep to the rules, as onnx's checker resolves each: a
        // second one (which the loader would use) cannot slip past a harmless first.
        let locations = t.external_data.iter().filter(|e| e.key.as_ref().is_some_and(|k| k == "location"));
        for location in locations.clone().take(locations.count().saturating_sub(1)) {
            if let Some(value) = &location.value
                && let Err(reason) = external::location_components(value)
            {
                let e = external::ExternalDataError { tensor: name.to_owned(), location: value.escaped(), reason };
                self.error("external-data", anchor, e.to_string());
            }
        }
        let result = external::parse_ref(t).and_then(|r| {
            external::location_components(&r.location).map_err(|reason| external::ExternalDataError {
                tensor: name.to_owned(),
                location: r.location.escaped(),
                reason,
            })
        });
        let result = match (result, self.external_reader.as_mut()) {
            (Ok(_), Some(reader)) => reader.read(t).map(drop),
            (other, _) => other.map(drop),
        };
        if let Err(e) = result {
            // A side file that is missing (or refused) fails every tensor in it the same way:
            // one finding names the file, and says how many more tensors it fails.
            let group = format!("{}\0{}", e.location, e.reason);
            let location = e.location.clone();
            let more = move || format!("tensors that refer to '{location}' fail the same way");
            self.diagnostics.push_grouped(Diagnostic::error("external-data", anchor, e.to_string()), group, more);
        }
    }

    pub(super) fn sparse_tensor(&mut self, s: &SparseTensor, anchor: Anchor) {
        let model = self.model;
        let Some(values) = s.values else {
            self.error("sparse-tensor", anchor, "the sparse tensor has no values");
            return;
        };
        self.tensor(values, anchor);
        let v = &model.tensors[values];
        if v.dims.len() != 1 {
            self.error("sparse-tensor", anchor, format!("sparse values must be rank 1, not rank {}", v.dims.len()));
            return;
        }
        let nnz = v.dims[0].max(0) as u64;
        if s.dims.is_empty() || s.dims.iter().any(|&d| d <= 0) {
            self.error("sparse-tensor", anchor, "a sparse tensor needs a rank of at least 1 and positive dimensions");
            return;
        }
        let Some(indices) = s.indices else {
            if nnz > 0 {
                self.error("sparse-tensor", anchor, "the sparse tensor has values but no indices");
            }
            return;
        };
        self.tensor(indices, anchor);
        let ix = &model.tensors[indices];
        if ix.data_type != Some(DataType::Int64.code()) {
            self.error("sparse-tensor", anchor, "sparse indices must be int64");
            return;
        }
        // Externally stored indices are checked when they are read.
        let Some(coords) = crate::ir::tensor_data::int_values(ix) else {
            return;
        };
        let dense: Vec<u64> = s.dims.iter().map(|&d| d as u64).collect();
        let rank = dense.len();
        let linear: Vec<u64> = match ix.dims.len() {
            1 => {
                if ix.dims[0] as u64 != nnz {
                    self.error("sparse-tensor", anchor, format!("{} indices for {nnz} values", ix.dims[0]));
                    return;
                }
                coords.iter().map(|&c| c as u64).collect()
            }
            2 => {
                if ix.dims[0] as u64 != nnz || ix.dims[1] as usize != rank {
                    self.error(
                        "sparse-tensor",
                        anchor,
                        format!("indices of shape [{}, {}] do not fit [{nnz}, {rank}]", ix.dims[0], ix.dims[1]),
                    );
                    return;
                }
                let mut out = Vec::with_capacity(nnz as usize);
                for row in coords.chunks(rank.max(1)) {
                    let mut linear = 0u64;
                    for (&c, &d) in row.iter().zip(&dense) {
                        if c < 0 || c as u64 >= d {
                            self.error("sparse-tensor", anchor, format!("sparse index {c} is out of range 0..{d}"));
                            return;
                        }
                        linear = linear.saturating_mul(d).saturating_add(c as u64);
                    }
                    out.push(linear);
                }
                out
            }
            r => {
                self.error("sparse-tensor", anchor, format!("sparse indices must be rank 1 or 2, not {r}"));
                return;
            }
        };
        let size = dense.iter().fold(1u64, |a, &d| a.saturating_mul(d));
        if let Some(&bad) = linear.iter().find(|&&l| l >= size) {
            self.error("sparse-tensor", anchor, format!("sparse index {bad} is out of range 0..{size}"));
            return;
        }
        if linear.windows(2).any(|w| w[0] >= w[1]) {
            self.error("sparse-tensor", anchor, "sparse indices are not in strictly increasing order");
        }
    }
}
