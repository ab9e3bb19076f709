//! String operators and TfIdfVectorizer.

use super::{Outputs, Rule};
use crate::infer::broadcast::broadcast;
use crate::infer::types::tensor_of;
use crate::infer::types::{dim, unknown_dim};
use crate::ir::DataType;

const STRING: Option<i32> = Some(DataType::String as i32);

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        "StringConcat" => |ctx| {
            let dims = match (ctx.dims(0), ctx.dims(1)) {
                (Some(a), Some(b)) => broadcast(&[a, b]),
                _ => None,
            };
            Some(Outputs::one(tensor_of(STRING, dims)))
        },
        "RegexFullMatch" => |ctx| Some(Outputs::one(tensor_of(Some(DataType::Bool as i32), ctx.dims_vec(0)))),
        // Substrings gain an axis as long as the most split element needs; counts keep the
        // input's shape.
        "StringSplit" => |ctx| {
            let dims = ctx.dims_vec(0)?;
            let mut substrings = dims.clone();
            substrings.push(unknown_dim());
            Some(Outputs {
                types: smallvec::smallvec![
                    Some(tensor_of(STRING, Some(substrings))),
                    Some(tensor_of(Some(DataType::Int64 as i32), Some(dims))),
                ],
                values: Vec::new(),
            })
        },
        // Stop words drop elements: [C] → [?], [1, C] → [1, ?].
        "StringNormalizer" => |ctx| {
            let dims = ctx.dims(0).and_then(|d| match d.len() {
                1 => Some(vec![unknown_dim()]),
                2 => Some(vec![d[0].clone(), unknown_dim()]),
                _ => None,
            });
            Some(Outputs::one(tensor_of(STRING, dims)))
        },
        // The last axis becomes the n-gram vocabulary: one past the largest output index.
        "TfIdfVectorizer" => |ctx| {
            let width = ctx.ints("ngram_indexes").and_then(|i| i.iter().max()).and_then(|&m| m.checked_add(1)).map(dim);
            let dims = ctx.dims(0).and_then(|d| match (d.len(), width) {
                (1, Some(w)) => Some(vec![w]),
                (2, Some(w)) => Some(vec![d[0].clone(), w]),
                _ => None,
            });
            Some(Outputs::one(tensor_of(Some(DataType::Float as i32), dims)))
        },
        _ => return None,
    };
    Some(rule)
}
