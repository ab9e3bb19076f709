//! Operators that build, cast or rearrange tensors: their shapes come from attributes and,
//! often, from values computed in the graph, which these rules also propagate.

use super::{Ctx, Outputs, Rule};
use crate::infer::broadcast::broadcast;
use crate::infer::types::{
    Known, MAX_TRACKED_ELEMENTS, dim, known_dim, negated_symbol, size_element, tensor_type, tensor_values, unknown_dim,
    unknown_dims,
};
use crate::infer::types::{narrow, normalize_axis, tensor_of};
use crate::ir::{AttributeValue, DataType, DimValue, Dimension};

const INT64: i32 = DataType::Int64 as i32;

fn product(dims: &[Dimension]) -> Option<i64> {
    dims.iter().try_fold(1i64, |acc, d| acc.checked_mul(known_dim(d)?))
}

/// The product of dims as onnx multiplies them (`Dimension * Dimension` in its shape
/// inference): known values multiply, a factor of 1 keeps the other factor (so a lone
/// symbolic dim among ones stays itself: Flatten of `[N, 1152]` is `[N, 1152]`), anything
/// else is unknown.
fn product_dim(dims: &[Dimension]) -> Dimension {
    dims.iter().fold(dim(1), |acc, d| match (&acc.value, &d.value) {
        (Some(DimValue::Value(a)), Some(DimValue::Value(b))) => a.checked_mul(*b).map_or_else(unknown_dim, dim),
        (Some(DimValue::Value(1)), _) => d.clone(),
        (_, Some(DimValue::Value(1))) => acc,
        _ => unknown_dim(),
    })
}

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        "Constant" => constant,
        "Shape" => shape,
        "Size" => |ctx| {
            Some(Outputs::one(tensor_of(Some(INT64), Some(Vec::new()))).with_value(
                ctx.dims(0).and_then(product).map(|n| Known { elements: vec![Some(DimValue::Value(n))], scalar: true }),
            ))
        },
        "Cast" => |ctx| {
            let to = ctx.int("to").and_then(|t| i32::try_from(t).ok());
            let value = ctx.value(0).cloned().filter(|_| to.is_some_and(|t| t == INT64 || t == DataType::Int32 as i32));
            Some(Outputs::one(tensor_of(to, ctx.dims(0).map(<[_]>::to_vec))).with_value(value))
        },
        "CastLike" => |ctx| Some(Outputs::one(tensor_of(ctx.elem(1), ctx.dims(0).map(<[_]>::to_vec)))),
        "Reshape" => reshape,
        "Concat" => concat,
        "Unsqueeze" => unsqueeze,
        "Squeeze" => squeeze,
        "Transpose" => |ctx| {
            let dims = ctx.dims(0);
            let out = dims.and_then(|d| {
                let perm: Vec<i64> = match ctx.ints("perm") {
                    Some(p) => p.to_vec(),
                    None => (0..d.len() as i64).rev().collect(),
                };
                // A perm that is no permutation gives no shape (the node is reported).
                if perm.iter().enumerate().any(|(i, p)| perm[..i].contains(p)) {
                    return None;
                }
                perm.iter().map(|&p| normalize_axis(p, d.len()).map(|a| d[a].clone())).collect::<Option<Vec<_>>>()
            });
            Some(Outputs::one(tensor_of(ctx.elem(0), out)))
        },
        "Flatten" => |ctx| {
            let out = ctx.dims(0).and_then(|d| {
                let axis = ctx.int("axis").unwrap_or(1);
                let a = if axis < 0 { axis + d.len() as i64 } else { axis };
                let a = usize::try_from(a).ok().filter(|&a| a <= d.len())?;
                Some(vec![product_dim(&d[..a]), product_dim(&d[a..])])
            });
            Some(Outputs::one(tensor_of(ctx.elem(0), out)))
        },
        "Expand" => |ctx| {
            // Unknown target values of a known count still give the rank.
            let count = ctx.dims(1).and_then(|d| d.first()).and_then(known_dim);
            let target = ctx.value(1).map(Known::as_dims).or_else(|| count.and_then(unknown_dims));
            let out = match (ctx.dims(0), target) {
                (Some(d), Some(t)) => broadcast(&[d, &t]),
                _ => None,
            };
            Some(Outputs::one(tensor_of(ctx.elem(0), out)))
        },
        "ConstantOfShape" => |ctx| {
            let elem = match ctx.tensor_attr("value") {
                Some(t) => ctx.model.tensors[t].data_type,
                None => Some(DataType::Float as i32),
            };
            let count = ctx.dims(0).and_then(|d| d.first()).and_then(known_dim);
            let dims = ctx.value(0).map(Known::as_dims).or_else(|| count.and_then(unknown_dims));
            // A short 1-D integer fill is a shape computation's (`ConstantOfShape([n])`, then
            // `Mul` by −1 to compare with a shape): its value is known.
            let length = ctx.value(0).and_then(Known::ints).filter(|l| l.len() == 1).map(|l| l[0]);
            let fill = match ctx.tensor_attr("value") {
                Some(t) => crate::ir::tensor_data::int_values(&ctx.model.tensors[t]).filter(|v| v.len() == 1),
                None => None,
            };
            let value = match (length, fill) {
                (Some(n), Some(v)) if (0..=MAX_TRACKED_ELEMENTS as i64).contains(&n) => {
                    Some(Known::vector(vec![Some(DimValue::Value(v[0])); n as usize]))
                }
                _ => None,
            };
            Some(Outputs::one(tensor_of(elem, dims)).with_value(value))
        },
        "Gather" => gather,
        "Slice" => slice,
        "Split" => split,
        "Range" => |ctx| {
            let len = match (ctx.value(0), ctx.value(1), ctx.value(2)) {
                (Some(s), Some(l), Some(d)) => match (s.ints(), l.ints(), d.ints()) {
                    (Some(s), Some(l), Some(d)) if s.len() == 1 && l.len() == 1 && d.len() == 1 && d[0] != 0 => {
                        let (s, l, d) = (i128::from(s[0]), i128::from(l[0]), i128::from(d[0]));
                        narrow(((l - s + d - d.signum()) / d).max(0)).map(dim)
                    }
                    // 0, 1, …, n − 1 of a symbolic n (a sequence's positions, `Range(0,
                    // Shape(x)[1], 1)`): n values, as onnxruntime's symbolic inference says.
                    (Some(s), None, Some(d)) if s == [0] && d == [1] && l.elements.len() == 1 => {
                        size_element(&l.elements[0]).map(|value| Dimension { value: Some(value), denotation: None })
                    }
                    _ => None,
                },
                _ => None,
            };
            Some(Outputs::one(tensor_of(ctx.elem(0), Some(vec![len.unwrap_or_default()]))))
        },
        "Tile" => |ctx| {
            let out = match (ctx.dims(0), ctx.value(1).and_then(Known::ints)) {
                (Some(d), Some(r)) if r.len() == d.len() => Some(
                    d.iter()
                        .zip(&r)
                        .map(|(d, &r)| known_dim(d).and_then(|v| v.checked_mul(r)).map_or_else(unknown_dim, dim))
                        .collect(),
                ),
                (Some(d), _) => Some(vec![unknown_dim(); d.len()]),
                _ => None,
            };
            Some(Outputs::one(tensor_of(ctx.elem(0), out)))
        },
        _ => return None,
    };
    Some(rule)
}

