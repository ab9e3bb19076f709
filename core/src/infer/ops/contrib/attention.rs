//! onnxruntime's attention operators (Attention, MultiHeadAttention, RotaryEmbedding,
//! GroupQueryAttention, PackedAttention, PackedMultiHeadAttention, SparseAttention, and
//! RemovePadding/RestorePadding
//! around PackedAttention, and T5's RelativePositionBias), shaped as onnxruntime's `symbolic_shape_infer.py` shapes them
//! (and its kernels compute them): `[B, S, hidden]` outputs, key/value caches grown by
//! this step's keys. A dim that is a sum of a symbol and a number is left unknown (onnxruntime's
//! tool writes a new symbol such as `past+sequence`).

use super::super::shape::dim_sum;
use super::super::{Ctx, Outputs, Rule};
use crate::infer::types::{dim, known_dim, size_element, unknown_dim};
use crate::infer::types::{first_known, tensor_of};
use crate::ir::{DataType, Dimension};

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        "Attention" => |ctx| attention(ctx, ctx.elem(0), (3, 4)),
        // Its 8-bit input scaled to the bias's type (float32); the mask and past later.
        "QAttention" => |ctx| attention(ctx, ctx.elem(2).or(Some(DataType::Float as i32)), (5, 8)),
        "MultiHeadAttention" => multi_head_attention,
        "RotaryEmbedding" => |ctx| Some(Outputs::one(ctx.input_type(0)?.clone())),
        "GroupQueryAttention" => group_query_attention,
        "PackedAttention" => packed_attention,
        // [T, Dv]: the value's width, or N·H of a query packing Q, K and V [T, N, 3, H].
        "PackedMultiHeadAttention" => |ctx| {
            let q = ctx.dims(0);
            let dims = match q {
                Some(q) if q.len() == 4 => {
                    let width = match (known_dim(&q[1]), known_dim(&q[3])) {
                        (Some(n), Some(h)) => n.checked_mul(h).map_or_else(unknown_dim, dim),
                        _ => unknown_dim(),
                    };
                    Some(vec![q[0].clone(), width])
                }
                Some(q) if q.len() == 2 => {
                    let v = ctx.dims(2).filter(|v| v.len() == 2 && ctx.has_input(2));
                    Some(vec![q[0].clone(), v.map_or_else(unknown_dim, |v| v[1].clone())])
                }
                _ => None,
            };
            Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
        },
        "SparseAttention" => sparse_attention,
        "RemovePadding" => remove_padding,
        "RelativePositionBias" => relative_position_bias,
        "RestorePadding" => |ctx| {
            let offsets = ctx.dims(1).filter(|d| d.len() == 2);
            let hidden = ctx.dims(0).filter(|d| d.len() == 2).map_or_else(unknown_dim, |d| d[1].clone());
            let dims = offsets.map(|o| vec![o[0].clone(), o[1].clone(), hidden]);
            Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
        },
        _ => return None,
    };
    Some(rule)
}

/// A size from an attribute: unknown when negative.
fn size_dim(v: i64) -> Dimension {
    if v >= 0 { dim(v) } else { unknown_dim() }
}

/// Q, K and V packed in one query: `num_heads + 2·kv_num_heads` heads (`None` when an
/// attribute is missing, not positive or the sum overflows).
fn packed_parts(heads: Option<i64>, kv_heads: Option<i64>) -> Option<i64> {
    let (n, k) = (heads.filter(|&n| n > 0)?, kv_heads.filter(|&k| k > 0)?);
    n.checked_add(k.checked_mul(2)?)
}

fn divide(d: &Dimension, by: Option<i64>) -> Dimension {
    match (known_dim(d), by) {
        (Some(n), Some(h)) if h > 0 && n % h == 0 => dim(n / h),
        _ => unknown_dim(),
    }
}

fn plus(a: &Dimension, b: &Dimension) -> Dimension {
    match (known_dim(a), known_dim(b)) {
        (Some(x), Some(y)) => x.checked_add(y).map_or_else(unknown_dim, dim),
        // Nothing to add: the other dim as it is (a symbol stays a symbol).
        (Some(0), None) => b.clone(),
        (None, Some(0)) => a.clone(),
        _ => unknown_dim(),
    }
}

