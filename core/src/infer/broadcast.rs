//! Multidirectional (numpy) broadcasting of shapes, with onnx's rules for symbolic dims:
//! a concrete dim other than 1 wins; one symbolic dim among ones is kept; different
//! symbolic dims give an unknown dim, but for `s` against `min(K, s)` (K ≥ 1, what our
//! Slice gives a table cut to a symbolic length): the two agree when s ≤ K, and when
//! s > K they broadcast only if K is 1, so the result is `s` whenever the model runs.

use crate::ir::{DimValue, Dimension};

/// The broadcast shape, or `None` when some rank is unknown or two concrete dims clash.
pub fn broadcast(shapes: &[&[Dimension]]) -> Option<Vec<Dimension>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = Vec::with_capacity(rank);
    for axis in 0..rank {
        let mut value = 1i64;
        let mut symbolic: Option<&Dimension> = None;
        let mut other_symbolic: Option<&Dimension> = None;
        let mut symbolic_count = 0;
        for shape in shapes {
            let Some(index) = (axis + shape.len()).checked_sub(rank) else { continue };
            let d = &shape[index];
            match &d.value {
                Some(DimValue::Value(v)) => {
                    if *v != 1 {
                        if value != 1 && value != *v {
                            return None;
                        }
                        value = *v;
                    }
                }
                other => match symbolic {
                    None => {
                        symbolic = Some(d);
                        symbolic_count = 1;
                    }
                    Some(first) if first.value.as_ref() != other.as_ref() => {
                        if other_symbolic.is_none_or(|o| o.value.as_ref() != other.as_ref()) {
                            symbolic_count += 1;
                            other_symbolic = Some(d);
                        }
                    }
                    Some(_) => {}
                },
            }
        }
        out.push(if value != 1 || symbolic_count == 0 {
            super::types::dim(value)
        } else if symbolic_count == 1 {
            Dimension { value: symbolic.and_then(|d| d.value.clone()), denotation: None }
        } else if let (2, Some(a), Some(b)) = (symbolic_count, symbolic, other_symbolic)
            && let Some(s) = bounded_pair(a, b)
        {
            s.clone()
        } else {
            Dimension::default()
        });
    }
    Some(out)
}

/// Of `s` and `min(K, s)` (K ≥ 1, either order), `s`.
fn bounded_pair<'d>(a: &'d Dimension, b: &'d Dimension) -> Option<&'d Dimension> {
    let name = |d: &'d Dimension| match &d.value {
        Some(DimValue::Param(p)) => p.as_str(),
        _ => None,
    };
    let bounds = |min: &str, s: &str| {
        let inner = min.strip_prefix("min(")?.strip_suffix(')')?;
        let (k, symbol) = inner.split_once(", ")?;
        (k.parse::<i64>().ok()? >= 1 && symbol == s).then_some(())
    };
    let (x, y) = (name(a)?, name(b)?);
    if bounds(x, y).is_some() {
        Some(b)
    } else if bounds(y, x).is_some() {
        Some(a)
    } else {
        None
    }
}