fn constant(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let a = ctx.node.attributes.first()?;
    let name = a.name.as_ref()?.as_str()?;
    let (elem, dims, value) = match (name, a.value()?) {
        ("value", AttributeValue::Tensor(t)) => {
            let t = &ctx.model.tensors[t];
            return Some(Outputs::one(tensor_type(t)).with_value(tensor_values(t)));
        }
        ("sparse_value", AttributeValue::SparseTensor(s)) => {
            let elem = s.values.and_then(|v| ctx.model.tensors[v].data_type);
            (elem, s.dims.iter().map(|&d| dim(d)).collect(), None)
        }
        ("value_float", _) => (Some(DataType::Float as i32), Vec::new(), None),
        ("value_floats", AttributeValue::Floats(f)) => (Some(DataType::Float as i32), vec![dim(f.len() as i64)], None),
        ("value_int", AttributeValue::Int(v)) => {
            (Some(INT64), Vec::new(), Some(Known { elements: vec![Some(DimValue::Value(v))], scalar: true }))
        }
        ("value_ints", AttributeValue::Ints(v)) => (
            Some(INT64),
            vec![dim(v.len() as i64)],
            Some(Known::vector(v.iter().map(|&x| Some(DimValue::Value(x))).collect())),
        ),
        ("value_string", _) => (Some(DataType::String as i32), Vec::new(), None),
        ("value_strings", AttributeValue::Strings(s)) => {
            (Some(DataType::String as i32), vec![dim(s.len() as i64)], None)
        }
        _ => return None,
    };
    Some(Outputs::one(tensor_of(elem, Some(dims))).with_value(value))
}

