//! Multidirectional (numpy) broadcasting of shapes, with onnx's rules for symbolic dims:
//! a concrete dim other than 1 wins; one symbolic dim among ones is kept; different
//! symbolic dims give an unknown dim.

use crate::ir::{DimValue, Dimension};

/// The broadcast shape, or `None` when some rank is unknown or two concrete dims clash.
pub fn broadcast(shapes: &[&[Dimension]]) -> Option<Vec<Dimension>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = Vec::with_capacity(rank);
    for axis in 0..rank {
        let mut value = 1i64;
        let mut symbolic: Option<&Dimension> = None;
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
                    Some(first) if first.value.as_ref() != other.as_ref() => symbolic_count += 1,
                    Some(_) => {}
                },
            }
        }
        out.push(if value != 1 || symbolic_count == 0 {
            super::types::dim(value)
        } else if symbolic_count == 1 {
            Dimension { value: symbolic.and_then(|d| d.value.clone()), denotation: None }
        } else {
            Dimension::default()
        });
    }
    Some(out)
}