/// The outputs, as many as the node names.
fn outputs(ctx: &Ctx<'_, '_>, types: Vec<crate::ir::Type>) -> Outputs {
    Outputs { types: types.into_iter().take(ctx.node.outputs.len().max(1)).map(Some).collect(), values: Vec::new() }
}

/// Attention: output `[B, S, v_hidden]` (`qkv_hidden_sizes[2]`, or a third of the weights'
/// width); present `[2, B, N, P + S, H]`, the total length read from a 2-D or 3-D mask when
/// there is one (as onnxruntime's tool does). QAttention alike, of element type `elem`,
/// its mask and past the inputs `mask_past`.
fn attention(ctx: &Ctx<'_, '_>, elem: Option<i32>, (mask_at, past_at): (usize, usize)) -> Option<Outputs> {
    let x = ctx.dims(0).filter(|d| d.len() == 3);
    let width = ctx
        .dims(2)
        .filter(|d| d.len() == 1 && ctx.has_input(2))
        .map(|d| d[0].clone())
        .or_else(|| ctx.dims(1).filter(|d| d.len() == 2).map(|d| d[1].clone()));
    let sizes = ctx.ints("qkv_hidden_sizes").filter(|s| s.len() == 3);
    let (q_hidden, v_hidden) = match sizes {
        Some(s) => (size_dim(s[0]), size_dim(s[2])),
        None => {
            let third = width.as_ref().map_or_else(unknown_dim, |w| divide(w, Some(3)));
            (third.clone(), third)
        }
    };
    let heads = ctx.int("num_heads");
    let output = x.map(|x| vec![x[0].clone(), x[1].clone(), v_hidden.clone()]);
    let past = ctx.dims(past_at).filter(|d| d.len() == 5 && ctx.has_input(past_at));
    let mask = ctx.dims(mask_at).filter(|d| matches!(d.len(), 2 | 3) && ctx.has_input(mask_at));
    let present = match (past, x) {
        (Some(p), _) => {
            let total = match (mask, x) {
                (Some(m), _) if m.last().is_some_and(|d| d.value.is_some()) => m[m.len() - 1].clone(),
                (_, Some(x)) => plus(&p[3], &x[1]),
                _ => unknown_dim(),
            };
            let batch = x.map_or_else(|| p[1].clone(), |x| first_known(&p[1], &x[0]));
            Some(vec![dim(2), batch, p[2].clone(), total, p[4].clone()])
        }
        (None, Some(x)) => Some(vec![
            dim(2),
            x[0].clone(),
            heads.map_or_else(unknown_dim, dim),
            x[1].clone(),
            divide(&q_hidden, heads),
        ]),
        (None, None) => None,
    };
    Some(outputs(ctx, vec![tensor_of(elem, output), tensor_of(elem, present)]))
}

/// PackedAttention: output `[tokens, v_hidden]`, v_hidden being `qkv_hidden_sizes[2]` or
/// a third of the bias's length (else of the weights' width).
fn packed_attention(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let x = ctx.dims(0).filter(|d| d.len() == 2);
    let width = ctx
        .dims(2)
        .filter(|d| d.len() == 1)
        .map(|d| d[0].clone())
        .or_else(|| ctx.dims(1).filter(|d| d.len() == 2).map(|d| d[1].clone()));
    let v_hidden = match ctx.ints("qkv_hidden_sizes").filter(|s| s.len() == 3) {
        Some(s) => size_dim(s[2]),
        None => width.as_ref().map_or_else(unknown_dim, |w| divide(w, Some(3))),
    };
    let output = x.map(|x| vec![x[0].clone(), v_hidden]);
    Some(outputs(ctx, vec![tensor_of(ctx.elem(0), output)]))
}

