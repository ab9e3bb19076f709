//! The numeric element types as one generic type: what a kernel needs to compute in the
//! tensor's own element type (candle's `WithDType` is the model). Kernels written once over
//! [`Number`] run on float32 in float32 and on int64 exactly, instead of through f64, which
//! loses integers above 2^53 and costs a conversion each way.
//!
//! float16 and bfloat16 are not [`Number`]s: kernels widen them to f32 and round once, as
//! numpy computes them. Part of the data layer: it imports nothing from the kernels.

use half::slice::HalfFloatSliceExt;
use half::vec::HalfFloatVecExt;
use onnx_core::ir::DataType;

use crate::value::Data;

/// Arithmetic and conversions every numeric element type supports. Integer arithmetic
/// wraps, as numpy's does.
pub trait Number: Copy + Default + PartialOrd + Send + Sync + std::fmt::Debug + 'static {
    const DATA_TYPE: DataType;
    /// Whether the type is a floating-point type (NaN exists, division is exact).
    const FLOAT: bool;
    const ZERO: Self;
    const ONE: Self;
    /// The least value: negative infinity for floats (the start of a maximum).
    const LOWEST: Self;
    /// The greatest value: infinity for floats (the start of a minimum).
    const HIGHEST: Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// Integer division truncates; by zero it gives 0 (numpy's result, without the warning).
    fn div(self, o: Self) -> Self;
    /// The absolute value (wrapping for the most negative integer, as numpy's).
    fn abs(self) -> Self;
    /// The negation (wrapping for integers, unsigned ones too, as numpy's).
    fn neg(self) -> Self;
    /// -1, 0 or 1 (a float's zero and NaN as they are).
    fn signum(self) -> Self;
    fn is_nan(self) -> bool;
    fn to_f64(self) -> f64;
    /// As i64: integers wrap (u64 keeps its bits), floats truncate.
    fn to_i64(self) -> i64;
    /// From f64: floats round, integers truncate (saturating at the type's range).
    fn from_f64(v: f64) -> Self;
    /// From i64: floats round once, integers wrap (C's and numpy's conversion).
    fn from_i64(v: i64) -> Self;
    /// The elements of `data` when they are of this type.
    fn slice(data: &Data) -> Option<&[Self]>;
    /// Data of this type from its elements.
    fn data(values: Vec<Self>) -> Data;
}

/// The conversions of a [`Number`] impl: Rust's `as` (floats round, integers wrap or
/// truncate) and the data variant `$v`.
macro_rules! conversions {
    ($t:ty, $v:ident) => {
        #[inline(always)]
        fn to_f64(self) -> f64 {
            self as f64
        }
        #[inline(always)]
        fn to_i64(self) -> i64 {
            self as i64
        }
        #[inline(always)]
        fn from_f64(v: f64) -> Self {
            v as $t
        }
        #[inline(always)]
        fn from_i64(v: i64) -> Self {
            v as $t
        }
        fn slice(data: &Data) -> Option<&[Self]> {
            if let Data::$v(v) = data { Some(v) } else { None }
        }
        fn data(values: Vec<Self>) -> Data {
            Data::$v(values.into())
        }
    };
}

macro_rules! float_number {
    ($($t:ty => $v:ident, $dt:ident);*) => {$(
        impl Number for $t {
            const DATA_TYPE: DataType = DataType::$dt;
            const FLOAT: bool = true;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
            #[inline(always)]
            fn add(self, o: Self) -> Self { self + o }
            #[inline(always)]
            fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)]
            fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)]
            fn div(self, o: Self) -> Self { self / o }
            #[inline(always)]
            fn abs(self) -> Self { <$t>::abs(self) }
            #[inline(always)]
            fn neg(self) -> Self { -self }
            #[inline(always)]
            fn signum(self) -> Self {
                if self > 0.0 { 1.0 } else if self < 0.0 { -1.0 } else { self }
            }
            #[inline(always)]
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
            conversions!($t, $v);
        }
    )*};
}
float_number!(f32 => F32, Float; f64 => F64, Double);

macro_rules! int_number {
    ($($t:ty => $v:ident, $dt:ident, $abs:expr, $signum:expr);*) => {$(
        impl Number for $t {
            const DATA_TYPE: DataType = DataType::$dt;
            const FLOAT: bool = false;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline(always)]
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)]
            fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)]
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)]
            fn div(self, o: Self) -> Self { self.checked_div(o).unwrap_or(0) }
            #[inline(always)]
            fn abs(self) -> Self { $abs(self) }
            #[inline(always)]
            fn neg(self) -> Self { self.wrapping_neg() }
            #[inline(always)]
            fn signum(self) -> Self { $signum(self) }
            #[inline(always)]
            fn is_nan(self) -> bool { false }
            conversions!($t, $v);
        }
    )*};
}
int_number!(
    i8 => I8, Int8, i8::wrapping_abs, i8::signum;
    i16 => I16, Int16, i16::wrapping_abs, i16::signum;
    i32 => I32, Int32, i32::wrapping_abs, i32::signum;
    i64 => I64, Int64, i64::wrapping_abs, i64::signum;
    u8 => U8, Uint8, |x| x, |x: u8| u8::from(x > 0);
    u16 => U16, Uint16, |x| x, |x: u16| u16::from(x > 0);
    u32 => U32, Uint32, |x| x, |x: u32| u32::from(x > 0);
    u64 => U64, Uint64, |x| x, |x: u64| u64::from(x > 0)
);