fn shape(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let Some(d) = ctx.dims(0) else {
        return Some(Outputs::one(tensor_of(Some(INT64), Some(vec![unknown_dim()]))));
    };
    let rank = d.len() as i64;
    let clamp = |v: i64| (if v < 0 { v + rank } else { v }).clamp(0, rank) as usize;
    let start = clamp(ctx.int("start").unwrap_or(0));
    let end = clamp(ctx.int("end").unwrap_or(rank)).max(start);
    let picked = &d[start..end];
    let value = Known::vector(picked.iter().map(|d| d.value.clone()).collect());
    Some(Outputs::one(tensor_of(Some(INT64), Some(vec![dim(picked.len() as i64)]))).with_value(Some(value)))
}

fn reshape(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(0);
    let Some(target) = ctx.value(1) else {
        // onnx takes the rank from the shape input's length only from Reshape-14 on.
        if ctx.as_onnx() && ctx.opset < 14 {
            return Some(Outputs::one(tensor_of(elem, None)));
        }
        let rank = ctx.input(1).and_then(|(_, d)| d).and_then(|d| d.first()).and_then(known_dim);
        let dims = rank.and_then(|r| unknown_dims(r.max(0)));
        return Some(Outputs::one(tensor_of(elem, dims)));
    };
    let input = ctx.dims(0);
    let allow_zero = ctx.int("allowzero").unwrap_or(0) != 0;
    let mut out: Vec<Dimension> = Vec::with_capacity(target.elements.len());
    let mut infer_at = None;
    // Dims a 0 copies: the same on both sides, they cancel from the `-1`'s quotient even
    // when unknown (`[batch, ?, 32] → [0, 0, -1, 16]` gives 2 heads).
    let mut copied = Vec::new();
    for (i, e) in target.elements.iter().enumerate() {
        match e {
            Some(DimValue::Value(0)) if !allow_zero => {
                out.push(input.and_then(|d| d.get(i)).cloned().unwrap_or_default());
                if input.is_some_and(|d| i < d.len()) {
                    copied.push(i);
                }
            }
            Some(DimValue::Value(-1)) => {
                infer_at = Some(i);
                out.push(unknown_dim());
            }
            other => out.push(Dimension { value: size_element(other), denotation: None }),
        }
    }
    if let (Some(at), Some(input)) = (infer_at, input) {
        let kept = |i: usize| !copied.contains(&i);
        let input: Vec<Dimension> =
            input.iter().enumerate().filter(|&(i, _)| kept(i)).map(|(_, d)| d.clone()).collect();
        let others: Vec<Dimension> =
            out.iter().enumerate().filter(|&(i, _)| i != at && kept(i)).map(|(_, d)| d.clone()).collect();
        if let Some(size) = inferred_size(&input, &others) {
            out[at] = size;
        }
    }
    // A shape computation reshaped (`Concat` then `Reshape` to `[-1]`, before the `Equal`
    // with -1 exporters write ahead of an Expand) keeps its elements (ours only: onnx
    // propagates no value through Reshape).
    let value = if ctx.as_onnx() {
        None
    } else {
        ctx.value(0).map(|k| Known { elements: k.elements.clone(), scalar: out.is_empty() })
    };
    Some(Outputs::one(tensor_of(elem, Some(out))).with_value(value))
}