/// RemovePadding: the packed tokens `[sum(C), H]`, token_offset `[B, S]`,
/// cumulated_seq_len `[B + 1]` and max_seq_len `[1]` (int32). The token count is the sum
/// of the values of sequence_token_count `C`, which no shape holds: a symbol named after
/// that value, so that every tensor of packed tokens shares it (two RemovePadding of the
/// same counts pack alike), where onnxruntime's tool writes `token_count` for any.
fn remove_padding(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let x = ctx.dims(0).filter(|d| d.len() == 3);
    let int32 = Some(DataType::Int32 as i32);
    let tokens = match ctx.node.inputs.get(1).and_then(|n| n.as_str()).filter(|n| !n.is_empty()) {
        Some(counts) => {
            Dimension { value: Some(crate::ir::DimValue::Param(format!("sum({counts})").into())), denotation: None }
        }
        None => unknown_dim(),
    };
    let cumulative = x.map(|x| vec![dim_sum([&x[0], &dim(1)]).unwrap_or_default()]);
    Some(outputs(
        ctx,
        vec![
            tensor_of(ctx.elem(0), x.map(|x| vec![tokens, x[2].clone()])),
            tensor_of(int32, x.map(|x| vec![x[0].clone(), x[1].clone()])),
            tensor_of(int32, cumulative),
            tensor_of(int32, Some(vec![dim(1)])),
        ],
    ))
}

/// RelativePositionBias: `[1, heads, query_length, key_length]`, the lengths the values of
/// its two scalar inputs (a shape computation's), the heads the bias table's second dim.
fn relative_position_bias(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let length = |i: usize| match ctx.value(i).map(|k| &k.elements[..]) {
        Some([one]) => Dimension { value: size_element(one), denotation: None },
        _ => unknown_dim(),
    };
    let heads = ctx.dims(0).filter(|d| d.len() == 2).map_or_else(unknown_dim, |d| d[1].clone());
    Some(Outputs::one(tensor_of(ctx.elem(0), Some(vec![dim(1), heads, length(1), length(2)]))))
}

/// SparseAttention: output like GroupQueryAttention's (the query's part of a packed
/// query); present key and value the shape of the past ones, whose buffers they share.
fn sparse_attention(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(0);
    let (heads, kv_heads) = (ctx.int("num_heads"), ctx.int("kv_num_heads"));
    let q = ctx.dims(0).filter(|d| d.len() == 3);
    let packed = !ctx.has_input(1) && !ctx.has_input(2);
    let output = q.map(|q| {
        let width = if packed {
            let head = divide(&q[2], packed_parts(heads, kv_heads));
            match (known_dim(&head), heads) {
                (Some(h), Some(n)) => h.checked_mul(n).filter(|&w| w >= 0).map_or_else(unknown_dim, dim),
                _ => unknown_dim(),
            }
        } else {
            q[2].clone()
        };
        vec![q[0].clone(), q[1].clone(), width]
    });
    let present = ctx.dims(3).filter(|d| d.len() == 4).map(|p| {
        let mut p = p.to_vec();
        if let Some(q) = q {
            p[0] = first_known(&p[0], &q[0]);
        }
        p
    });
    Some(outputs(ctx, vec![tensor_of(elem, output), tensor_of(elem, present.clone()), tensor_of(elem, present)]))
}

