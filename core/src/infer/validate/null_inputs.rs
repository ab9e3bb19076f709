//! Inputs onnx's inference has no type for. An If gives a value no type when both branches
//! make it with an operator onnx has no schema for and declare none (subgraph outputs need
//! none), and nothing else declares it: onnx's If inference then leaves the output untyped,
//! and most inference functions fail a node that reads it ("Input 0 expected to have type
//! but instead is null"). Which do, operator version by operator version and input by
//! input, was measured on onnx's node tests (`core/schemas/gen_null_inputs.py`), and
//! `core/schemas/null_inputs.tsv` records it.

use std::collections::HashMap;
use std::sync::OnceLock;

/// The table: (domain, operator, schema version, input) to whether onnx's inference fails
/// with no type for that input (`depends` rows, where the attributes decide, are left out).
fn table() -> &'static HashMap<(String, String, i64, usize), bool> {
    static TABLE: OnceLock<HashMap<(String, String, i64, usize), bool>> = OnceLock::new();
    TABLE.get_or_init(|| {
        include_str!("../../../schemas/null_inputs.tsv")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|line| {
                let mut cols = line.split('\t');
                let (domain, op) = (cols.next()?, cols.next()?);
                let (since, input) = (cols.next()?.parse().ok()?, cols.next()?.parse().ok()?);
                let fails = match cols.next()? {
                    "fails" => true,
                    "tolerates" => false,
                    _ => return None,
                };
                Some(((domain.to_owned(), op.to_owned(), since, input), fails))
            })
            .collect()
    })
}

/// Whether onnx's inference of operator `op` of `domain` (schema version `since`) fails a
/// node with no type for input `input`; `false` where the table does not tell. The inputs
/// of a variadic last formal parameter (from input `variadic_from`) are judged alike: one
/// past those the table has is judged as the last it has.
pub(crate) fn fails_untyped(domain: &str, op: &str, since: i64, input: usize, variadic_from: Option<usize>) -> bool {
    let row = |i: usize| table().get(&(domain.to_owned(), op.to_owned(), since, i)).copied();
    row(input)
        .or_else(|| (variadic_from? < input).then(|| (variadic_from?..input).rev().find_map(row)).flatten())
        .unwrap_or(false)
}
