//! Matrix products of f32 and f64 matrices through `matrixmultiply` (bluss; BLIS-style
//! packing and register blocking, runtime AVX/FMA dispatch, arbitrary strides, pure Rust: the
//! GEMM behind ndarray). Chosen over the plain loops the kernels started with because a
//! convolution or a dense layer spends nearly all its time here; strides let Gemm's
//! transposes cost nothing.
//!
//! The crate's entry points are `unsafe` (raw pointers and strides); this module is the only
//! place that calls them, after checking that every element the strides reach lies inside
//! the slices.

/// A matrix read from a slice with row and column strides (in elements).
#[derive(Clone, Copy, Debug)]
pub struct View<'a, T> {
    pub data: &'a [T],
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl<'a, T> View<'a, T> {
    /// A row-major matrix.
    pub fn rows(data: &'a [T], rows: usize, cols: usize) -> View<'a, T> {
        View { data, rows, cols, row_stride: cols, col_stride: 1 }
    }

    /// The same matrix transposed (no copy).
    pub fn t(self) -> View<'a, T> {
        View { rows: self.cols, cols: self.rows, row_stride: self.col_stride, col_stride: self.row_stride, ..self }
    }

    /// Whether every element the strides reach lies inside the slice.
    fn fits(&self) -> bool {
        if self.rows == 0 || self.cols == 0 {
            return true;
        }
        let last = (self.rows - 1).checked_mul(self.row_stride).zip((self.cols - 1).checked_mul(self.col_stride));
        last.and_then(|(r, c)| r.checked_add(c)).is_some_and(|end| end < self.data.len())
            && isize::try_from(self.row_stride).is_ok()
            && isize::try_from(self.col_stride).is_ok()
    }
}

macro_rules! gemm {
    ($name:ident, $t:ty, $call:path, $what:literal) => {
        #[doc = concat!("`c = alpha·a·b + beta·c` for ", $what, ", `c` row-major `a.rows × b.cols`.")]
        pub fn $name(alpha: $t, a: View<'_, $t>, b: View<'_, $t>, beta: $t, c: &mut [$t]) -> Result<(), String> {
            let (m, k, n) = check(&a, &b, c.len())?;
            if m == 0 || n == 0 {
                return Ok(());
            }
            if k == 0 {
                c.iter_mut().for_each(|x| *x *= beta);
                return Ok(());
            }
            // SAFETY: `check` verified that `a` (m×k) and `b` (k×n) reach only elements inside
            // their slices with these strides, that `c` holds exactly m×n elements (row stride
            // n, column stride 1), and that every stride fits in an isize; `c` is borrowed
            // mutably, so it overlaps neither input.
            #[allow(unsafe_code)]
            unsafe {
                $call(
                    m,
                    k,
                    n,
                    alpha,
                    a.data.as_ptr(),
                    a.row_stride as isize,
                    a.col_stride as isize,
                    b.data.as_ptr(),
                    b.row_stride as isize,
                    b.col_stride as isize,
                    beta,
                    c.as_mut_ptr(),
                    n as isize,
                    1,
                );
            }
            Ok(())
        }
    };
}

gemm!(sgemm, f32, matrixmultiply::sgemm, "f32");
gemm!(dgemm, f64, matrixmultiply::dgemm, "f64");

/// The dimensions of `a·b`, after checking that both views fit their slices and `c` holds
/// the product.
fn check<T>(a: &View<'_, T>, b: &View<'_, T>, c_len: usize) -> Result<(usize, usize, usize), String> {
    if a.cols != b.rows {
        return Err(format!("cannot multiply {}×{} by {}×{}", a.rows, a.cols, b.rows, b.cols));
    }
    if !a.fits() || !b.fits() {
        return Err("a matrix view reaches past its data".into());
    }
    if a.rows.checked_mul(b.cols) != Some(c_len) {
        return Err(format!("the result holds {c_len} elements, not {}×{}", a.rows, b.cols));
    }
    Ok((a.rows, a.cols, b.cols))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_match_the_definition() {
        let a: Vec<f32> = (0..6).map(|x| x as f32).collect(); // 2×3
        let b: Vec<f32> = (0..12).map(|x| (x as f32) * 0.5).collect(); // 3×4
        let mut c = vec![0.0; 8];
        sgemm(1.0, View::rows(&a, 2, 3), View::rows(&b, 3, 4), 0.0, &mut c).expect("fits");
        for i in 0..2 {
            for j in 0..4 {
                let want: f32 = (0..3).map(|k| a[i * 3 + k] * b[k * 4 + j]).sum();
                assert_eq!(c[i * 4 + j], want);
            }
        }
        // Transposed views: (aᵀ)ᵀ·b is a·b again.
        let at: Vec<f32> = (0..6).map(|x| a[(x % 2) * 3 + x / 2]).collect(); // 3×2
        let mut d = vec![0.0; 8];
        sgemm(1.0, View::rows(&at, 3, 2).t(), View::rows(&b, 3, 4), 0.0, &mut d).expect("fits");
        assert_eq!(c, d);
    }

    #[test]
    fn views_past_their_data_are_refused() {
        let a = vec![0f32; 5];
        let mut c = vec![0f32; 4];
        assert!(sgemm(1.0, View::rows(&a, 2, 3), View::rows(&a, 3, 2), 0.0, &mut c).is_err());
    }
}
