//! Operators that pick, count or rearrange elements: OneHot, Compress, NonZero, GatherND,
//! the depth/space shuffles, Det, NonMaxSuppression, DynamicQuantizeLinear.

use super::{Ctx, Outputs, Rule};
use crate::infer::types::{dim, known_dim, unknown_dim};
use crate::infer::types::{normalize_axis, tensor_of};
use crate::ir::{DataType, Dimension};

const INT64: i32 = DataType::Int64 as i32;

/// Checked multiplication or division of a size by a factor.
type Arithmetic = fn(i64, i64) -> Option<i64>;

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        // The indices' shape with a new axis of `depth` at `axis`.
        "OneHot" => |ctx| {
            let dims = ctx.dims(0).and_then(|d| {
                let axis = normalize_axis(ctx.int("axis").unwrap_or(-1), d.len() + 1)?;
                let mut out = d.to_vec();
                out.insert(axis, ctx.scalar_value(1).map_or_else(unknown_dim, dim));
                Some(out)
            });
            Some(Outputs::one(tensor_of(ctx.elem(2), dims)))
        },
        // How many elements the condition keeps is known only at run time.
        "Compress" => |ctx| {
            let dims = match ctx.int("axis") {
                None => Some(vec![unknown_dim()]),
                Some(axis) => ctx.dims(0).and_then(|d| {
                    let a = normalize_axis(axis, d.len())?;
                    let mut out = d.to_vec();
                    out[a] = unknown_dim();
                    Some(out)
                }),
            };
            Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
        },
        "NonZero" => |ctx| {
            let rank = ctx.dims(0).map_or_else(unknown_dim, |d| dim(d.len() as i64));
            Some(Outputs::one(tensor_of(Some(INT64), Some(vec![rank, unknown_dim()]))))
        },
        // Same bits, read as another type of the same width.
        "BitCast" => |ctx| {
            let to = ctx.int("to").and_then(|t| i32::try_from(t).ok());
            Some(Outputs::one(tensor_of(to, ctx.dims_vec(0))))
        },
        "Unique" => |ctx| Some(unique(ctx)),
        "GatherND" => |ctx| Some(Outputs::one(tensor_of(ctx.elem(0), gather_nd(ctx)))),
        "SpaceToDepth" | "DepthToSpace" => |ctx| {
            let block = ctx.int("blocksize")?;
            let dims = ctx.dims(0).filter(|d| d.len() == 4 && block > 0).map(|d| {
                let scale = |x: &Dimension, by: Arithmetic, factor: i64| {
                    known_dim(x).and_then(|v| by(v, factor)).map_or_else(unknown_dim, dim)
                };
                let (mul, div): (Arithmetic, Arithmetic) = (i64::checked_mul, i64::checked_div);
                let square = block.saturating_mul(block);
                if ctx.op() == "SpaceToDepth" {
                    vec![d[0].clone(), scale(&d[1], mul, square), scale(&d[2], div, block), scale(&d[3], div, block)]
                } else {
                    vec![d[0].clone(), scale(&d[1], div, square), scale(&d[2], mul, block), scale(&d[3], mul, block)]
                }
            });
            Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
        },
        // The determinant of each trailing square matrix.
        "Det" => |ctx| {
            let dims = ctx.dims(0).filter(|d| d.len() >= 2).map(|d| d[..d.len() - 2].to_vec());
            Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
        },
        // One row [batch, class, box] per selected box.
        "NonMaxSuppression" => |_| Some(Outputs::one(tensor_of(Some(INT64), Some(vec![unknown_dim(), dim(3)])))),
        "DynamicQuantizeLinear" => |ctx| {
            let uint8 = Some(DataType::Uint8 as i32);
            Some(Outputs {
                types: smallvec::smallvec![
                    Some(tensor_of(uint8, ctx.dims_vec(0))),
                    Some(tensor_of(Some(DataType::Float as i32), Some(Vec::new()))),
                    Some(tensor_of(uint8, Some(Vec::new()))),
                ],
                values: Vec::new(),
            })
        },
        _ => return None,
    };
    Some(rule)
}

/// GatherND: the indices' leading dims, then the data dims each index tuple leaves.
fn gather_nd(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let (data, indices) = (ctx.dims(0)?, ctx.dims(1)?);
    let batch = usize::try_from(ctx.int("batch_dims").unwrap_or(0)).ok()?;
    let tuple = usize::try_from(known_dim(indices.last()?)?).ok()?;
    let rest = data.get(batch.checked_add(tuple)?..)?;
    let mut out = indices[..indices.len() - 1].to_vec();
    out.extend_from_slice(rest);
    // onnx adds the output's axes one by one to a shape it creates with the first, so a
    // scalar result gets no shape from it.
    if out.is_empty() && ctx.as_onnx() {
        return None;
    }
    Some(out)
}

/// Unique: how many distinct values (or slices along `axis`) there are is known at run
/// time only; the inverse indices have one entry per input element (or slice).
fn unique(ctx: &Ctx<'_, '_>) -> Outputs {
    let axis = ctx.int("axis");
    let d = ctx.dims(0);
    let (y, inverse) = match axis {
        None => {
            // onnx leaves the count unknown; it is the input's element count.
            let count =
                d.filter(|_| !ctx.as_onnx()).and_then(|d| d.iter().try_fold(1i64, |a, x| a.checked_mul(known_dim(x)?)));
            (Some(vec![unknown_dim()]), count.map_or_else(unknown_dim, dim))
        }
        Some(axis) => match d.and_then(|d| Some((d, normalize_axis(axis, d.len())?))) {
            Some((d, a)) => {
                let mut y = d.to_vec();
                y[a] = unknown_dim();
                (Some(y), d[a].clone())
            }
            None => (None, unknown_dim()),
        },
    };
    let int64 = |dims: Vec<Dimension>| Some(tensor_of(Some(INT64), Some(dims)));
    let mut types = vec![
        Some(tensor_of(ctx.elem(0), y)),
        int64(vec![unknown_dim()]),
        int64(vec![inverse]),
        int64(vec![unknown_dim()]),
    ];
    types.truncate(ctx.node.outputs.len().max(1));
    Outputs { types: types.into(), values: Vec::new() }
}