/// The size of Reshape's `-1` dim: input elements over the other output dims, where the
/// same symbolic dim on both sides cancels (`[N,4,256] → [N,-1]` gives 1024). One symbolic
/// input dim left over is the `-1` times what the sizes leave (`[seq] → [-1, 1]` gives
/// `seq`; `[seq, 64] → [-1, 16]` gives `4*seq`, which a later `[-1, 64]` takes back to
/// `seq`): a dim named `k*name` is read as k times `name`, as [`dim_sum`] writes it.
fn inferred_size(input: &[Dimension], others: &[Dimension]) -> Option<Dimension> {
    let mut symbols: Vec<&str> = Vec::new();
    let mut total = 1i64;
    for d in input {
        let (k, symbol) = monomial(d)?;
        total = total.checked_mul(k)?;
        symbols.extend(symbol);
    }
    let mut rest = 1i64;
    for d in others {
        let (k, symbol) = monomial(d)?;
        rest = rest.checked_mul(k)?;
        if let Some(symbol) = symbol {
            let at = symbols.iter().position(|s| *s == symbol)?;
            symbols.swap_remove(at);
        }
    }
    if symbols.len() > 1 || rest == 0 || total % rest != 0 {
        return None;
    }
    let k = total / rest;
    match symbols.first() {
        None => Some(dim(k)),
        Some(&symbol) if k == 1 => Some(Dimension { value: Some(DimValue::Param(symbol.into())), denotation: None }),
        // A sum (`past + seq`) is not scaled: `k*past + seq` would read as another sum.
        Some(&symbol) if k > 1 && !symbol.contains(' ') => {
            Some(Dimension { value: Some(DimValue::Param(format!("{k}*{symbol}").into())), denotation: None })
        }
        Some(_) => None,
    }
}

/// A dim as a coefficient times at most one symbol: a size is itself, `k*name` (no spaces,
/// a positive integer k) is k times `name`, any other name is one symbol. `None` when unknown.
fn monomial(d: &Dimension) -> Option<(i64, Option<&str>)> {
    match d.value.as_ref()? {
        DimValue::Value(v) => Some((*v, None)),
        DimValue::Param(name) => {
            let name = name.as_str().unwrap_or_default();
            let scaled = name
                .split_once('*')
                .filter(|(_, symbol)| !name.contains(' ') && !symbol.is_empty())
                .and_then(|(k, symbol)| Some((k.parse::<i64>().ok().filter(|k| *k > 0)?, Some(symbol))));
            Some(scaled.unwrap_or((1, Some(name))))
        }
    }
}

/// The sum of dims, kept symbolic as onnxruntime's symbolic shape inference writes it
/// (`past_seq + seq` for a key/value cache grown by Concat, `seq + 2`): named dims sorted,
/// a repeated one counted (`2*seq`), the known sizes added last. `None` when a dim is
/// unknown or the sum overflows. A name that is itself such a sum is taken apart, so sums
/// of sums stay flat; any other name is one term.
pub(super) fn dim_sum<'d>(dims: impl IntoIterator<Item = &'d Dimension>) -> Option<Dimension> {
    let mut constant = 0i64;
    let mut terms: std::collections::BTreeMap<String, i64> = std::collections::BTreeMap::new();
    for d in dims {
        match d.value.as_ref()? {
            DimValue::Value(v) => constant = constant.checked_add(*v)?,
            DimValue::Param(name) => {
                let name = name.as_str().unwrap_or_default();
                let parts: Vec<&str> = name.split(" + ").collect();
                let flat = parts.iter().all(|p| !p.is_empty() && !p.contains(' '));
                for part in if flat { parts } else { vec![name] } {
                    match part.parse::<i64>() {
                        Ok(v) if flat => constant = constant.checked_add(v)?,
                        _ => {
                            let (k, symbol) = match part.split_once('*') {
                                Some((k, symbol)) if flat => (k.parse::<i64>().ok()?, symbol),
                                _ => (1, part),
                            };
                            let entry = terms.entry(symbol.to_owned()).or_default();
                            *entry = entry.checked_add(k)?;
                        }
                    }
                }
            }
        }
    }
    if terms.is_empty() {
        return Some(dim(constant));
    }
    let mut text: Vec<String> = terms.into_iter().map(|(s, k)| if k == 1 { s } else { format!("{k}*{s}") }).collect();
    if constant != 0 {
        text.push(constant.to_string());
    }
    Some(Dimension { value: Some(DimValue::Param(text.join(" + ").into())), denotation: None })
}

