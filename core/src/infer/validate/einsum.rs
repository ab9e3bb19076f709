//! Einsum (the family of [`crate::infer::ops`]'s `einsum` module): what onnx's inference
//! function fails it for (`onnx/defs/math/defs.cc`): an equation whose terms do not match
//! the inputs and their ranks.

use super::{Judge, Violations};
use crate::diagnostic::Anchor;
use crate::ir::Dimension;

/// Einsum's rule, under its key ([`super::DEFAULT_DOMAIN`]).
pub(super) const VALIDATORS: super::Registrations = &[("Einsum", 1, einsum)];

/// Einsum's equation against its inputs, judged (as onnx judges it) when every input's
/// rank is known: a term per input, each with one letter per axis (at most as many as the
/// axes where the term has an ellipsis).
fn einsum(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = &|i: usize| judge.dims(i);
    let Some(equation) = node.attribute("equation").and_then(|a| a.s.as_ref()).and_then(|s| s.as_str()) else {
        return;
    };
    let Some(ranks) = (0..node.inputs.len()).map(|i| dims(i).map(<[Dimension]>::len)).collect::<Option<Vec<_>>>()
    else {
        return;
    };
    let left = equation.split("->").next().unwrap_or_default();
    let terms: Vec<&str> = left.split(',').collect();
    if terms.len() != ranks.len() {
        let message = format!(
            "Einsum's equation '{equation}' names {} operands, the node has {} inputs",
            terms.len(),
            ranks.len()
        );
        v.error("input-count", Anchor::Node(v.n), message);
        return;
    }
    // How many axes the ellipsis stands for, in the first term that has one.
    let mut ellipsis: Option<(usize, usize)> = None;
    for (i, (term, &rank)) in terms.iter().zip(&ranks).enumerate() {
        let letters = term.chars().filter(char::is_ascii_alphabetic).count();
        let fits = if term.contains("...") { rank >= letters } else { rank == letters };
        if !fits {
            let message =
                format!("Einsum's term '{}' of input {i} names {letters} axes, the input has rank {rank}", term.trim());
            v.error("input-rank", Anchor::NodeInput(v.n, i), message);
            return;
        }
        if term.contains("...") {
            let count = rank - letters;
            match ellipsis {
                Some((first, axes)) if axes != count => {
                    let message = format!(
                        "the ellipsis of Einsum stands for {axes} axes in input {first} but {count} in input {i}: it must stand for as many in every term"
                    );
                    v.error("incompatible-shapes", Anchor::NodeInput(v.n, i), message);
                    return;
                }
                None => ellipsis = Some((i, count)),
                _ => {}
            }
        }
    }
    if let Some(output) = equation.split_once("->").map(|(_, right)| right)
        && let Some(missing) = output.chars().find(|c| c.is_ascii_alphabetic() && !left.contains(*c))
    {
        let at = v.attribute_anchor(node, "equation");
        let message =
            format!("the output of Einsum's equation '{equation}' names '{missing}', which no input term has");
        v.error("invalid-attribute-value", at, message);
    }
}
