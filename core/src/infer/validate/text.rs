//! The string operators (the family of [`crate::infer::ops`]'s `text` module): what onnx's
//! inference functions fail them for (`onnx/defs/text/defs.cc`, `nn/defs.cc`): the input
//! ranks of StringNormalizer and TfIdfVectorizer, and the latter's n-gram indexes.

use super::{Judge, Violations, ints, shown};
use crate::diagnostic::Anchor;
use crate::infer::types::known_dim;

/// The string operators' rules, under their keys ([`super::DEFAULT_DOMAIN`]).
pub(super) const VALIDATORS: super::Registrations =
    &[("StringNormalizer", 1, string_normalizer), ("TfIdfVectorizer", 1, tf_idf_vectorizer)];

/// An input of dims [C] or [1, C], the 1 known.
fn string_normalizer(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let n = judge.n;
    let dims = |i: usize| judge.dims(i);
    if let Some(d) = dims(0)
        && !(d.len() == 1 || (d.len() == 2 && known_dim(&d[0]) == Some(1)))
    {
        let message = format!("the input of StringNormalizer must have dims [C] or [1, C], it has [{}]", shown(d));
        v.error("input-rank", Anchor::NodeInput(n, 0), message);
    }
}

fn tf_idf_vectorizer(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = |i: usize| judge.dims(i);
    v.rank_within(0, dims(0), 1, 2, "the input");
    if let Some(indexes) = ints(node, "ngram_indexes")
        && (indexes.is_empty() || indexes.iter().any(|&i| i < 0))
    {
        let at = v.attribute_anchor(node, "ngram_indexes");
        v.error("invalid-attribute-value", at, "ngram_indexes of TfIdfVectorizer must be non-empty, none negative");
    }
}
