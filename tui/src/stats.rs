//! Statistics of a tensor for the value viewer: extremes with where they are, mean and
//! spread, percentiles, counts of zeros and non-finite values, and a histogram of the
//! finite values. Computed on a worker thread (a tensor may hold hundreds of millions of
//! elements), in one pass plus one selection per percentile.

use onnx_eval::Tensor;

pub const BINS: usize = 32;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub count: usize,
    /// Over the finite values; `None` when there are none.
    pub min: Option<(f64, usize)>,
    pub max: Option<(f64, usize)>,
    pub mean: f64,
    pub std: f64,
    /// p1, p50, p99 of the finite values.
    pub percentiles: [f64; 3],
    pub zeros: usize,
    pub nan: usize,
    pub pos_inf: usize,
    pub neg_inf: usize,
    /// Counts of finite values in `BINS` equal bins from min to max.
    pub histogram: Vec<u64>,
}

/// The statistics of a numeric tensor (booleans count as 0 and 1); an error for strings.
pub fn of(t: &Tensor) -> Result<Stats, String> {
    let values = t.to_f64s()?;
    let mut s = Stats { count: values.len(), ..Stats::default() };
    let (mut sum, mut finite) = (0.0f64, Vec::with_capacity(values.len()));
    for (i, &v) in values.iter().enumerate() {
        if v.is_nan() {
            s.nan += 1;
            continue;
        }
        if v.is_infinite() {
            if v > 0.0 {
                s.pos_inf += 1
            } else {
                s.neg_inf += 1
            }
            continue;
        }
        if v == 0.0 {
            s.zeros += 1;
        }
        if s.min.is_none_or(|(m, _)| v < m) {
            s.min = Some((v, i));
        }
        if s.max.is_none_or(|(m, _)| v > m) {
            s.max = Some((v, i));
        }
        sum += v;
        finite.push(v);
    }
    if finite.is_empty() {
        return Ok(s);
    }
    let n = finite.len() as f64;
    s.mean = sum / n;
    s.std = (finite.iter().map(|v| (v - s.mean).powi(2)).sum::<f64>() / n).sqrt();
    let (lo, hi) = (s.min.map_or(0.0, |m| m.0), s.max.map_or(0.0, |m| m.0));
    s.histogram = vec![0; BINS];
    let width = (hi - lo) / BINS as f64;
    for &v in &finite {
        let bin = if width > 0.0 { ((v - lo) / width) as usize } else { 0 };
        s.histogram[bin.min(BINS - 1)] += 1;
    }
    for (slot, q) in s.percentiles.iter_mut().zip([0.01, 0.5, 0.99]) {
        let k = ((finite.len() - 1) as f64 * q).round() as usize;
        let (_, v, _) = finite.select_nth_unstable_by(k, f64::total_cmp);
        *slot = *v;
    }
    Ok(s)
}

/// A flat position as indices along each axis (`[0, 2, 5]`).
pub fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut at = vec![0; shape.len()];
    for (slot, &d) in at.iter_mut().zip(shape).rev() {
        if d > 0 {
            *slot = flat % d;
            flat /= d;
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_eval::Data;

    #[test]
    fn extremes_counts_and_percentiles() {
        let t = Tensor::new(vec![2, 3], Data::F32(vec![0.0, -2.0, 5.0, f32::NAN, f32::INFINITY, 1.0].into()));
        let s = of(&t).expect("numeric");
        assert_eq!((s.count, s.nan, s.pos_inf, s.neg_inf, s.zeros), (6, 1, 1, 0, 1));
        assert_eq!(s.min, Some((-2.0, 1)));
        assert_eq!(s.max, Some((5.0, 2)));
        assert_eq!(s.mean, 1.0);
        assert_eq!(s.percentiles, [-2.0, 1.0, 5.0]);
        assert_eq!(s.histogram.iter().sum::<u64>(), 4);
        assert_eq!(unravel(5, &[2, 3]), vec![1, 2]);
        assert!(of(&Tensor::new(vec![1], Data::Str(vec![b"a".to_vec()]))).is_err());
    }
}
