//! Cutting a kernel's output into shares for the cores: the elementwise maps, pooling and
//! the other kernels whose outputs are independent of one another, beside the matrix
//! products ([`crate::gemm`]) and convolutions, which cut their own work.
//!
//! A share is a run of whole units (a value, a row, an image plane) of the output, made by
//! one thread; the first share is made on the calling thread (see `onnx-threads`). Each
//! output is made by the same code whatever the number of shares, so results never depend
//! on the threads.

/// Work below which a kernel is not cut: handing a share to a pool thread costs a wake-up
/// of some microseconds. Measured in element-operations of about a nanosecond (a copy or a
/// comparison of a float); a kernel weighs its units with what one costs (see
/// [`over_units`]).
const MIN_SHARE: usize = 1 << 16;

thread_local! {
    /// Set while a thread makes one share of a kernel that is itself cut among the cores.
    static INSIDE_A_SHARE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` with every kernel it calls kept on this thread: for work that is already one
/// of several shares on the cores (a convolution's tiles), where cutting it again would only
/// add hand-overs.
pub fn serial<R>(work: impl FnOnce() -> R) -> R {
    /// Puts the flag back however `work` ends: a panic caught further up (the terminal
    /// browser's worker catches them) must not leave this thread's later kernels uncut.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            INSIDE_A_SHARE.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(INSIDE_A_SHARE.with(|s| s.replace(true)));
    work()
}

/// Whether this thread is making a share of a kernel already cut (see [`serial`]).
pub fn in_a_share() -> bool {
    INSIDE_A_SHARE.with(std::cell::Cell::get)
}

/// How many shares `units` units costing `unit_cost` element-operations each are cut into:
/// one per core, none under [`MIN_SHARE`], and one when there is no pool or this thread
/// already makes a share.
pub fn count(units: usize, unit_cost: usize) -> usize {
    if onnx_threads::pool().is_none() || in_a_share() {
        return 1;
    }
    let work = units.saturating_mul(unit_cost.max(1));
    onnx_threads::cores().min(units).min(work / MIN_SHARE).max(1)
}

/// `work(first, part)` over `out` cut into shares of whole units of `unit` elements, each
/// unit costing `unit_cost` element-operations (see [`count`]): `part` is
/// `out[first * unit..]` up to the share's last unit (a last unit may be short when `out`
/// is not a multiple of `unit`).
pub fn over_units<T: Send>(out: &mut [T], unit: usize, unit_cost: usize, work: impl Fn(usize, &mut [T]) + Sync) {
    let unit = unit.max(1);
    let units = out.len().div_ceil(unit);
    let shares = count(units, unit_cost);
    if shares <= 1 {
        work(0, out);
        return;
    }
    let per_share = units.div_ceil(shares);
    let jobs: Vec<(usize, &mut [T])> =
        out.chunks_mut(per_share * unit).enumerate().map(|(i, part)| (i * per_share, part)).collect();
    onnx_threads::map_in_order(jobs, |(first, part)| serial(|| work(first, part)));
}

/// A vector of `len` values made in shares of single values costing `cost`
/// element-operations each: `items(first)` yields the values from position `first` on, and
/// the share takes as many as it holds. Each share's loop is compiled for the widest
/// vectors. The values are written straight into the vector's room: zeroing it first was
/// another pass over the output, and made an Add of two 4 MB tensors 20 % slower.
#[inline(always)]
pub fn collect<U, I>(len: usize, cost: usize, items: impl Fn(usize) -> I + Sync) -> Vec<U>
where
    U: Send + Default,
    I: Iterator<Item = U>,
{
    fill(len, 1, cost, true, |first| std::iter::once(items(first)))
}

/// A vector of `len` values made in shares of whole lines of `line` values costing `cost`
/// element-operations a line: `lines(first)` yields, from line `first` on, each line's
/// values (a broadcast's runs). Values a line or the lines do not give are
/// `U::default()`. As [`collect`], into the vector's room, compiled for the widest vectors.
#[inline(always)]
pub fn collect_lines<U, L, I>(len: usize, line: usize, cost: usize, lines: impl Fn(usize) -> L + Sync) -> Vec<U>
where
    U: Send + Default,
    L: Iterator<Item = I>,
    I: Iterator<Item = U>,
{
    fill(len, line, cost, false, lines)
}

/// [`collect_lines`], or with `flat` [`collect`]: single values as units, and one line
/// (`lines` yields one iterator) filling a whole share.
#[allow(unsafe_code)] // one vector's room filled from several threads; see SAFETY below
#[inline(always)]
fn fill<U, L, I>(len: usize, line: usize, cost: usize, flat: bool, lines: impl Fn(usize) -> L + Sync) -> Vec<U>
where
    U: Send + Default,
    L: Iterator<Item = I>,
    I: Iterator<Item = U>,
{
    let mut out: Vec<U> = Vec::with_capacity(len);
    let line = if flat { 1 } else { line.max(1) };
    over_units(&mut out.spare_capacity_mut()[..len], line, cost, |first, part| {
        crate::simd::widest(
            #[inline(always)]
            || {
                let mut lines = lines(first);
                let step = if flat { part.len().max(1) } else { line };
                for slots in part.chunks_mut(step) {
                    let mut written = 0;
                    if let Some(values) = lines.next() {
                        for (slot, v) in slots.iter_mut().zip(values) {
                            slot.write(v);
                            written += 1;
                        }
                    }
                    for slot in &mut slots[written..] {
                        slot.write(U::default());
                    }
                }
            },
        );
    });
    // SAFETY: `over_units` returned, so every share ran to its end (a panic in one is
    // resumed by it and this line is never reached; values written then leak, nothing is
    // read). The shares' parts cover the first `len` slots, and each share wrote every slot
    // of its part: a value, or the default where its lines gave none.
    unsafe { out.set_len(len) };
    out
}

/// `f` of every element of `x`, cut into shares of elements costing `cost`
/// element-operations each (see [`collect`]).
#[inline(always)]
pub fn map<T: Copy + Sync, U: Send + Default>(x: &[T], cost: usize, f: impl Fn(T) -> U + Sync) -> Vec<U> {
    collect(x.len(), cost, |first| x[first.min(x.len())..].iter().map(|&v| f(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_is_made_once_whatever_the_cut() {
        for (len, unit, cost) in [(1usize << 20, 1, 1), (1 << 20, 7, 1), (100_003, 10, 64), (5, 2, 1 << 20), (0, 3, 9)]
        {
            let mut out = vec![0u32; len];
            over_units(&mut out, unit, cost, |first, part| {
                for (i, o) in part.iter_mut().enumerate() {
                    *o += (first * unit + i) as u32 + 1;
                }
            });
            assert!(out.iter().enumerate().all(|(i, &o)| o == i as u32 + 1), "{len} {unit} {cost}");
        }
    }

    #[test]
    fn a_share_is_not_cut_again() {
        let mut out = vec![0u8; 1 << 20];
        serial(|| over_units(&mut out, 1, 1 << 10, |first, part| assert!(first == 0 && part.len() == 1 << 20)));
        assert!(!in_a_share());
        // Nor does a panic inside leave the flag set.
        let caught = std::panic::catch_unwind(|| serial(|| panic!("inside a share")));
        assert!(caught.is_err() && !in_a_share());
    }

    #[test]
    fn maps_every_element() {
        let x: Vec<f32> = (0..300_001).map(|i| i as f32).collect();
        for cost in [1, 8, 1 << 20] {
            let out = map(&x, cost, |v| v * 2.0 + 1.0);
            assert_eq!(out.len(), x.len());
            assert!(out.iter().zip(&x).all(|(o, v)| *o == v * 2.0 + 1.0), "cost {cost}");
        }
    }

    /// Every line lands in its place, in shares or not; what the lines do not give is the
    /// default.
    #[test]
    fn lines_fill_their_places_and_gaps_are_defaults() {
        for cost in [1, 1 << 20] {
            let out =
                collect_lines(70_000 * 3, 3, cost, |first| (first..70_000).map(|l| (0..3).map(move |k| l * 3 + k)));
            assert!(out.iter().enumerate().all(|(i, &v)| v == i), "cost {cost}");
            // Lines of one value (a transposed operand's broadcast runs).
            let ones = collect_lines(200_000, 1, cost, |first| (first..200_000).map(std::iter::once));
            assert!(ones.iter().enumerate().all(|(i, &v)| v == i), "lines of one, cost {cost}");
            let short = collect_lines(100_000, 4, cost, |first| (first..20_000).map(|_| std::iter::once(7u8)));
            for (i, &v) in short.iter().enumerate() {
                assert_eq!(v, if i % 4 == 0 && i < 80_000 { 7 } else { 0 }, "at {i}, cost {cost}");
            }
        }
        assert!(collect(0, 1, |_| std::iter::empty::<u8>()).is_empty());
    }
}
