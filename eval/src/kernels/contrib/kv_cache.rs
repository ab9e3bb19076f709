//! GroupQueryAttention's quantized key/value caches (what onnxruntime-genai builds with a
//! quantized KV cache): `past_key`/`past_value` of int8 `[B, Nkv, P, H]`, or int4 packed two
//! to a uint8 `[B, Nkv, P, H/2]` (the first value in the low nibble, each stored plus 8),
//! with float32 scales per tensor (`[1]`) or per channel (`[Nkv·H]`). As onnxruntime 1.32's
//! CPU kernel does (checked against it value by value): this step's keys and values are
//! quantized into the cache (`x / scale` rounded half to even, saturated to the bit width),
//! and attention reads the whole cache dequantized (`q · scale`).

use onnx_core::ir::DataType;

use super::super::{Ctx, optional};
use crate::cast::numeric_like;
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::value::{Tensor, Value};

/// How one cache (keys or values) is quantized.
pub(super) struct CacheQuant {
    bits: usize,
    scales: Vec<f64>,
    kv_heads: usize,
    head: usize,
}

impl CacheQuant {
    /// The key (`which` "k", scales input 12) or value ("v", input 13) cache's quantization:
    /// `None` when its `*_quant_type` is NONE or absent and no scale is given.
    pub(super) fn read(
        ctx: &Ctx<'_>,
        inputs: &[Option<&Value>],
        which: &str,
        (kv_heads, head): (usize, usize),
    ) -> Result<Option<Self>, KernelError> {
        let at = if which == "k" { 12 } else { 13 };
        let kind = ctx.string(&format!("{which}_quant_type")).unwrap_or("NONE");
        let scale = optional(inputs, at)?;
        let per_channel = match (kind, scale) {
            ("NONE", None) => return Ok(None),
            ("PER_TENSOR", Some(_)) => false,
            ("PER_CHANNEL", Some(_)) => true,
            (kind, _) => {
                return Err(bad_attribute!(
                    "{which}_quant_type {kind} beside {} {which}_scale (input {at})",
                    if scale.is_some() { "a" } else { "no" }
                ));
            }
        };
        let bits = match ctx.int("kv_cache_bit_width") {
            Some(8) => 8,
            Some(4) if head % 2 == 0 => 4,
            other => {
                return Err(bad_attribute!("kv_cache_bit_width {other:?} is neither 8 nor 4 (with an even head size)"));
            }
        };
        let scales = scale.map(Tensor::to_f64s).transpose()?.unwrap_or_default();
        let want = if per_channel { kv_heads * head } else { 1 };
        if scales.len() != want {
            return Err(bad_input!("{which}_scale holds {} scales; a {kind} cache takes {want}", scales.len()));
        }
        Ok(Some(CacheQuant { bits, scales, kv_heads, head }))
    }

    /// The width of the cache's last axis: the head size, or half of it packed in int4.
    pub(super) fn width(&self) -> usize {
        if self.bits == 4 { self.head / 2 } else { self.head }
    }

    /// The scale of element `i` of a `[B, Nkv, T, H]` cache of `steps` steps.
    fn scale(&self, i: usize, steps: usize) -> f64 {
        if self.scales.len() == 1 {
            return self.scales[0];
        }
        let n = (i / (steps * self.head).max(1)) % self.kv_heads;
        self.scales[n * self.head + i % self.head]
    }

    fn quantize(&self, x: f64, scale: f64) -> i64 {
        let (lo, hi) = if self.bits == 4 { (-8.0, 7.0) } else { (-128.0, 127.0) };
        if scale == 0.0 { 0 } else { (x / scale).round_ties_even().clamp(lo, hi) as i64 }
    }

    /// A past cache `[B, Nkv, P, width]` dequantized: `[B, Nkv, P, H]`.
    pub(super) fn dequantize(&self, t: &Tensor) -> Result<Vec<f64>, KernelError> {
        let stored = t.to_i64s()?;
        let values: Vec<i64> = if self.bits == 4 {
            stored.iter().flat_map(|&b| [(b & 15) - 8, ((b >> 4) & 15) - 8]).collect()
        } else {
            stored
        };
        let steps = t.shape.get(2).copied().unwrap_or(0);
        Ok(values.iter().enumerate().map(|(i, &q)| q as f64 * self.scale(i, steps)).collect())
    }

    /// New keys or values `[B, Nkv, S, H]` as the cache will hold them: quantized and back.
    pub(super) fn round_trip(&self, values: &mut [f64], steps: usize) {
        for (i, v) in values.iter_mut().enumerate() {
            let s = self.scale(i, steps);
            *v = self.quantize(*v, s) as f64 * s;
        }
    }

    /// The batch entry and step of element `i` of a `[B, Nkv, T, H]` cache of `steps` steps.
    fn entry_and_step(&self, i: usize, steps: usize) -> (usize, usize) {
        let row = i / self.head.max(1);
        (row / (self.kv_heads * steps).max(1), row % steps.max(1))
    }

    /// The present cache `[B, Nkv, T, H]` stored: int8, or int4 packed in uint8. A step that
    /// `valid(b, t)` rejects is all zero bytes (onnxruntime clears the buffer first).
    pub(super) fn store(
        &self,
        values: &[f64],
        (batch, steps): (usize, usize),
        valid: impl Fn(usize, usize) -> bool,
    ) -> Result<Value, KernelError> {
        let mut q: Vec<i64> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let (b, t) = self.entry_and_step(i, steps);
                if valid(b, t) { self.quantize(v, self.scale(i, steps)) } else { 0 }
            })
            .collect();
        let shape = vec![batch, self.kv_heads, steps, self.width()];
        if self.bits == 8 {
            let q = q.into_iter().map(|v| v as f64).collect();
            return Ok(Value::Tensor(numeric_like(DataType::Int8, shape, q)?));
        }
        // Two values to a byte, each plus 8; a step that is not valid stays 0.
        let packed: Vec<f64> = q
            .chunks_mut(2)
            .enumerate()
            .map(|(pair, v)| {
                let (b, t) = self.entry_and_step(pair * 2, steps);
                if valid(b, t) { ((v[0] + 8) | ((v.get(1).copied().unwrap_or(0) + 8) << 4)) as f64 } else { 0.0 }
            })
            .collect();
        Ok(Value::Tensor(numeric_like(DataType::Uint8, shape, packed)?))
    }
}
