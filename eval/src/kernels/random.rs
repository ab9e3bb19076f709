//! The random generators: RandomUniform, RandomNormal, their `*Like` forms, Bernoulli and
//! Multinomial (Dropout's training mask draws from the same source).
//!
//! With a `seed`, the draws are the very ones onnx's reference evaluator makes: numpy's
//! legacy `RandomState(seed)`, which is MT19937 seeded by `init_genrand`, turned into
//! 53-bit uniform doubles, normal draws by the polar method (a pair per rejection loop, the
//! second kept for the next call) and binomial draws by inversion. A node run twice with the
//! same seed gives the same values, as in the reference, and results are scaled in the output
//! type as numpy does (`res *= high - low; res += low` on the cast draws). Without a seed the
//! generator is seeded from the clock. onnxruntime has generators of its own; its seeded
//! draws are not reproduced. Multinomial has no reference kernel: ours samples each row's
//! softmax by inversion with the same generator.

use half::{bf16, f16};
use onnx_core::ir::DataType;

use super::{Ctx, Kernel, count, input, one};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::dtype_attr;
use crate::kernels::common::numeric_like;
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "RandomUniform" => random_uniform,
        "RandomUniformLike" => random_uniform_like,
        "RandomNormal" => random_normal,
        "RandomNormalLike" => random_normal_like,
        "Bernoulli" => bernoulli,
        "Multinomial" => multinomial,
        _ => return None,
    };
    Some(k)
}

/// numpy's legacy `RandomState`: MT19937 and the state its normal draws keep.
#[derive(Debug)]
pub struct LegacyRandom {
    mt: rand_mt::Mt,
    /// The second value of the last polar-method pair, handed out by the next normal draw.
    kept_gauss: Option<f64>,
}

impl LegacyRandom {
    /// Seeded by the node's `seed` attribute (numpy takes its integer part), else the clock.
    pub fn for_node(ctx: &Ctx<'_>) -> LegacyRandom {
        LegacyRandom::new(ctx.float("seed").map_or_else(clock_seed, |s| s as i64 as u32))
    }

    pub fn new(seed: u32) -> LegacyRandom {
        LegacyRandom { mt: rand_mt::Mt::new(seed), kept_gauss: None }
    }

    /// A uniform double in [0, 1) from 53 random bits (two 32-bit draws).
    pub fn uniform(&mut self) -> f64 {
        let (a, b) = (self.mt.next_u32() >> 5, self.mt.next_u32() >> 6);
        (f64::from(a) * 67_108_864.0 + f64::from(b)) / 9_007_199_254_740_992.0
    }

    /// A standard normal draw (the polar method, as numpy's legacy `gauss`).
    pub fn gauss(&mut self) -> f64 {
        if let Some(kept) = self.kept_gauss.take() {
            return kept;
        }
        loop {
            let x1 = 2.0 * self.uniform() - 1.0;
            let x2 = 2.0 * self.uniform() - 1.0;
            let r2 = x1 * x1 + x2 * x2;
            if r2 < 1.0 && r2 != 0.0 {
                let f = (-2.0 * r2.ln() / r2).sqrt();
                self.kept_gauss = Some(f * x1);
                return f * x2;
            }
        }
    }

    /// One draw of a binomial(1, p): numpy's legacy inversion algorithm for small `n·p`,
    /// taken on the smaller of p and 1 − p, so that the same uniform draws give the same
    /// results. Every element takes at least one uniform draw, p = 0 included (the legacy
    /// generator has no shortcut for it).
    pub fn bernoulli(&mut self, p: f64) -> bool {
        if p <= 0.5 { self.binomial_inversion_of_one(p) == 1 } else { self.binomial_inversion_of_one(1.0 - p) == 0 }
    }

    /// numpy's `random_binomial_inversion` for n = 1.
    fn binomial_inversion_of_one(&mut self, p: f64) -> u32 {
        let q = 1.0 - p;
        let qn = q.ln().exp();
        let bound = (p + 10.0 * (p * q + 1.0).sqrt()).min(1.0) as u32;
        let (mut x, mut px, mut u) = (0u32, qn, self.uniform());
        while u > px {
            x += 1;
            if x > bound {
                x = 0;
                px = qn;
                u = self.uniform();
            } else {
                u -= px;
                px = (f64::from(2 - x) * p * px) / (f64::from(x) * q);
            }
        }
        x
    }
}