fn concat(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let count = ctx.node.inputs.len();
    let elem = (0..count).find_map(|i| ctx.elem(i));
    let shapes: Option<Vec<_>> = (0..count).map(|i| ctx.dims(i)).collect();
    let dims = shapes.and_then(|shapes| {
        let first = shapes.first()?;
        let axis = normalize_axis(ctx.int("axis")?, first.len())?;
        let mut out = first.to_vec();
        for s in &shapes {
            if s.len() != first.len() {
                return None;
            }
            for (i, d) in s.iter().enumerate() {
                if i != axis && out[i].value.is_none() {
                    out[i] = d.clone();
                }
            }
        }
        out[axis] = dim_sum(shapes.iter().map(|s| &s[axis])).unwrap_or_else(unknown_dim);
        Some(out)
    });
    // Data propagation: an input whose values are unknown but whose length is known still
    // places the known values after it (`Concat(Shape(X)[:1], computed)` → `[3, ?]`).
    let parts: Option<Vec<Vec<Option<DimValue>>>> = (0..count)
        .map(|i| match ctx.value(i) {
            Some(k) => Some(k.elements.clone()),
            None => match ctx.dims(i) {
                // Not for a long one: data propagation is for short shape vectors.
                Some([n]) => known_dim(n)
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|&n| n <= MAX_TRACKED_ELEMENTS)
                    .map(|n| vec![None; n]),
                _ => None,
            },
        })
        .collect();
    let value = parts.map(|p| Known::vector(p.concat())).filter(|k| k.elements.iter().any(Option::is_some));
    Some(Outputs::one(tensor_of(elem, dims)).with_value(value))
}

fn axes(ctx: &Ctx<'_, '_>) -> Option<Vec<i64>> {
    if ctx.opset >= 13 { ctx.value(1).and_then(Known::ints) } else { ctx.ints("axes").map(<[i64]>::to_vec) }
}

fn unsqueeze(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(0);
    let dims = match (ctx.dims(0), axes(ctx)) {
        (Some(d), Some(axes)) => {
            let rank = d.len() + axes.len();
            let mut positions: Vec<usize> =
                axes.iter().map(|&a| normalize_axis(a, rank)).collect::<Option<Vec<_>>>().unwrap_or_default();
            positions.sort_unstable();
            let mut out = Vec::with_capacity(rank);
            let mut rest = d.iter();
            for i in 0..rank {
                if positions.binary_search(&i).is_ok() {
                    out.push(dim(1));
                } else {
                    out.push(rest.next()?.clone());
                }
            }
            Some(out)
        }
        _ => None,
    };
    let value = ctx.value(0).filter(|k| k.scalar).map(|k| Known::vector(k.elements.clone()));
    Some(Outputs::one(tensor_of(elem, dims)).with_value(value))
}

fn squeeze(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(0);
    let has_axes = if ctx.opset >= 13 { ctx.given_to_onnx(1) } else { ctx.ints("axes").is_some() };
    let dims = ctx.dims(0).and_then(|d| {
        if has_axes {
            let axes = axes(ctx)?;
            let positions: Vec<usize> = axes.iter().map(|&a| normalize_axis(a, d.len())).collect::<Option<_>>()?;
            Some(d.iter().enumerate().filter(|(i, _)| !positions.contains(i)).map(|(_, x)| x.clone()).collect())
        } else {
            if d.iter().any(|x| x.value.is_none() || matches!(x.value, Some(DimValue::Param(_)))) {
                return None;
            }
            Some(d.iter().filter(|x| known_dim(x) != Some(1)).cloned().collect())
        }
    });
    let value =
        ctx.value(0).filter(|k| !k.scalar && k.elements.len() == 1).map(|k| Known { scalar: true, ..k.clone() });
    Some(Outputs::one(tensor_of(elem, dims)).with_value(value))
}

