//! Loops compiled for the widest vector instructions the processor has, chosen when they
//! run. The crate is built for the baseline x86-64 (SSE2, four float32 lanes) so that the
//! binary runs on any machine; a loop over a tensor handed to [`widest`] is compiled a
//! second and third time with AVX2 and AVX-512 enabled (eight and sixteen lanes) and the
//! copy the processor supports runs. On the machine the benchmarks run on, the float32
//! exp and erf of `math` take 1.2 and 3.5 ns per value with SSE2.
//!
//! Results do not depend on the copy that runs: the same IEEE operations in the same order
//! per element (Rust never fuses a multiply and an add unless asked to with `mul_add`).
//!
//! How: the body is a closure called from a function with the target features enabled;
//! the closure has none of its own, so the compiler inlines it there and compiles it with
//! them. (This is how the `multiversion` and `pulp` crates work; a dependency for three
//! short functions was not worth it.)

/// Runs `body`, compiled for AVX-512 or AVX2 when the processor has them. Mark the closure
/// `#[inline(always)]` (and the functions it calls, if not small): a closure the compiler
/// does not inline into the copies runs with the baseline instructions in all of them.
#[inline(always)]
pub fn widest<R>(body: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_avx512() {
            // SAFETY: the processor has every feature `x86::avx512` enables (checked above).
            #[allow(unsafe_code)]
            return unsafe { x86::avx512(body) };
        }
        if x86::has_avx2() {
            // SAFETY: the processor has every feature `x86::avx2` enables (checked above).
            #[allow(unsafe_code)]
            return unsafe { x86::avx2(body) };
        }
    }
    body()
}

/// The low byte of `word(x)` for each value (a quantizer's integer held in a float's low
/// bits), in a loop compiled for the widest vectors: sixteen words at a time into 32-bit
/// lanes, then narrowed. Compiled for AVX-512 that is twice the baseline loop's speed (0.20
/// against 0.39 ms for 1.2 million values), where narrowing each word as it is made ran
/// three times slower than the baseline.
#[inline(always)]
pub fn low_bytes(x: &[f32], word: impl Fn(f32) -> u32 + Sync) -> Vec<u8> {
    low_parts(x, word, |w| w as u8)
}

/// [`low_bytes`] for any narrower word: `narrow(word(x))` for each value (the low 16 bits
/// for a 16-bit quantizer), sixteen words at a time.
#[inline(always)]
pub fn low_parts<T: Copy + Default + Send>(
    x: &[f32],
    word: impl Fn(f32) -> u32 + Sync,
    narrow: impl Fn(u32) -> T + Sync,
) -> Vec<T> {
    let mut out = vec![T::default(); x.len()];
    // Cut into shares for the cores in whole runs of sixteen.
    crate::shares::over_units(&mut out, 16, 16, |first, parts| {
        let x = &x[(first * 16).min(x.len())..];
        // A `move` closure holds the slices and the functions' references themselves: what
        // it reads through a reference to them is reloaded after each store.
        let (word, narrow) = (&word, &narrow);
        widest(
            #[inline(always)]
            move || {
                for (out, x) in parts.chunks_mut(16).zip(x.chunks(16)) {
                    let mut lanes = [0u32; 16];
                    for (lane, &v) in lanes.iter_mut().zip(x) {
                        *lane = word(v);
                    }
                    for (b, &lane) in out.iter_mut().zip(&lanes) {
                        *b = narrow(lane);
                    }
                }
            },
        );
    });
    out
}

/// Whether [`widest`] compiles its body with fused multiply-adds, so that `mul_add` there
/// is one instruction (elsewhere it is a call into the math library per element).
pub fn has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::has_avx2()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether [`widest`] compiles its body for AVX-512 (thirty-two vector registers of
/// sixteen float32 lanes), for kernels that size their register tiles by it.
pub fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::has_avx512()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    pub fn has_avx512() -> bool {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512vl")
            && has_avx2()
    }

    pub fn has_avx2() -> bool {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
    #[inline]
    pub fn avx512<R>(body: impl FnOnce() -> R) -> R {
        body()
    }

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub fn avx2<R>(body: impl FnOnce() -> R) -> R {
        body()
    }
}

#[cfg(test)]
mod tests {
    /// The vector copies give the bits the baseline loop gives.
    #[test]
    fn every_copy_computes_the_same_bits() {
        let x: Vec<f32> = (0..10_000).map(|i| (i as f32 - 5000.0) * 0.013).collect();
        let plain: Vec<f32> = x.iter().map(|&v| crate::math::erf(v) + crate::math::exp(v)).collect();
        let wide: Vec<f32> = super::widest(
            #[inline(always)]
            || x.iter().map(|&v| crate::math::erf(v) + crate::math::exp(v)).collect(),
        );
        assert!(plain.iter().zip(&wide).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}