/// A seed for an unseeded random draw.
pub fn clock_seed() -> u32 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos())
}

/// The draws cast to `dt`, multiplied by `scale` and shifted by `shift` in that type, as
/// numpy computes `draws.astype(dt) * scale + shift` with Python scalars.
fn scaled(dt: DataType, shape: Vec<usize>, draws: Vec<f64>, scale: f64, shift: f64) -> Result<Tensor, KernelError> {
    let data = match dt {
        DataType::Double => Data::F64(draws.into_iter().map(|d| d * scale + shift).collect()),
        DataType::Float => {
            let (s, m) = (scale as f32, shift as f32);
            Data::F32(draws.into_iter().map(|d| d as f32 * s + m).collect())
        }
        DataType::Float16 => {
            let round = |x: f32| f16::from_f32(x).to_f32();
            let (s, m) = (f16::from_f64(scale).to_f32(), f16::from_f64(shift).to_f32());
            Data::F16(draws.into_iter().map(|d| f16::from_f32(round(f16::from_f64(d).to_f32() * s) + m)).collect())
        }
        DataType::Bfloat16 => {
            let round = |x: f32| bf16::from_f32(x).to_f32();
            let (s, m) = (bf16::from_f64(scale).to_f32(), bf16::from_f64(shift).to_f32());
            Data::Bf16(draws.into_iter().map(|d| bf16::from_f32(round(bf16::from_f64(d).to_f32() * s) + m)).collect())
        }
        other => {
            return Err(bad_attribute!(
                "a random tensor of {} cannot be made: the type is not a float type",
                other.name()
            ));
        }
    };
    Ok(Tensor::new(shape, data))
}

/// The `shape` attribute of RandomUniform and RandomNormal.
fn shape_attr(ctx: &Ctx<'_>) -> Result<Vec<usize>, KernelError> {
    let dims = ctx.ints("shape").ok_or(bad_attribute!("the shape attribute is missing"))?;
    let shape = dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| bad_attribute!("shape {dims:?} has a negative dimension")))
        .collect::<Result<Vec<_>, _>>()?;
    ctx.check_elements(count(&shape)?)?;
    Ok(shape)
}

/// The output type of a `*Like` operator: its `dtype`, else its input's.
fn like_type(ctx: &Ctx<'_>, x: &Tensor) -> Result<DataType, KernelError> {
    dtype_attr(ctx, "dtype", x.data_type())
}

fn uniform_draws(ctx: &Ctx<'_>, n: usize) -> Vec<f64> {
    let mut rng = LegacyRandom::for_node(ctx);
    (0..n).map(|_| rng.uniform()).collect()
}

fn normal_draws(ctx: &Ctx<'_>, n: usize) -> Vec<f64> {
    let mut rng = LegacyRandom::for_node(ctx);
    (0..n).map(|_| rng.gauss()).collect()
}

fn uniform_of(ctx: &Ctx<'_>, dt: DataType, shape: Vec<usize>) -> Result<Vec<Value>, KernelError> {
    let (low, high) = (f64::from(ctx.float("low").unwrap_or(0.0)), f64::from(ctx.float("high").unwrap_or(1.0)));
    let draws = uniform_draws(ctx, count(&shape)?);
    one(scaled(dt, shape, draws, high - low, low)?)
}

fn normal_of(ctx: &Ctx<'_>, dt: DataType, shape: Vec<usize>) -> Result<Vec<Value>, KernelError> {
    let (mean, scale) = (f64::from(ctx.float("mean").unwrap_or(0.0)), f64::from(ctx.float("scale").unwrap_or(1.0)));
    let draws = normal_draws(ctx, count(&shape)?);
    one(scaled(dt, shape, draws, scale, mean)?)
}

fn random_uniform(ctx: &Ctx<'_>, _: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    uniform_of(ctx, dtype_attr(ctx, "dtype", DataType::Float)?, shape_attr(ctx)?)
}

fn random_uniform_like(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    uniform_of(ctx, like_type(ctx, x)?, x.shape.clone())
}

fn random_normal(ctx: &Ctx<'_>, _: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    normal_of(ctx, dtype_attr(ctx, "dtype", DataType::Float)?, shape_attr(ctx)?)
}

fn random_normal_like(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    normal_of(ctx, like_type(ctx, x)?, x.shape.clone())
}