fn gather(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(0);
    let axis = ctx.int("axis").unwrap_or(0);
    let dims = match (ctx.dims(0), ctx.dims(1)) {
        (Some(data), Some(indices)) => normalize_axis(axis, data.len()).map(|a| {
            let mut out = data[..a].to_vec();
            out.extend_from_slice(indices);
            out.extend_from_slice(&data[a + 1..]);
            out
        }),
        _ => None,
    };
    let value = match (ctx.value(0), ctx.value(1).and_then(Known::ints)) {
        (Some(data), Some(idx)) if axis == 0 && !data.scalar => {
            let n = data.elements.len() as i64;
            let picked: Option<Vec<_>> = idx
                .iter()
                .map(|&i| {
                    let i = if i < 0 { i + n } else { i };
                    usize::try_from(i).ok().and_then(|i| data.elements.get(i).cloned())
                })
                .collect();
            picked.map(|elements| Known { elements, scalar: ctx.value(1).is_some_and(|k| k.scalar) })
        }
        _ => None,
    };
    Some(Outputs::one(tensor_of(elem, dims)).with_value(value))
}

/// Start, end and step of one sliced axis, clamped as onnx does.
fn slice_range(len: i64, start: i64, end: i64, step: i64) -> i64 {
    // A negative size (a broken model) slices like an empty axis.
    let len = len.max(0);
    let clamp = |v: i64, lo: i64, hi: i64| v.clamp(lo, hi);
    let norm = |v: i64| if v < 0 { v.saturating_add(len) } else { v };
    let (s, e) = if step > 0 {
        (clamp(norm(start), 0, len), clamp(norm(end), 0, len))
    } else {
        (clamp(norm(start), -1, len - 1), clamp(norm(end), -1, len - 1))
    };
    let (s, e, step) = (i128::from(s), i128::from(e), i128::from(step));
    let count = if step > 0 { ((e - s).max(0) + step - 1) / step } else { ((s - e).max(0) - step - 1) / (-step) };
    // At most `len`, so it fits.
    i64::try_from(count).unwrap_or(len)
}