/// Runs `$body` with `$v` bound to the elements of `$data` as a slice of its [`Number`]
/// type, when it is one (float32, float64 and the eight integer types); the match arms that
/// follow take the other variants (`other => …`, or one arm per variant).
#[macro_export]
macro_rules! with_number {
    ($data:expr, $v:ident => $body:expr, $($arms:tt)*) => {
        match $data {
            $crate::value::Data::F32($v) => $body,
            $crate::value::Data::F64($v) => $body,
            $crate::value::Data::I8($v) => $body,
            $crate::value::Data::I16($v) => $body,
            $crate::value::Data::I32($v) => $body,
            $crate::value::Data::I64($v) => $body,
            $crate::value::Data::U8($v) => $body,
            $crate::value::Data::U16($v) => $body,
            $crate::value::Data::U32($v) => $body,
            $crate::value::Data::U64($v) => $body,
            $($arms)*
        }
    };
}

/// `s` converted element by element to `D`, as numpy's `astype`: floats to integers
/// truncate (out of range and NaN give the most negative int64, wrapped to `D`, as numpy on
/// x86), integers to integers wrap, integers to floats and floats to floats round once.
pub fn converted<S: Number, D: Number>(s: &[S]) -> Vec<D> {
    if S::FLOAT && !D::FLOAT {
        let truncated = |x: f64| if x.is_finite() && x.abs() < 9.2e18 { x as i64 } else { i64::MIN };
        return s.iter().map(|&x| D::from_i64(truncated(x.to_f64()))).collect();
    }
    if !S::FLOAT && (S::LOWEST.to_f64() < 0.0 || !D::FLOAT) {
        // Signed integers go through i64 exactly; so do unsigned ones into integers
        // (u64 wraps into i64 and back, which keeps its bits).
        return s.iter().map(|&x| D::from_i64(x.to_i64())).collect();
    }
    s.iter().map(|&x| D::from_f64(x.to_f64())).collect()
}

/// float16 and bfloat16 elements widened to f32, with the type to round back to; `None`
/// for other data.
pub fn widened_half(data: &Data) -> Option<(Vec<f32>, DataType)> {
    match data {
        Data::F16(v) => Some((v.to_f32_vec(), DataType::Float16)),
        Data::Bf16(v) => Some((v.to_f32_vec(), DataType::Bfloat16)),
        _ => None,
    }
}

/// f32 values rounded back to the 16-bit float type `dt` ([`widened_half`]), to nearest,
/// ties to even.
///
/// Whole slices at a time: `half` converts a slice eight values per instruction where the
/// processor has F16C (found at run time), where its one-value conversion checks for F16C
/// on every call and stays a scalar loop. One value at a time, the conversions were most
/// of a float16 BERT's MatMul time.
pub fn narrowed_half(values: &[f32], dt: DataType) -> Data {
    match dt {
        DataType::Bfloat16 => Data::Bf16(Vec::<half::bf16>::from_f32_slice(values).into()),
        _ => Data::F16(Vec::<half::f16>::from_f32_slice(values).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_wrap_and_keep_every_bit() {
        // The trait's methods by name: the types' own methods of the same names panic on
        // overflow or differ for zero.
        assert_eq!(Number::add(i64::MAX, 1), i64::MIN);
        assert_eq!(Number::abs(i8::MIN), i8::MIN);
        assert_eq!(Number::neg(3u8), 253);
        assert_eq!(Number::signum(7u32), 1);
        assert_eq!(Number::signum(0u32), 0);
        assert_eq!(Number::signum(-9i16), -1);
        assert_eq!(Number::div(5i32, 0), 0);
        assert_eq!(converted::<f32, u8>(&[300.0, -1.0, f32::NAN]), vec![44, 255, 0]);
        assert_eq!(converted::<u64, i64>(&[u64::MAX]), vec![-1]);
        assert_eq!(converted::<i64, f64>(&[9_007_199_254_740_993]), vec![9_007_199_254_740_992.0]);
        assert_eq!(converted::<i64, i32>(&[1 << 40 | 7]), vec![7]);
        let big = 9_007_199_254_740_993i64;
        let data = i64::data(vec![big]);
        assert_eq!(i64::slice(&data), Some(&[big][..]));
        assert_eq!(f32::slice(&data), None);
    }

    #[test]
    fn floats_keep_nan_and_signed_zero() {
        assert!(Number::signum(f32::NAN).is_nan());
        assert_eq!(Number::signum(-0.0f64).to_bits(), (-0.0f64).to_bits());
        assert_eq!(f32::LOWEST, f32::NEG_INFINITY);
    }
}