/// MultiHeadAttention: output `[B, S, v_hidden]` (the value's width when key and value are
/// 3-D, else the query's; `N·H` of a packed `[B, S, N, 3, H]` query); present key and value
/// `[B, N, P + L, H]`; qk `[B, N, S, P + L]`.
fn multi_head_attention(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(0);
    let heads = ctx.int("num_heads");
    let q = ctx.dims(0);
    let given = |i: usize| ctx.dims(i).filter(|_| ctx.has_input(i));
    let (k, v) = (given(1), given(2));
    let mut kv_len = None;
    let (output, head) = match q {
        Some(q) if q.len() == 3 => {
            let mut out = q.to_vec();
            match (k, v) {
                (Some(k), Some(v)) if k.len() == 3 && v.len() == 3 => {
                    out[2] = v[2].clone();
                    kv_len = Some(k[1].clone());
                }
                (Some(k), _) if k.len() == 4 => kv_len = Some(k[2].clone()),
                (Some(k), _) if k.len() == 5 => kv_len = Some(k[1].clone()),
                _ => {}
            }
            (Some(out), divide(&q[2], heads))
        }
        Some(q) if q.len() == 5 => {
            kv_len = Some(q[1].clone());
            let width = match (known_dim(&q[2]), known_dim(&q[4])) {
                (Some(n), Some(h)) => n.checked_mul(h).map_or_else(unknown_dim, dim),
                _ => unknown_dim(),
            };
            (Some(vec![q[0].clone(), q[1].clone(), width]), q[4].clone())
        }
        _ => (None, unknown_dim()),
    };
    let past = given(6).filter(|p| p.len() == 4);
    let total = match (past, kv_len) {
        (Some(p), Some(l)) => plus(&p[2], &l),
        (None, Some(l)) => l,
        _ => unknown_dim(),
    };
    let present = q.filter(|q| matches!(q.len(), 3 | 5)).map(|q| {
        vec![
            q[0].clone(),
            heads.map_or_else(unknown_dim, dim),
            total.clone(),
            past.map_or(head.clone(), |p| first_known(&head, &p[3])),
        ]
    });
    let present_value = present.clone().map(|mut p| {
        // The value's head size, when the value is 3-D beside a 3-D key.
        if let (Some(v), Some(k)) = (v, k)
            && v.len() == 3
            && k.len() == 3
        {
            p[3] = divide(&v[2], heads);
        }
        p
    });
    // qk: the scores [B, N, S, P + L].
    let qk = q
        .filter(|q| matches!(q.len(), 3 | 5))
        .map(|q| vec![q[0].clone(), heads.map_or_else(unknown_dim, dim), q[1].clone(), total.clone()]);
    Some(outputs(
        ctx,
        vec![tensor_of(elem, output), tensor_of(elem, present), tensor_of(elem, present_value), tensor_of(elem, qk)],
    ))
}

/// GroupQueryAttention: output like the query (its query part when it packs Q, K and V);
/// present key and value `[B, kv_heads, max(past length, total length), H]`.
fn group_query_attention(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(0);
    let (heads, kv_heads) = (ctx.int("num_heads"), ctx.int("kv_num_heads"));
    let q = ctx.dims(0).filter(|d| d.len() == 3);
    let packed = !ctx.has_input(1) && !ctx.has_input(2);
    let head = match q {
        Some(q) if packed => divide(&q[2], packed_parts(heads, kv_heads)),
        Some(q) => divide(&q[2], heads),
        None => unknown_dim(),
    };
    let output = q.map(|q| {
        let width = match (known_dim(&head), heads) {
            (Some(h), Some(n)) if packed => h.checked_mul(n).filter(|&w| w >= 0).map_or_else(unknown_dim, dim),
            _ if packed => unknown_dim(),
            _ => q[2].clone(),
        };
        vec![q[0].clone(), q[1].clone(), width]
    });
    let past = ctx.dims(3).filter(|d| d.len() == 4 && ctx.has_input(3));
    let total = ctx.scalar_value(6);
    // A quantized cache (`k_quant_type`): int8, or int4 packed in uint8.
    let cache_bits =
        ctx.string("k_quant_type").filter(|t| *t != "NONE").map(|_| ctx.int("kv_cache_bit_width").unwrap_or(8));
    let present = match past {
        Some(p) => {
            let len = match (known_dim(&p[2]), total) {
                (Some(a), Some(b)) => dim(a.max(b)),
                _ => unknown_dim(),
            };
            let batch = q.map_or_else(|| p[0].clone(), |q| first_known(&p[0], &q[0]));
            Some(vec![batch, p[1].clone(), len, first_known(&p[3], &head)])
        }
        None => q.map(|q| {
            // A 4-bit cache packs two values a byte.
            let width = if cache_bits == Some(4) { divide(&head, Some(2)) } else { head.clone() };
            vec![q[0].clone(), kv_heads.map_or_else(unknown_dim, dim), total.map_or_else(unknown_dim, dim), width]
        }),
    };
    let output_qk = q.map(|q| {
        vec![q[0].clone(), heads.map_or_else(unknown_dim, dim), q[1].clone(), total.map_or_else(unknown_dim, dim)]
    });
    let quantized = cache_bits.map(|bits| if bits == 4 { DataType::Uint8 as i32 } else { DataType::Int8 as i32 });
    let cache = ctx.elem(3).or(quantized).or(elem);
    Some(outputs(
        ctx,
        vec![
            tensor_of(elem, output),
            tensor_of(cache, present.clone()),
            tensor_of(cache, present),
            tensor_of(elem, output_qk),
        ],
    ))
}