fn slice(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(0);
    // Each parameter element by element (`None` where not a known integer): a slice whose
    // end is a symbolic length still keeps the axes it does not slice.
    let elements = |i: usize| {
        ctx.value(i).map(|k| {
            k.elements
                .iter()
                .map(|e| if let Some(DimValue::Value(v)) = e { Some(*v) } else { None })
                .collect::<Vec<_>>()
        })
    };
    let given = |v: Option<Vec<i64>>| v.map(|v| v.into_iter().map(Some).collect::<Vec<_>>());
    // The ends as given, symbolic elements included (an end that is the axis' own length).
    let ends_given = if ctx.opset >= 10 { ctx.value(2).map(|k| k.elements.clone()) } else { None };
    let starts_given = if ctx.opset >= 10 { ctx.value(1).map(|k| k.elements.clone()) } else { None };
    let (starts, ends, axes, steps) = if ctx.opset >= 10 {
        (
            elements(1),
            elements(2),
            if ctx.has_input(3) { ctx.value(3).and_then(Known::ints).map(Some) } else { Some(None) },
            if ctx.has_input(4) { elements(4).map(Some) } else { Some(None) },
        )
    } else {
        (
            given(ctx.ints("starts").map(<[_]>::to_vec)),
            given(ctx.ints("ends").map(<[_]>::to_vec)),
            Some(ctx.ints("axes").map(<[_]>::to_vec)),
            Some(None),
        )
    };
    let Some(d) = ctx.dims(0) else {
        return Some(Outputs::one(tensor_of(elem, None)));
    };
    let all_known = |v: &Option<Vec<Option<i64>>>| v.as_ref().is_some_and(|v| v.iter().all(Option::is_some));
    let exact = all_known(&starts) && all_known(&ends) && steps.as_ref().is_some_and(|s| s.is_none() || all_known(s));
    let axes_given = axes.clone().flatten();
    let (Some(starts), Some(ends), Some(axes), Some(steps)) = (starts, ends, axes, steps) else {
        // The rank is kept; onnx adds the axes one by one to a shape it creates with the
        // first, so a scalar (nothing to slice) gets no shape from it. Ours keeps the axes
        // that known `axes` leave alone.
        let rank = (!d.is_empty() || !ctx.as_onnx()).then(|| match axes_given.filter(|_| !ctx.as_onnx()) {
            Some(axes) => {
                let sliced: Vec<usize> = axes.iter().filter_map(|&a| normalize_axis(a, d.len())).collect();
                d.iter().enumerate().map(|(i, x)| if sliced.contains(&i) { unknown_dim() } else { x.clone() }).collect()
            }
            None => vec![unknown_dim(); d.len()],
        });
        return Some(Outputs::one(tensor_of(elem, rank)));
    };
    if !exact && ctx.as_onnx() {
        // onnx reads constant parameters only, and gives the rank alone without them.
        return Some(Outputs::one(tensor_of(elem, Some(vec![unknown_dim(); d.len()]))));
    }
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![Some(1); starts.len()]);
    let mut out = d.to_vec();
    for (k, &axis) in axes.iter().enumerate() {
        let a = normalize_axis(axis, d.len())?;
        let (start, end, step) = (*starts.get(k)?, *ends.get(k)?, *steps.get(k)?);
        if step == Some(0) {
            return None;
        }
        out[a] = match (known_dim(&d[a]), start, end, step) {
            (Some(len), Some(start), Some(end), Some(step)) => dim(slice_range(len, start, end, step)),
            // From the start, one by one, to the axis' own symbolic length or past any
            // length: the whole axis.
            (None, start, _, Some(1))
                if (start == Some(0) || counts_back_over(&d[a], starts_given.as_ref().and_then(|s| s.get(k))))
                    && whole_axis(&d[a], ends_given.as_ref().and_then(|e| e.get(k))) =>
            {
                d[a].clone()
            }
            // From the start of a known length to a symbolic end (a position table cut to
            // the sequence, `position_ids[:, :seq]`): `min(64, seq)`, which broadcasting
            // against `seq` resolves (see `broadcast`).
            (Some(len), Some(0), None, Some(1)) if len >= 1 && !ctx.as_onnx() => {
                match ends_given.as_ref().and_then(|e| e.get(k)) {
                    Some(Some(end @ DimValue::Param(symbol))) if negated_symbol(end).is_none() => Dimension {
                        value: Some(DimValue::Param(format!("min({len}, {symbol})").into())),
                        denotation: None,
                    },
                    _ => unknown_dim(),
                }
            }
            _ => unknown_dim(),
        };
    }
    let value = ctx.value(0).filter(|k| exact && !k.scalar && axes.len() == 1).and_then(|k| {
        let len = k.elements.len() as i64;
        let (start, end, step) = (starts[0]?, ends[0]?, steps[0]?);
        if step != 1 {
            return None;
        }
        let norm = |v: i64| (if v < 0 { v.saturating_add(len) } else { v }).clamp(0, len) as usize;
        let (s, e) = (norm(start), norm(end));
        Some(Known::vector(k.elements.get(s..e.max(s))?.to_vec()))
    });
    Some(Outputs::one(tensor_of(elem, Some(out))).with_value(value))
}

/// Whether a slice from 0 by 1 to `end` keeps the whole of an axis of symbolic length
/// `len`: `end` is that length itself, or at least 2^31 (what exporters write for "to the
/// end"; no real axis is longer).
/// Whether a start is minus the axis' own symbolic length (`-seq` on an axis of `seq`):
/// counted back from the end, it is the axis' first element.
fn counts_back_over(len: &Dimension, start: Option<&Option<DimValue>>) -> bool {
    match (&len.value, start) {
        (Some(DimValue::Param(len)), Some(Some(start))) => negated_symbol(start) == len.as_str(),
        _ => false,
    }
}

fn whole_axis(len: &Dimension, end: Option<&Option<DimValue>>) -> bool {
    match (&len.value, end) {
        (Some(DimValue::Param(l)), Some(Some(DimValue::Param(e)))) => l == e,
        (Some(DimValue::Param(_)), Some(Some(DimValue::Value(e)))) => *e >= 1 << 31,
        _ => false,
    }
}

