//! This machine's peak rate of float32 arithmetic on one core, measured, so that a profile
//! can say how close a matrix product came to the hardware ("45 GFLOP/s" means little
//! without "of 150").
//!
//! The measure is a loop of independent fused multiply-adds over the widest vectors the
//! processor has (AVX-512, else AVX2 with FMA, else SSE2's separate multiply and add):
//! twelve chains of one vector each, more than the FMA units' latency × throughput, so
//! the units never wait. The best of a few short rounds is taken, as a machine shared
//! with other work is slower in some rounds, never faster.

use std::sync::OnceLock;
use std::time::Instant;

/// Independent accumulator vectors of `LANES` floats.
const CHAINS: usize = 12;
/// Iterations of one timed round (2 ms at 180 GFLOP/s, AVX-512 at 2.8 GHz).
const ROUND: usize = 1_000_000;
const ROUNDS: usize = 5;

/// Floating-point operations per second of one core at its peak (an FMA counts as two).
pub fn flops_per_core() -> f64 {
    static PEAK: OnceLock<f64> = OnceLock::new();
    *PEAK.get_or_init(measure)
}

fn measure() -> f64 {
    let (lanes, round): (usize, fn(usize)) = widest();
    let mut best = f64::INFINITY;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        round(std::hint::black_box(ROUND));
        best = best.min(started.elapsed().as_secs_f64());
    }
    (ROUND * CHAINS * lanes * 2) as f64 / best.max(1e-9)
}

/// The widest vector loop this processor runs, and its lanes.
fn widest() -> (usize, fn(usize)) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("fma") {
            return (16, |n| {
                // SAFETY: the processor was just found to have AVX-512F and FMA.
                #[allow(unsafe_code)]
                unsafe {
                    x86::avx512(n)
                }
            });
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            return (8, |n| {
                // SAFETY: the processor was just found to have AVX2 and FMA.
                #[allow(unsafe_code)]
                unsafe {
                    x86::avx2(n)
                }
            });
        }
    }
    // Without FMA (or on another architecture), a multiply and an add per lane, which
    // the compiler vectorizes for the baseline target.
    (4, plain::<4>)
}

/// `n` rounds of `acc = acc·m + c` on [`CHAINS`] vectors of `L` lanes, multiply and add
/// apart (no FMA).
fn plain<const L: usize>(n: usize) {
    let mut acc = [[1.0f32; L]; CHAINS];
    let (m, c) = (std::hint::black_box(0.999_999f32), std::hint::black_box(1e-7f32));
    for _ in 0..n {
        for chain in &mut acc {
            for a in chain.iter_mut() {
                *a = *a * m + c;
            }
        }
    }
    std::hint::black_box(acc);
}

/// The FMA loops in the processor's own vector instructions: twelve named accumulators, so
/// that each lives in a register (as arrays the compiler kept them in memory).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    macro_rules! fma_loop {
        ($n:expr, $set:ident, $fma:ident) => {{
            let (m, c) = ($set(std::hint::black_box(0.999_999)), $set(std::hint::black_box(1e-7)));
            let [mut a0, mut a1, mut a2, mut a3, mut a4, mut a5, mut a6, mut a7, mut a8, mut a9, mut a10, mut a11] =
                [$set(1.0); super::CHAINS];
            for _ in 0..$n {
                a0 = $fma(a0, m, c);
                a1 = $fma(a1, m, c);
                a2 = $fma(a2, m, c);
                a3 = $fma(a3, m, c);
                a4 = $fma(a4, m, c);
                a5 = $fma(a5, m, c);
                a6 = $fma(a6, m, c);
                a7 = $fma(a7, m, c);
                a8 = $fma(a8, m, c);
                a9 = $fma(a9, m, c);
                a10 = $fma(a10, m, c);
                a11 = $fma(a11, m, c);
            }
            // Kept, so that the loop is not optimized away.
            std::hint::black_box([a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11]);
        }};
    }

    #[target_feature(enable = "avx512f,fma")]
    pub fn avx512(n: usize) {
        fma_loop!(n, _mm512_set1_ps, _mm512_fmadd_ps)
    }

    #[target_feature(enable = "avx2,fma")]
    pub fn avx2(n: usize) {
        fma_loop!(n, _mm256_set1_ps, _mm256_fmadd_ps)
    }
}

#[cfg(test)]
mod tests {
    /// A rate, and a plausible one: above 1 GFLOP/s, below 10 TFLOP/s per core.
    #[test]
    fn the_peak_is_measured() {
        let peak = super::flops_per_core();
        assert!(peak > 1e9 && peak < 1e13, "{peak}");
    }
}
