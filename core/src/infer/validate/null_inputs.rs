//! Inputs onnx's inference has no type, or no whole type, for. An If gives a value no type
//! when both branches make it with an operator onnx has no schema for and declare none
//! (subgraph outputs need none): onnx's If inference then leaves the output as its graph
//! declares it, untyped when nothing does. Most inference functions fail a node that reads
//! an untyped value ("Input 0 expected to have type but instead is null"); some never read
//! that input's type. A declaration without its parts (a tensor of no element type, a
//! sequence or optional of no element, a map of no key or value type) fails every reader,
//! in its inference or in the type-constraint check after it. Both were measured, operator
//! version by operator version and input by input, on onnx's node tests and one-node models
//! of every other operator version (`core/schemas/gen_null_inputs.py`), and
//! `core/schemas/null_inputs.tsv` records them.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::ir::Node;

/// What onnx's inference does with a node, as a table row says.
#[derive(Clone, Copy, PartialEq)]
enum Said {
    Fails,
    Tolerates,
    /// The tests disagree: the attributes or the other inputs decide.
    Depends,
}

/// One row, by what onnx's inference knows of the input: nothing; a declared type lacking
/// parts; a declared type of no kind (an empty `TypeProto`); a declared sequence of a type of
/// no kind. The second and fourth columns say the same on every row (the test below), so
/// the second judges both.
type Row = [Option<Said>; 4];

pub(crate) use crate::infer::types::OnnxKnows as Known;

/// The table: (domain, operator, schema version, input) to its row.
fn table() -> &'static HashMap<(String, String, i64, usize), Row> {
    static TABLE: OnceLock<HashMap<(String, String, i64, usize), Row>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let said = |s: Option<&str>| match s? {
            "fails" => Some(Said::Fails),
            "tolerates" => Some(Said::Tolerates),
            "depends" => Some(Said::Depends),
            _ => None,
        };
        include_str!("../../../schemas/null_inputs.tsv")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|line| {
                let mut cols = line.split('\t');
                let (domain, op) = (cols.next()?, cols.next()?);
                let (since, input) = (cols.next()?.parse().ok()?, cols.next()?.parse().ok()?);
                let row = [said(cols.next()), said(cols.next()), said(cols.next()), said(cols.next())];
                Some(((domain.to_owned(), op.to_owned(), since, input), row))
            })
            .collect()
    })
}

/// An operator version's input, as the table is keyed; the inputs of a variadic last
/// formal parameter (from input `variadic_from`) are judged alike: one past those the
/// table has is judged as the last it has.
pub(crate) struct Input<'a> {
    pub domain: &'a str,
    pub op: &'a str,
    pub since: i64,
    pub index: usize,
    pub variadic_from: Option<usize>,
}

fn row(input: &Input<'_>) -> Option<Row> {
    let at = |i: usize| table().get(&(input.domain.to_owned(), input.op.to_owned(), input.since, i)).copied();
    let i = input.index;
    at(i).or_else(|| (input.variadic_from? < i).then(|| (input.variadic_from?..i).rev().find_map(at)).flatten())
}

/// Whether onnx fails `node` reading `input`, of which its inference knows only `known`.
/// Where the table does not tell: no for an untyped input or one of no kind, yes for a
/// type lacking parts (every measured row says so: the type-constraint check cannot name
/// such a type). Of the rows where it depends, those decided by an attribute or the outputs
/// asked for are decided here (read in onnx's inference functions); the rest depend on
/// shapes.
pub(crate) fn fails(input: &Input<'_>, node: &Node, known: Known) -> bool {
    let column = match known {
        Known::Untyped => 0,
        Known::Partly => 1,
        Known::NoKind => 2,
    };
    match row(input).and_then(|row| row[column]) {
        Some(Said::Fails) => true,
        None => known == Known::Partly,
        Some(Said::Tolerates) => false,
        Some(Said::Depends) => match (known, input.domain, input.op, input.since, input.index) {
            // The running mean and variance give the types of outputs 1 and 2, made in
            // training mode only.
            (_, "", "BatchNormalization", 14 | 15, i @ (3 | 4)) => node.outputs.len() > i - 2,
            // The output's element type comes from `dtype` when it is given.
            (Known::Untyped, "", "Bernoulli", _, 0) => node.attribute("dtype").is_none(),
            // Without `axis`, the output is a flat tensor made with no element type.
            (Known::NoKind, "", "Compress" | "Unique", _, 0) => node.attribute("axis").is_none(),
            // The attention scores (output 3) are made with no element type.
            (Known::NoKind, "", "Attention", _, 0 | 2 | 4 | 5) => node.has_output(3),
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    /// A declared sequence of a type of no kind is judged as a type lacking parts: the
    /// table must say the same of both on every row.
    #[test]
    fn a_sequence_of_no_kind_fails_where_a_type_lacking_parts_does() {
        assert!(super::table().len() > 1000);
        for (key, row) in super::table() {
            assert!(row[3] == row[1], "{key:?}");
        }
    }
}