fn split(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(0);
    let count = ctx.node.outputs.len();
    let d = ctx.dims(0);
    // Explicit sizes (`None` inside: given but not known here), or an even split.
    // Version 13 reads the input's type to tell whether it is given, 18 its name.
    let given = if ctx.opset >= 18 { ctx.has_input(1) } else { ctx.given_to_onnx(1) };
    let sizes: Option<Option<Vec<i64>>> = if ctx.opset >= 13 && given {
        Some(ctx.value(1).and_then(Known::ints))
    } else {
        ctx.ints("split").map(|s| Some(s.to_vec()))
    };
    let types = (0..count)
        .map(|i| {
            let dims = d.and_then(|d| {
                let axis = normalize_axis(ctx.int("axis").unwrap_or(0), d.len())?;
                let mut out = d.to_vec();
                let size = match &sizes {
                    Some(Some(s)) => s.get(i).copied(),
                    Some(None) => None,
                    None => known_dim(&d[axis]).map(|len| {
                        let n = count as i64;
                        let chunk = len / n + i64::from(len % n != 0);
                        if i + 1 < count { chunk } else { len.saturating_sub(chunk.saturating_mul(n - 1)) }
                    }),
                };
                // onnx gives no shape when the sizes are given but not a constant, unless
                // the split axis is unknown anyway.
                if ctx.as_onnx() && matches!(sizes, Some(None)) && known_dim(&d[axis]).is_some() {
                    return None;
                }
                out[axis] = size.map_or_else(unknown_dim, dim);
                Some(out)
            });
            Some(tensor_of(elem, dims))
        })
        .collect();
    Some(Outputs { types, values: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> Dimension {
        Dimension { value: Some(DimValue::Param(name.into())), denotation: None }
    }

    fn shown(d: Option<Dimension>) -> String {
        match d.and_then(|d| d.value) {
            Some(DimValue::Value(v)) => v.to_string(),
            Some(DimValue::Param(p)) => p.to_string(),
            None => "?".to_owned(),
        }
    }

    #[test]
    fn dim_sums_stay_symbolic() {
        assert_eq!(shown(dim_sum(&[dim(2), dim(3)])), "5");
        // A key/value cache grown by one step, then by another.
        let grown = dim_sum(&[named("seq"), named("past_seq")]);
        assert_eq!(shown(grown.clone()), "past_seq + seq");
        assert_eq!(shown(dim_sum(&[grown.clone().unwrap(), named("seq"), dim(1)])), "past_seq + 2*seq + 1");
        // A name that is not a plain sum is one term; an unknown dim makes the sum unknown.
        assert_eq!(shown(dim_sum(&[named("n - 1"), dim(1)])), "n - 1 + 1");
        assert_eq!(shown(dim_sum(&[named("seq"), unknown_dim()])), "?");
        assert_eq!(shown(dim_sum(&[dim(i64::MAX), dim(1)])), "?");
    }

    #[test]
    fn reshape_minus_one_keeps_one_symbol_with_its_factor() {
        // Qwen3's per-head norm: [seq, 64] → [-1, 16] → [-1, 64].
        let heads = inferred_size(&[named("seq"), dim(64)], &[dim(16)]);
        assert_eq!(shown(heads.clone()), "4*seq");
        assert_eq!(shown(inferred_size(&[heads.unwrap(), dim(16)], &[dim(64)])), "seq");
        assert_eq!(shown(inferred_size(&[named("seq"), dim(4), dim(256)], &[named("seq")])), "1024");
        // What does not divide, two symbols left, or an unknown dim: unknown.
        assert_eq!(shown(inferred_size(&[named("seq"), dim(6)], &[dim(4)])), "?");
        assert_eq!(shown(inferred_size(&[named("a"), named("b")], &[dim(1)])), "?");
        assert_eq!(shown(inferred_size(&[named("a"), unknown_dim()], &[dim(1)])), "?");
        // A sum is one symbol, kept whole or not scaled.
        assert_eq!(shown(inferred_size(&[named("past + seq"), dim(8)], &[dim(8)])), "past + seq");
        assert_eq!(shown(inferred_size(&[named("past + seq"), dim(8)], &[dim(2)])), "?");
    }
}
