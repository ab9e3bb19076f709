//! Einsum: the output shape from the equation's labels.

use super::{Ctx, Outputs, Rule};
use crate::infer::types::tensor_of;
use crate::ir::Dimension;

pub fn rule(op: &str) -> Option<Rule> {
    (op == "Einsum").then_some(einsum)
}

fn einsum(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let equation: String = ctx.string("equation")?.chars().filter(|c| !c.is_whitespace()).collect();
    let shapes: Option<Vec<&[Dimension]>> = (0..ctx.node.inputs.len()).map(|i| ctx.dims(i)).collect();
    let dims = shapes.and_then(|s| output_shape(&equation, &s));
    Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
}

/// What each label and the ellipsis stand for, read from the operands' shapes.
#[derive(Default)]
struct Labels {
    /// Label, its size, and how many times the left side names it.
    sizes: Vec<(char, Dimension, usize)>,
    /// The dims the ellipsis covers (the widest operand's, broadcast where one is 1).
    ellipsis: Vec<Dimension>,
}

impl Labels {
    fn see(&mut self, label: char, d: &Dimension) {
        match self.sizes.iter_mut().find(|(l, _, _)| *l == label) {
            Some((_, size, count)) => {
                if size.value.is_none() {
                    *size = d.clone();
                }
                *count += 1;
            }
            None => self.sizes.push((label, d.clone(), 1)),
        }
    }

    fn see_ellipsis(&mut self, dims: &[Dimension]) {
        if self.ellipsis.len() < dims.len() {
            let mut wider = dims.to_vec();
            let offset = dims.len() - self.ellipsis.len();
            for (i, d) in self.ellipsis.iter().enumerate() {
                wider[offset + i] = broadcast_one(&wider[offset + i], d);
            }
            self.ellipsis = wider;
        } else {
            let offset = self.ellipsis.len() - dims.len();
            for (i, d) in dims.iter().enumerate() {
                self.ellipsis[offset + i] = broadcast_one(&self.ellipsis[offset + i], d);
            }
        }
    }

    fn size(&self, label: char) -> Option<Dimension> {
        self.sizes.iter().find(|(l, _, _)| *l == label).map(|(_, d, _)| d.clone())
    }
}

fn broadcast_one(a: &Dimension, b: &Dimension) -> Dimension {
    use crate::ir::DimValue::Value;
    match (&a.value, &b.value) {
        (Some(Value(1)), _) => b.clone(),
        (_, Some(Value(1))) | (Some(_), None) => a.clone(),
        _ => b.clone(),
    }
}

fn output_shape(equation: &str, shapes: &[&[Dimension]]) -> Option<Vec<Dimension>> {
    let (left, right) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation, None),
    };
    let terms: Vec<&str> = left.split(',').collect();
    if terms.len() != shapes.len() {
        return None;
    }
    let mut labels = Labels::default();
    for (term, shape) in terms.iter().zip(shapes) {
        let letters = term.chars().filter(char::is_ascii_alphabetic).count();
        let (before, after) = match term.split_once("...") {
            Some((b, a)) => (b, Some(a)),
            None => (*term, None),
        };
        let covered = match after {
            Some(_) => shape.len().checked_sub(letters)?,
            None if shape.len() == letters => 0,
            None => return None,
        };
        let mut at = 0;
        for c in before.chars().filter(char::is_ascii_alphabetic) {
            labels.see(c, &shape[at]);
            at += 1;
        }
        if let Some(after) = after {
            labels.see_ellipsis(&shape[at..at + covered]);
            at += covered;
            for c in after.chars().filter(char::is_ascii_alphabetic) {
                labels.see(c, &shape[at]);
                at += 1;
            }
        }
    }
    let mut out = Vec::new();
    match right {
        Some(right) => {
            let (before, after) = match right.split_once("...") {
                Some((b, a)) => (b, Some(a)),
                None => (right, None),
            };
            for c in before.chars().filter(char::is_ascii_alphabetic) {
                out.push(labels.size(c)?);
            }
            if let Some(after) = after {
                out.extend(labels.ellipsis.iter().cloned());
                for c in after.chars().filter(char::is_ascii_alphabetic) {
                    out.push(labels.size(c)?);
                }
            }
        }
        // Implicit output: the ellipsis, then the labels named once, in alphabetical order.
        None => {
            out.extend(labels.ellipsis.iter().cloned());
            let mut once: Vec<&(char, Dimension, usize)> = labels.sizes.iter().filter(|(_, _, n)| *n == 1).collect();
            once.sort_by_key(|(l, _, _)| *l);
            out.extend(once.into_iter().map(|(_, d, _)| d.clone()));
        }
    }
    Some(out)
}
