//! Element-wise activations with an optional bias added first (FastGelu, BiasGelu, Gelu,
//! QuickGelu), BiasAdd and BiasSplitGelu, as onnxruntime's kernels compute them.

use super::super::{Ctx, Kernel, input, one, optional};
use onnx_core::ir::DataType;

use crate::error::{KernelError, bad_input};
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "FastGelu" => |_, inputs| biased(inputs, crate::math::gelu_tanh, crate::math::gelu_tanh_f64),
        // BiasGelu's bias is required (onnxruntime's kernel reads it unchecked).
        "BiasGelu" => |_, inputs| {
            input(inputs, 1)?;
            biased(inputs, crate::math::gelu, crate::math::gelu_f64)
        },
        "Gelu" => |_, inputs| biased(&inputs[..inputs.len().min(1)], crate::math::gelu, crate::math::gelu_f64),
        "QuickGelu" => |ctx, inputs| {
            let alpha = ctx.float("alpha").unwrap_or(1.702);
            let wide = f64::from(alpha);
            biased(
                &inputs[..inputs.len().min(1)],
                #[inline(always)]
                move |x| x * crate::math::sigmoid(alpha * x),
                move |x| x * sigmoid(wide * x),
            )
        },
        "BiasAdd" => bias_add,
        "BiasSplitGelu" => bias_split_gelu,
        _ => return None,
    };
    Some(k)
}

fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 { 1.0 / (1.0 + (-x).exp()) } else { x.exp() / (1.0 + x.exp()) }
}

/// BiasAdd: `X + bias + skip`, X and skip `[batch, sequence, channels]`, bias one value per
/// channel (onnxruntime's CUDA kernel; its CPU provider has none).
fn bias_add(_: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, _, skip) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    if x.rank() != 3 || skip.shape != x.shape {
        return Err(bad_input!(
            "BiasAdd takes X and skip of one shape [batch, sequence, channels]; got {:?} and {:?}",
            x.shape,
            skip.shape
        ));
    }
    let mut out = biased(&inputs[..2], |v| v, |v| v)?;
    let Some(Value::Tensor(sum)) = out.pop() else { return Err(bad_input!("BiasAdd made no tensor")) };
    let values = sum.to_f64s()?.into_iter().zip(skip.to_f64s()?).map(|(a, b)| a + b).collect();
    one(crate::cast::from_f64_like(x.data_type(), x.shape.clone(), values)?)
}

/// BiasSplitGelu (a diffusion UNet's GEGLU): `X + bias`, `[N, S, D]` with one bias per
/// channel, split in halves along the channels, the left times GELU (with erf) of the right:
/// `[N, S, D/2]`. onnxruntime has only a CUDA kernel, which computes exactly this.
fn bias_split_gelu(_: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, bias) = (input(inputs, 0)?, input(inputs, 1)?);
    let width = match x.shape[..] {
        [_, _, d] if d % 2 == 0 && bias.shape[..] == [d] => d,
        _ => {
            return Err(bad_input!(
                "BiasSplitGelu takes X [N, S, D] of an even D and a bias [D]; got {:?} and {:?}",
                x.shape,
                bias.shape
            ));
        }
    };
    let half = width / 2;
    let mut shape = x.shape.clone();
    shape[2] = half;
    if x.data_type() == DataType::Float {
        // float32 with the vectorizing erf, as onnxruntime's CUDA kernel computes it.
        let (values, bias) = (x.to_f32s()?, bias.to_f32s()?);
        let mut out = vec![0f32; values.len() / 2];
        crate::simd::widest(
            #[inline(always)]
            || {
                for (row, o) in values.chunks_exact(width.max(1)).zip(out.chunks_exact_mut(half.max(1))) {
                    let (left, right) = row.split_at(half);
                    let (bl, br) = bias.split_at(half);
                    for ((o, (&l, &r)), (&b, &c)) in o.iter_mut().zip(left.iter().zip(right)).zip(bl.iter().zip(br)) {
                        *o = (l + b) * crate::math::gelu(r + c);
                    }
                }
            },
        );
        return one(Tensor::new(shape, Data::F32(out.into())));
    }
    let (values, bias) = (x.to_f64s()?, bias.to_f64s()?);
    let mut out = Vec::with_capacity(values.len() / 2);
    for row in values.chunks(width.max(1)) {
        for j in 0..half {
            out.push((row[j] + bias[j]) * crate::math::gelu_f64(row[j + half] + bias[j + half]));
        }
    }
    one(crate::cast::from_f64_like(x.data_type(), shape, out)?)
}

/// `f` of each element of input 0, plus input 1 when given: a bias of one value per
/// position of the last axis (onnxruntime's kernels take no other broadcast). The result
/// has input 0's type and shape. float32 (float16 and bfloat16 widened to it) takes `f32f`
/// in a loop compiled for the widest vectors, as onnxruntime computes these in float32;
/// float64 takes `f64f`.
fn biased(
    inputs: &[Option<&Value>],
    f32f: impl Fn(f32) -> f32 + Copy,
    f64f: impl Fn(f64) -> f64,
) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let width = x.shape.last().copied().unwrap_or(1);
    let bias = optional(inputs, 1)?;
    if let Some(bias) = bias
        && (bias.rank() != 1 || bias.len() != width)
    {
        return Err(bad_input!(
            "the bias (input 1) has shape {:?}; it must be one value per position of input 0's last axis ({width})",
            bias.shape
        ));
    }
    let narrow = matches!(&*x.data, Data::F16(_) | Data::Bf16(_));
    if matches!(&*x.data, Data::F32(_)) || narrow {
        let values = x.to_f32s()?;
        let bias = bias.map(Tensor::to_f32s).transpose()?;
        let mut out = vec![0f32; values.len()];
        crate::simd::widest(
            #[inline(always)]
            || match &bias {
                Some(bias) if width > 0 => {
                    for (o, v) in out.chunks_mut(width).zip(values.chunks(width)) {
                        for ((o, &v), &b) in o.iter_mut().zip(v).zip(bias.iter()) {
                            *o = f32f(v + b);
                        }
                    }
                }
                _ => {
                    for (o, &v) in out.iter_mut().zip(values.iter()) {
                        *o = f32f(v);
                    }
                }
            },
        );
        let data = match &*x.data {
            Data::F16(_) | Data::Bf16(_) => crate::number::narrowed_half(&out, x.data_type()),
            _ => Data::F32(out.into()),
        };
        return one(Tensor::new(x.shape.clone(), data));
    }
    let mut values = x.to_f64s()?;
    if let Some(bias) = bias {
        let bias = bias.to_f64s()?;
        for (i, v) in values.iter_mut().enumerate() {
            *v += bias[i % width];
        }
    }
    values.iter_mut().for_each(|v| *v = f64f(*v));
    one(crate::cast::from_f64_like(x.data_type(), x.shape.clone(), values)?)
}
