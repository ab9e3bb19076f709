//! The outline of a binary model: its text without the numbers of its big tensors. Every big
//! initializer is a reference into the model's own file (standard external data with offset
//! and length, which onnx's parser reads), with a comment giving its size and the range of its
//! values; on request every graph's `< … >` list comes after its nodes (`@initializers`, our
//! extension). Converting the outline back reads the referenced bytes into the model again, so
//! the round trip gives the original file.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;

use super::canonical::Layout;
use super::digest::{bytes_in_file, tensor_digest};
use crate::external;
use crate::ir::{Model, TensorId};

/// Smallest initializer, in bytes, that the outline shows by reference.
pub const DEFAULT_THRESHOLD: u64 = 1024;

/// Makes the initializers of at least `threshold` bytes of `model`, decoded without copies
/// from `source` (the bytes of the file `location` names, beside the text), references into
/// that file, and returns the layout that prints them with their digests; the `< … >` lists go
/// after the nodes when `after_nodes` (`--reference-input` keeps them where onnx reads them).
pub fn refer_to_source(model: &mut Model, source: &Bytes, location: &str, threshold: u64, after_nodes: bool) -> Layout {
    // The digests are made while the numbers are at hand, for the tensors about to move.
    let mut digests: HashMap<TensorId, String> = model
        .tensors
        .iter()
        .filter(|(_, t)| bytes_in_file(t).is_some_and(|r| r.len() as u64 >= threshold))
        .filter_map(|(id, t)| Some((id, tensor_digest(t)?)))
        .collect();
    let moved: HashSet<TensorId> = external::reference_source(model, source, location, threshold).into_iter().collect();
    digests.retain(|id, _| moved.contains(id));
    Layout { initializers_after_nodes: after_nodes, digests }
}
