//! Einsum: the equation's letters name axes; every output element sums the product of the
//! operands over the letters the output does not keep. `...` stands for the same leading
//! axes in every operand (broadcasting where one has size 1).

use std::collections::BTreeMap;

use super::{Ctx, Kernel, count, input, one};
use crate::error::{KernelError, bad_attribute, bad_input, limit};
use crate::kernels::common::numeric_like;
use crate::value::Value;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Einsum" => einsum,
        _ => return None,
    };
    Some(k)
}

fn einsum(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let equation: String = ctx
        .string("equation")
        .ok_or(bad_attribute!("equation is required"))?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let operands: Vec<_> = (0..inputs.len()).map(|i| input(inputs, i)).collect::<Result<_, _>>()?;
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l.to_owned(), Some(r.to_owned())),
        None => (equation.clone(), None),
    };
    // Axes are named by letters; anything else (digits, say) would also clash with the names
    // the ellipsis's axes get below.
    let named = |part: &str| part.replace("...", "").chars().all(|c| c.is_ascii_alphabetic());
    if !lhs.split(',').chain(rhs.as_deref()).all(named) {
        return Err(bad_attribute!("equation '{equation}': axes must be named by letters (with '...' and ',')"));
    }
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != operands.len() {
        return Err(bad_attribute!("the equation has {} operands, the node {}", terms.len(), operands.len()));
    }
    // Each operand's axes as letters; `...` becomes characters no equation holds (the
    // private-use area), right-aligned across operands.
    let ellipsis_rank = terms
        .iter()
        .zip(&operands)
        .filter(|(t, _)| t.contains("..."))
        .map(|(t, o)| o.rank().saturating_sub(t.replace("...", "").len()))
        .max()
        .unwrap_or(0);
    let ellipsis: Vec<char> = (0..ellipsis_rank)
        .map(|i| {
            u32::try_from(i).ok().and_then(|i| char::from_u32(0xF0000 + i)).ok_or(limit!("too many axes under '...'"))
        })
        .collect::<Result<_, _>>()?;
    let mut axes: Vec<Vec<char>> = Vec::new();
    let mut sizes: BTreeMap<char, usize> = BTreeMap::new();
    for (term, operand) in terms.iter().zip(&operands) {
        let mut letters = Vec::new();
        for part in term.split("...").enumerate() {
            if part.0 > 0 {
                let own = operand.rank().saturating_sub(term.replace("...", "").len());
                letters.extend_from_slice(&ellipsis[ellipsis_rank - own..]);
            }
            letters.extend(part.1.chars());
        }
        if letters.len() != operand.rank() {
            return Err(bad_input!("term '{term}' does not match an operand of rank {}", operand.rank()));
        }
        for (&c, &d) in letters.iter().zip(&operand.shape) {
            let size = sizes.entry(c).or_insert(d);
            if *size == 1 {
                *size = d;
            } else if d != 1 && d != *size {
                return Err(bad_input!("axis '{c}' has sizes {size} and {d}"));
            }
        }
        axes.push(letters);
    }
    let output: Vec<char> = match rhs {
        Some(r) => {
            let mut out: Vec<char> = Vec::new();
            for (i, part) in r.split("...").enumerate() {
                if i > 0 {
                    out.extend_from_slice(&ellipsis);
                }
                out.extend(part.chars());
            }
            out
        }
        None => {
            let mut once: Vec<char> = sizes
                .keys()
                .copied()
                .filter(|c| c.is_alphabetic() && axes.iter().flatten().filter(|&&x| x == *c).count() == 1)
                .collect();
            once.sort_unstable();
            ellipsis.iter().copied().chain(once).collect()
        }
    };
    let mut summed: Vec<char> = sizes.keys().copied().filter(|c| !output.contains(c)).collect();
    // The ellipsis's axes first (the order the sums are taken in).
    summed.sort_by_key(|c| (!ellipsis.contains(c), *c));
    let out_shape: Vec<usize> = output
        .iter()
        .map(|c| sizes.get(c).copied().ok_or_else(|| bad_attribute!("output axis '{c}' is not in any operand")))
        .collect::<Result<_, _>>()?;
    let out_count = count(&out_shape)?;
    let sum_shape: Vec<usize> = summed.iter().map(|c| sizes[c]).collect();
    let sum_count = count(&sum_shape)?;
    ctx.check_elements(out_count.saturating_mul(sum_count.max(1)))?;
    let values: Vec<Vec<f64>> = operands.iter().map(|o| o.to_f64s()).collect::<Result<_, _>>()?;
    let strides: Vec<Vec<usize>> = operands.iter().map(|o| crate::broadcast::strides(&o.shape)).collect();
    let mut result = vec![0.0; out_count];
    let mut position: BTreeMap<char, usize> = BTreeMap::new();
    for (o, slot) in result.iter_mut().enumerate() {
        // An empty summed axis: the sum of nothing.
        if sum_count == 0 {
            break;
        }
        let mut rest = o;
        for (c, &d) in output.iter().zip(&out_shape).rev() {
            position.insert(*c, rest % d);
            rest /= d;
        }
        let mut sum = 0.0;
        for s in 0..sum_count {
            let mut rest = s;
            for (c, &d) in summed.iter().zip(&sum_shape).rev() {
                position.insert(*c, rest % d);
                rest /= d;
            }
            let mut product = 1.0;
            for (k, letters) in axes.iter().enumerate() {
                let offset: usize = letters
                    .iter()
                    .enumerate()
                    .map(|(a, c)| if operands[k].shape[a] == 1 { 0 } else { position[c] * strides[k][a] })
                    .sum();
                product *= values[k][offset];
            }
            sum += product;
        }
        *slot = sum;
    }
    one(numeric_like(operands[0].data_type(), out_shape, result)?)
}