/// Zeros and ones as a tensor of `dt` (bool included).
fn zeros_and_ones(dt: DataType, shape: Vec<usize>, bits: Vec<bool>) -> Result<Tensor, KernelError> {
    if dt == DataType::Bool {
        return Ok(Tensor::new(shape, Data::Bool(bits)));
    }
    numeric_like(dt, shape, bits.into_iter().map(|b| if b { 1.0 } else { 0.0 }).collect())
}

/// Bernoulli: each element 1 with the probability its input gives, as numpy's
/// `binomial(1, p)` draws it.
fn bernoulli(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let dt = like_type(ctx, x)?;
    let p = x.to_f64s()?;
    if let Some(bad) = p.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        return Err(bad_input!("probability {bad} is not in [0, 1]"));
    }
    let mut rng = LegacyRandom::for_node(ctx);
    let bits = p.into_iter().map(|p| rng.bernoulli(p)).collect();
    one(zeros_and_ones(dt, x.shape.clone(), bits)?)
}

/// Multinomial: `sample_size` class indices per row of unnormalised log-probabilities,
/// each drawn by inverting the row's cumulative softmax.
fn multinomial(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let [batch, classes] = x.shape[..] else {
        return Err(bad_input!("input of shape {:?} is not (batch_size, class_size)", x.shape));
    };
    let samples = ctx.int("sample_size").unwrap_or(1);
    let samples = usize::try_from(samples).map_err(|_| bad_attribute!("sample_size {samples} is negative"))?;
    let dt = dtype_attr(ctx, "dtype", DataType::Int32)?;
    if !matches!(dt, DataType::Int32 | DataType::Int64) {
        return Err(bad_attribute!("dtype {} is neither int32 nor int64", dt.name()));
    }
    ctx.check_elements(count(&[batch, samples])?)?;
    if classes == 0 && batch * samples > 0 {
        return Err(bad_input!("there are no classes to draw from"));
    }
    let logits = x.to_f64s()?;
    let mut rng = LegacyRandom::for_node(ctx);
    let mut drawn = Vec::with_capacity(batch * samples);
    let mut cumulative = vec![0.0; classes];
    for row in logits.chunks_exact(classes.max(1)).take(batch) {
        let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut total = 0.0;
        for (c, &l) in cumulative.iter_mut().zip(row) {
            total += (l - top).exp();
            *c = total;
        }
        if !(total.is_finite() && total > 0.0) {
            return Err(bad_input!("a row of log-probabilities ({top} at most) gives no distribution"));
        }
        for _ in 0..samples {
            let target = rng.uniform() * total;
            let class = cumulative.partition_point(|&c| c <= target).min(classes - 1);
            drawn.push(class as f64);
        }
    }
    one(numeric_like(dt, vec![batch, samples], drawn)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numpy 2's `RandomState(0).random_sample(3)` and `.randn(3)`, printed with `repr`.
    #[test]
    fn draws_are_numpys_legacy_ones() {
        let mut rng = LegacyRandom::new(0);
        let u: Vec<f64> = (0..3).map(|_| rng.uniform()).collect();
        assert_eq!(u, [0.5488135039273248, 0.7151893663724195, 0.6027633760716439]);
        let mut rng = LegacyRandom::new(0);
        let g: Vec<f64> = (0..3).map(|_| rng.gauss()).collect();
        assert_eq!(g, [1.764052345967664, 0.4001572083672233, 0.9787379841057392]);
    }

    /// `RandomState(0).binomial(1, p)` for p = 0.1, 0.9, 0.5, 0.0, 1.0, 0.7 is
    /// [0, 1, 1, 0, 1, 1], and [0, 0, 0, 1] for p = 0.0, 0.6, 0.6, 0.6: p = 0 takes a draw
    /// too (without it the last three would be 1, 0, 0).
    #[test]
    fn bernoulli_follows_numpys_inversion() {
        let mut rng = LegacyRandom::new(0);
        let got: Vec<bool> = [0.1, 0.9, 0.5, 0.0, 1.0, 0.7].into_iter().map(|p| rng.bernoulli(p)).collect();
        assert_eq!(got, [false, true, true, false, true, true]);
        let mut rng = LegacyRandom::new(0);
        let got: Vec<bool> = [0.0, 0.6, 0.6, 0.6].into_iter().map(|p| rng.bernoulli(p)).collect();
        assert_eq!(got, [false, false, false, true]);
    }
}
