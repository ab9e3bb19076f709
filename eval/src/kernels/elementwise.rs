//! Element by element: unary maps, binary and variadic operators with broadcasting,
//! comparisons, logic, Where, Clip, Cast. float16 and bfloat16 are computed in f32 and
//! rounded once, as numpy does.

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use onnx_core::ir::DataType;

use super::{Ctx, Kernel, input, one, optional};
use crate::broadcast;
use crate::cast::numeric_like;
use crate::cast::{cast_to, from_f64_like, integers_as};
use crate::error::{KernelError, bad_attribute, bad_input, unsupported};
use crate::number::{Number, narrowed_half, widened_half};
use crate::value::{Data, Tensor, Value};
use crate::view::Layout;
use crate::with_number;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Add" => |ctx, i| binary::<AddOp>(ctx, i),
        "Sub" => |ctx, i| binary::<SubOp>(ctx, i),
        "Mul" => |ctx, i| binary::<MulOp>(ctx, i),
        "Div" => |ctx, i| binary::<DivOp>(ctx, i),
        "Pow" => pow,
        "Mod" => modulo,
        "Max" => |ctx, i| variadic::<MaxOp>(ctx, i),
        "Min" => |ctx, i| variadic::<MinOp>(ctx, i),
        "Sum" => |ctx, i| variadic::<AddOp>(ctx, i),
        "Mean" => mean,
        "PRelu" => prelu,
        "SwiGLU" => swiglu,
        "Equal" => |ctx, i| compare(ctx, i, |o| o == std::cmp::Ordering::Equal),
        "Less" => |ctx, i| compare(ctx, i, |o| o == std::cmp::Ordering::Less),
        "LessOrEqual" => |ctx, i| compare(ctx, i, |o| o != std::cmp::Ordering::Greater),
        "Greater" => |ctx, i| compare(ctx, i, |o| o == std::cmp::Ordering::Greater),
        "GreaterOrEqual" => |ctx, i| compare(ctx, i, |o| o != std::cmp::Ordering::Less),
        "And" => |ctx, i| logic(ctx, i, |a, b| a && b),
        "Or" => |ctx, i| logic(ctx, i, |a, b| a || b),
        "Xor" => |ctx, i| logic(ctx, i, |a, b| a != b),
        "Not" => |_, i| {
            let Data::Bool(v) = &*input(i, 0)?.data else { return Err(bad_input!("Not takes booleans")) };
            one(Tensor::new(input(i, 0)?.shape.clone(), Data::Bool(v.iter().map(|x| !x).collect())))
        },
        "Where" => where_,
        "BitShift" => bit_shift,
        "BitwiseAnd" => |ctx, i| bitwise(ctx, i, |a, b| a & b),
        "BitwiseOr" => |ctx, i| bitwise(ctx, i, |a, b| a | b),
        "BitwiseXor" => |ctx, i| bitwise(ctx, i, |a, b| a ^ b),
        "BitwiseNot" => |_, i| {
            let t = input(i, 0)?;
            one(integers_as(t.data_type(), t.shape.clone(), t.to_i64s()?.into_iter().map(|x| !x).collect()))
        },
        "Dropout" => dropout,
        "Identity" => |_, i| Ok(vec![i.first().copied().flatten().ok_or(bad_input!("input 0 is missing"))?.clone()]),
        "Cast" => cast,
        "CastLike" => |ctx, i| cast_with(ctx, input(i, 0)?, input(i, 1)?.data_type()),
        "Clip" => clip,
        "IsNaN" => |_, i| float_test(input(i, 0)?, f64::is_nan),
        "IsInf" => is_inf,
        "Abs" => |_, i| signed::<AbsOp>(input(i, 0)?),
        "Neg" => |_, i| signed::<NegOp>(input(i, 0)?),
        "Sign" => |_, i| signed::<SignOp>(input(i, 0)?),
        "Relu" => |_, i| signed::<ReluOp>(input(i, 0)?),
        "Exp" => |_, i| float(input(i, 0)?, crate::math::exp, f64::exp),
        "Log" => |_, i| float(input(i, 0)?, f32::ln, f64::ln),
        "Sqrt" => |_, i| float(input(i, 0)?, f32::sqrt, f64::sqrt),
        "Reciprocal" => |_, i| float(input(i, 0)?, f32::recip, f64::recip),
        "Sin" => |_, i| float(input(i, 0)?, f32::sin, f64::sin),
        "Cos" => |_, i| float(input(i, 0)?, f32::cos, f64::cos),
        "Tan" => |_, i| float(input(i, 0)?, f32::tan, f64::tan),
        "Asin" => |_, i| float(input(i, 0)?, f32::asin, f64::asin),
        "Acos" => |_, i| float(input(i, 0)?, f32::acos, f64::acos),
        "Atan" => |_, i| float(input(i, 0)?, f32::atan, f64::atan),
        "Sinh" => |_, i| float(input(i, 0)?, f32::sinh, f64::sinh),
        "Cosh" => |_, i| float(input(i, 0)?, f32::cosh, f64::cosh),
        "Asinh" => |_, i| float(input(i, 0)?, f32::asinh, f64::asinh),
        "Acosh" => |_, i| float(input(i, 0)?, f32::acosh, f64::acosh),
        "Atanh" => |_, i| float(input(i, 0)?, f32::atanh, f64::atanh),
        "Tanh" => |_, i| float(input(i, 0)?, crate::math::tanh, f64::tanh),
        "Floor" => |_, i| float(input(i, 0)?, f32::floor, f64::floor),
        "Ceil" => |_, i| float(input(i, 0)?, f32::ceil, f64::ceil),
        "Round" => |_, i| float(input(i, 0)?, f32::round_ties_even, f64::round_ties_even),
        "Erf" => |_, i| float(input(i, 0)?, crate::math::erf, libm::erf),
        "Sigmoid" => |_, i| float(input(i, 0)?, crate::math::sigmoid, sigmoid),
        "Softplus" => |_, i| float(input(i, 0)?, |x| softplus(f64::from(x)) as f32, softplus),
        "Softsign" => |_, i| float(input(i, 0)?, |x| x / (1.0 + x.abs()), |x| x / (1.0 + x.abs())),
        "Mish" => |_, i| float(input(i, 0)?, |x| mish(f64::from(x)) as f32, mish),
        "Elu" | "Selu" | "LeakyRelu" | "HardSigmoid" | "HardSwish" | "ThresholdedRelu" | "Celu" | "Gelu" | "Swish"
        | "Shrink" => parametric,
        _ => return None,
    };
    Some(k)
}

/// A binary arithmetic operator, for every numeric type.
pub trait NumOp {
    fn apply<T: Number>(a: T, b: T) -> T;
}

#[derive(Debug)]
pub struct AddOp;
#[derive(Debug)]
pub struct SubOp;
#[derive(Debug)]
pub struct MulOp;
#[derive(Debug)]
pub struct DivOp;
#[derive(Debug)]
pub struct MaxOp;
#[derive(Debug)]
pub struct MinOp;

impl NumOp for AddOp {
    fn apply<T: Number>(a: T, b: T) -> T {
        a.add(b)
    }
}
impl NumOp for SubOp {
    fn apply<T: Number>(a: T, b: T) -> T {
        a.sub(b)
    }
}
impl NumOp for MulOp {
    fn apply<T: Number>(a: T, b: T) -> T {
        a.mul(b)
    }
}
impl NumOp for DivOp {
    fn apply<T: Number>(a: T, b: T) -> T {
        a.div(b)
    }
}
impl NumOp for MaxOp {
    /// NaN wins, as numpy's maximum.
    fn apply<T: Number>(a: T, b: T) -> T {
        if a.partial_cmp(&b).is_none() {
            if a.is_nan() { a } else { b }
        } else if b > a {
            b
        } else {
            a
        }
    }
}
impl NumOp for MinOp {
    fn apply<T: Number>(a: T, b: T) -> T {
        if a.partial_cmp(&b).is_none() {
            if a.is_nan() { a } else { b }
        } else if b < a {
            b
        } else {
            a
        }
    }
}

/// `f` over `a` and `b` broadcast, with fast paths for equal shapes and scalars.
pub fn zip<T: Copy + Sync, U: Clone + Default + Send>(
    ctx: &Ctx<'_>,
    a: &[T],
    ash: &[usize],
    b: &[T],
    bsh: &[usize],
    f: impl Fn(T, T) -> U + Sync,
) -> Result<(Vec<usize>, Vec<U>), KernelError> {
    zip_sides(ctx, Side { data: a, shape: ash, layout: None }, Side { data: b, shape: bsh, layout: None }, f)
}

/// An operand of [`zip_sides`]: its elements and shape, and where each element lies when
/// it is a strided view ([`crate::view`]) rather than row-major.
#[derive(Debug)]
pub struct Side<'a, T> {
    pub data: &'a [T],
    pub shape: &'a [usize],
    pub layout: Option<&'a Layout>,
}

impl<'a, T> Side<'a, T> {
    fn of(data: &'a [T], t: &'a Tensor) -> Side<'a, T> {
        Side { data, shape: &t.shape, layout: t.layout.as_deref() }
    }

    /// Where it starts, and its stride along each axis of `out` (0 where it broadcasts).
    fn placed_on(&self, out: &[usize]) -> (usize, Vec<usize>) {
        match self.layout {
            None => (0, broadcast::input_strides(self.shape, out)),
            Some(layout) => (layout.offset, broadcast::placed_strides(self.shape, &layout.strides, out.len())),
        }
    }
}

/// Whether two shapes are equal, compared in line: `==` on slices calls the C library's
/// `memcmp`, which costs more than the comparison on the short shapes (often empty: the
/// scalars of shape arithmetic) that most calls compare.
#[inline]
fn same_shape(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// [`zip`] over operands that may be strided views (an Expand or a Transpose read in
/// place by Add, Sub, Mul or Div). Large outputs are cut into shares for the cores, whole
/// runs of the broadcast each.
pub fn zip_sides<T: Copy + Sync, U: Clone + Default + Send>(
    ctx: &Ctx<'_>,
    a: Side<'_, T>,
    b: Side<'_, T>,
    f: impl Fn(T, T) -> U + Sync,
) -> Result<(Vec<usize>, Vec<U>), KernelError> {
    let shape = broadcast::shape(&[a.shape, b.shape])?;
    // Broadcasting can make far more elements than either input holds ([n, 1] with [1, n]).
    ctx.check_grown(broadcast::elements(&shape), a.data.len().max(b.data.len()))?;
    let rows = a.layout.is_none() && b.layout.is_none();
    let (ash, bsh) = (a.shape, b.shape);
    let total = broadcast::elements(&shape);
    let out = if rows && same_shape(ash, bsh) {
        let (a, b) = (a.data, b.data);
        crate::shares::collect(total, 1, |first| a[first..].iter().zip(&b[first..]).map(|(&x, &y)| f(x, y)))
    } else if rows && b.data.len() == 1 && same_shape(&shape, ash) {
        let (a, y) = (a.data, b.data[0]);
        crate::shares::collect(total, 1, |first| a[first..].iter().map(|&x| f(x, y)))
    } else if rows && a.data.len() == 1 && same_shape(&shape, bsh) {
        let (x, b) = (a.data[0], b.data);
        crate::shares::collect(total, 1, |first| b[first..].iter().map(|&y| f(x, y)))
    } else if total == 0 {
        Vec::new()
    } else {
        // Runs of the broadcast: along each, an operand moves or repeats one element.
        let ((a0, sa), (b0, sb)) = (a.placed_on(&shape), b.placed_on(&shape));
        let (a, b) = (a.data, b.data);
        let runs = broadcast::Runs::new(&shape, [&sa, &sb]);
        let n = runs.len.max(1);
        let f = &f;
        let starts = |first| runs.starts_from(first).map(move |(i, j)| (a0 + i, b0 + j));
        match runs.moves {
            [true, true] => crate::shares::collect_lines(total, n, n, |first| {
                starts(first).map(|(i, j)| a[i..i + n].iter().zip(&b[j..j + n]).map(|(&x, &y)| f(x, y)))
            }),
            [true, false] => crate::shares::collect_lines(total, n, n, |first| {
                starts(first).map(|(i, j)| {
                    let y = b[j];
                    a[i..i + n].iter().map(move |&x| f(x, y))
                })
            }),
            [false, true] => crate::shares::collect_lines(total, n, n, |first| {
                starts(first).map(|(i, j)| {
                    let x = a[i];
                    b[j..j + n].iter().map(move |&y| f(x, y))
                })
            }),
            [false, false] => crate::shares::collect_lines(total, n, n, |first| {
                starts(first).map(|(i, j)| std::iter::repeat_n(f(a[i], b[j]), n))
            }),
        }
    };
    Ok((shape, out))
}

fn arith<O: NumOp>(ctx: &Ctx<'_>, a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    macro_rules! go {
        ($($v:ident),*) => {
            match (&*a.data, &*b.data) {
                $((Data::$v(x), Data::$v(y)) => {
                    let (shape, out) = zip_sides(ctx, Side::of(x, a), Side::of(y, b), O::apply)?;
                    Tensor::new(shape, Data::$v(out.into()))
                })*
                // 16-bit floats through float32, each buffer widened whole and the result
                // rounded once, where the buffers are not much larger than the views on
                // them: the slice conversions are eight values an instruction, one value
                // at a time they were a float16 model's Mul nodes' whole time.
                (Data::F16(x), Data::F16(y)) if x.len() <= 4 * a.len().max(1) && y.len() <= 4 * b.len().max(1) => {
                    let (xs, ys) = (x.to_f32_vec(), y.to_f32_vec());
                    let (shape, out) = zip_sides(ctx, Side::of(&xs, a), Side::of(&ys, b), O::apply)?;
                    Tensor::new(shape, narrowed_half(&out, DataType::Float16))
                }
                (Data::Bf16(x), Data::Bf16(y)) if x.len() <= 4 * a.len().max(1) && y.len() <= 4 * b.len().max(1) => {
                    let (xs, ys) = (x.to_f32_vec(), y.to_f32_vec());
                    let (shape, out) = zip_sides(ctx, Side::of(&xs, a), Side::of(&ys, b), O::apply)?;
                    Tensor::new(shape, narrowed_half(&out, DataType::Bfloat16))
                }
                (Data::F16(x), Data::F16(y)) => {
                    let (shape, out) = zip_sides(ctx, Side::of(x, a), Side::of(y, b), |p, q| f16::from_f32(O::apply(p.to_f32(), q.to_f32())))?;
                    Tensor::new(shape, Data::F16(out.into()))
                }
                (Data::Bf16(x), Data::Bf16(y)) => {
                    let (shape, out) = zip_sides(ctx, Side::of(x, a), Side::of(y, b), |p, q| bf16::from_f32(O::apply(p.to_f32(), q.to_f32())))?;
                    Tensor::new(shape, Data::Bf16(out.into()))
                }
                (x, y) => return Err(bad_input!("element types {} and {} do not combine", x.data_type().name(), y.data_type().name())),
            }
        };
    }
    Ok(go!(F32, F64, I8, I16, I32, I64, U8, U16, U32, U64))
}

fn binary<O: NumOp>(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    one(arith::<O>(ctx, input(inputs, 0)?, input(inputs, 1)?)?)
}

fn variadic<O: NumOp>(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let mut acc = input(inputs, 0)?.clone();
    for i in 1..inputs.len() {
        acc = arith::<O>(ctx, &acc, input(inputs, i)?)?;
    }
    one(acc)
}

fn mean(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let [Value::Tensor(sum)] = &variadic::<AddOp>(ctx, inputs)?[..] else { return Err(bad_input!("Mean: no sum")) };
    let n = inputs.len() as f64;
    one(float(sum, |x| (f64::from(x) / n) as f32, |x| x / n)?.pop_tensor()?)
}

trait PopTensor {
    fn pop_tensor(self) -> Result<Tensor, KernelError>;
}

impl PopTensor for Vec<Value> {
    fn pop_tensor(mut self) -> Result<Tensor, KernelError> {
        match self.pop() {
            Some(Value::Tensor(t)) => Ok(t),
            _ => Err(bad_input!("expected a tensor result")),
        }
    }
}

/// Pow: an integer base to integer exponents exactly (wrapping, as numpy's power);
/// everything else computed in f64 and rounded once to the base's type (integer results
/// truncate).
fn pow(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    if let (true, Ok(exponents)) = (a.data_type().is_integer(), b.to_i64s())
        && exponents.iter().all(|&e| e >= 0)
    {
        let data = with_number!(&*a.data, x => {
            let (shape, out) = zip_powers(ctx, x, &a.shape, &exponents, &b.shape)?;
            Tensor::new(shape, Number::data(out))
        }, other => return Err(bad_input!("Pow of {} values", other.data_type().name())));
        return one(data);
    }
    let (shape, out) = zip(ctx, &a.to_f64s()?, &a.shape, &b.to_f64s()?, &b.shape, f64::powf)?;
    one(numeric_like(a.data_type(), shape, out)?)
}

/// `x[i] ^ e[i]` broadcast, by repeated squaring with wrapping products.
fn zip_powers<T: Number>(
    ctx: &Ctx<'_>,
    x: &[T],
    xsh: &[usize],
    e: &[i64],
    esh: &[usize],
) -> Result<(Vec<usize>, Vec<T>), KernelError> {
    let xi: Vec<usize> = (0..x.len()).collect();
    let ei: Vec<usize> = (0..e.len()).collect();
    zip(ctx, &xi, xsh, &ei, esh, |i, j| {
        let (mut base, mut exp, mut acc) = (x[i], e[j], T::ONE);
        while exp > 0 {
            if exp & 1 == 1 {
                acc = acc.mul(base);
            }
            base = base.mul(base);
            exp >>= 1;
        }
        acc
    })
}

/// Mod: integers take the divisor's sign (Python's %) unless `fmod = 1`, which truncates
/// (C's fmod, required for floats).
fn modulo(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    let fmod = ctx.int("fmod").unwrap_or(0) != 0;
    macro_rules! ints {
        ($($v:ident),*) => {
            match (&*a.data, &*b.data) {
                $((Data::$v(x), Data::$v(y)) => {
                    let (shape, out) = zip(ctx, x, &a.shape, y, &b.shape, |p, q| {
                        if q == 0 {
                            return 0;
                        }
                        let r = p.wrapping_rem(q);
                        #[allow(unused_comparisons)]
                        let opposite = (r < 0) != (q < 0);
                        if !fmod && r != 0 && opposite { r.wrapping_add(q) } else { r }
                    })?;
                    return one(Tensor::new(shape, Data::$v(out.into())));
                })*
                _ => {}
            }
        };
    }
    ints!(I8, I16, I32, I64, U8, U16, U32, U64);
    let (x, y) = (a.to_f64s()?, b.to_f64s()?);
    // Python's modulo takes the divisor's sign: from the C remainder, so that an infinite
    // divisor works (-3 mod inf is inf) and a zero result keeps the divisor's sign.
    let python_mod = |p: f64, q: f64| {
        let r = p % q;
        if r == 0.0 {
            0.0f64.copysign(q)
        } else if (r < 0.0) != (q < 0.0) {
            r + q
        } else {
            r
        }
    };
    let (shape, out) = zip(ctx, &x, &a.shape, &y, &b.shape, |p, q| if fmod { p % q } else { python_mod(p, q) })?;
    one(from_f64_like(a.data_type(), shape, out)?)
}

fn prelu(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, slope) = (input(inputs, 0)?, input(inputs, 1)?);
    let (a, b) = (x.to_f64s()?, slope.to_f64s()?);
    // The slope broadcasts to X (unidirectionally).
    let (shape, out) = zip(ctx, &a, &x.shape, &b, &slope.shape, |v, s| if v < 0.0 { v * s } else { v })?;
    if shape != x.shape {
        return Err(bad_input!("slope of shape {:?} does not broadcast to {:?}", slope.shape, x.shape));
    }
    one(numeric_like(x.data_type(), shape, out)?)
}

/// Orders two elements of the same type (strings byte-wise); `None` when incomparable (NaN).
fn compare(
    ctx: &Ctx<'_>,
    inputs: &[Option<&Value>],
    keep: fn(std::cmp::Ordering) -> bool,
) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    let test = |o: Option<std::cmp::Ordering>| o.is_some_and(keep);
    macro_rules! go {
        ($($v:ident),*) => {
            match (&*a.data, &*b.data) {
                $((Data::$v(x), Data::$v(y)) => zip(ctx, x, &a.shape, y, &b.shape, |p, q| test(p.partial_cmp(&q)))?,)*
                (Data::Str(x), Data::Str(y)) => {
                    let xi: Vec<usize> = (0..x.len()).collect();
                    let yi: Vec<usize> = (0..y.len()).collect();
                    zip(ctx, &xi, &a.shape, &yi, &b.shape, |p, q| test(Some(x[p].cmp(&y[q]))))?
                }
                (x, y) => return Err(bad_input!("cannot compare {} with {}", x.data_type().name(), y.data_type().name())),
            }
        };
    }
    let (shape, out) = go!(F32, F64, F16, Bf16, I8, I16, I32, I64, U8, U16, U32, U64, Bool);
    one(Tensor::new(shape, Data::Bool(out)))
}

fn logic(ctx: &Ctx<'_>, inputs: &[Option<&Value>], f: fn(bool, bool) -> bool) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    let (Data::Bool(x), Data::Bool(y)) = (&*a.data, &*b.data) else {
        return Err(bad_input!("logic operators take booleans"));
    };
    let (shape, out) = zip(ctx, x, &a.shape, y, &b.shape, f)?;
    one(Tensor::new(shape, Data::Bool(out)))
}

#[allow(clippy::clone_on_copy)] // one macro arm per element type, strings included
fn where_(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (c, x, y) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let Data::Bool(cond) = &*c.data else { return Err(bad_input!("Where's condition must be bool")) };
    let shape = broadcast::shape(&[&c.shape, &x.shape, &y.shape])?;
    ctx.check_grown(broadcast::elements(&shape), c.len().max(x.len()).max(y.len()))?;
    let ic = broadcast::offsets(&shape, &broadcast::input_strides(&c.shape, &shape));
    let ix = broadcast::offsets(&shape, &broadcast::input_strides(&x.shape, &shape));
    let iy = broadcast::offsets(&shape, &broadcast::input_strides(&y.shape, &shape));
    macro_rules! go {
        ($($v:ident),*) => {
            match (&*x.data, &*y.data) {
                $((Data::$v(p), Data::$v(q)) => Data::$v(
                    ic.zip(ix).zip(iy).map(|((i, j), k)| if cond[i] { p[j].clone() } else { q[k].clone() }).collect(),
                ),)*
                (p, q) => return Err(bad_input!("Where's values are {} and {}", p.data_type().name(), q.data_type().name())),
            }
        };
    }
    one(Tensor::new(shape.clone(), go!(F32, F64, F16, Bf16, I8, I16, I32, I64, U8, U16, U32, U64, Bool, Str)))
}

/// `f` over float data (float16 and bfloat16 through f32).
pub fn float(
    t: &Tensor,
    f32f: impl Fn(f32) -> f32 + Sync,
    f64f: impl Fn(f64) -> f64,
) -> Result<Vec<Value>, KernelError> {
    let data = match &*t.data {
        Data::F32(v) => {
            // A loop rather than `collect`, whose loop would be compiled elsewhere, without
            // the wider instructions. Most of these are a polynomial or a division a value.
            Data::F32(crate::shares::map(v, FLOAT_FUNCTION_COST, f32f).into())
        }
        Data::F64(v) => Data::F64(v.iter().map(|&x| f64f(x)).collect()),
        data @ (Data::F16(_) | Data::Bf16(_)) => {
            let (mut v, dt) = crate::number::widened_half(data).unwrap_or((Vec::new(), DataType::Float16));
            v.iter_mut().for_each(|x| *x = f32f(*x));
            crate::number::narrowed_half(&v, dt)
        }
        other => return Err(bad_input!("expected floats, got {} values", other.data_type().name())),
    };
    one(Tensor::new(t.shape.clone(), data))
}

/// A map of every numeric type onto itself, written once over [`Number`].
trait UnaryOp {
    fn apply<T: Number>(x: T) -> T;
}

#[derive(Debug)]
struct AbsOp;
#[derive(Debug)]
struct NegOp;
#[derive(Debug)]
struct SignOp;
#[derive(Debug)]
struct ReluOp;

impl UnaryOp for AbsOp {
    #[inline(always)]
    fn apply<T: Number>(x: T) -> T {
        x.abs()
    }
}
impl UnaryOp for NegOp {
    #[inline(always)]
    fn apply<T: Number>(x: T) -> T {
        x.neg()
    }
}
impl UnaryOp for SignOp {
    #[inline(always)]
    fn apply<T: Number>(x: T) -> T {
        x.signum()
    }
}
impl UnaryOp for ReluOp {
    /// NaN stays NaN, as numpy's `maximum(x, 0)`.
    #[inline(always)]
    fn apply<T: Number>(x: T) -> T {
        if x < T::ZERO { T::ZERO } else { x }
    }
}

/// `O` over every numeric type in its own type (integers exactly; the 16-bit floats
/// through f32, rounded once).
fn signed<O: UnaryOp>(t: &Tensor) -> Result<Vec<Value>, KernelError> {
    let data = match widened_half(&t.data) {
        Some((v, dt)) => narrowed_half(&v.into_iter().map(O::apply).collect::<Vec<f32>>(), dt),
        None => with_number!(&*t.data, v => Number::data(map_numbers(v, O::apply)),
            other => return Err(bad_input!("expected numbers, got {} values", other.data_type().name()))),
    };
    one(Tensor::new(t.shape.clone(), data))
}

/// `f` over every element, compiled for the widest vector instructions, cut into shares
/// for the cores when there are many.
#[inline(always)]
fn map_numbers<T: Number>(v: &[T], f: impl Fn(T) -> T + Sync) -> Vec<T> {
    crate::shares::map(v, 1, f)
}

/// What a float function ([`float`]) costs a value against a copy, for cutting it into
/// shares ([`crate::shares`]): an exponential or an error function is a polynomial of
/// some ten multiply-adds, spread over the vector's lanes.
const FLOAT_FUNCTION_COST: usize = 4;

fn float_test(t: &Tensor, test: fn(f64) -> bool) -> Result<Vec<Value>, KernelError> {
    let v = t.to_f64s()?;
    one(Tensor::new(t.shape.clone(), Data::Bool(v.into_iter().map(test).collect())))
}

fn is_inf(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let (pos, neg) = (ctx.int("detect_positive").unwrap_or(1) != 0, ctx.int("detect_negative").unwrap_or(1) != 0);
    let v = t.to_f64s()?;
    let out = v.into_iter().map(|x| x.is_infinite() && ((x > 0.0 && pos) || (x < 0.0 && neg))).collect();
    one(Tensor::new(t.shape.clone(), Data::Bool(out)))
}

/// SwiGLU(A, B) = Swish(A) · B, Swish(x) = x · sigmoid(alpha · x): the gate computed in
/// the input's precision, as onnx's function body does.
fn swiglu(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let alpha = f64::from(ctx.float("alpha").unwrap_or(1.0));
    let gate = float(input(inputs, 0)?, |x| x * sigmoid(alpha * f64::from(x)) as f32, |x| x * sigmoid(alpha * x))?
        .pop_tensor()?;
    one(arith::<MulOp>(ctx, &gate, input(inputs, 1)?)?)
}

/// The logistic function in f32 with the vectorized exp: e^(−|x|) never overflows, and
/// a negative x takes `e / (1 + e)`, accurate where the result is tiny.
fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 { 1.0 / (1.0 + (-x).exp()) } else { x.exp() / (1.0 + x.exp()) }
}

fn softplus(x: f64) -> f64 {
    if x > 30.0 { x } else { x.exp().ln_1p() }
}

fn mish(x: f64) -> f64 {
    x * softplus(x).tanh()
}

fn cast(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let to = ctx.int("to").ok_or(bad_attribute!("Cast needs 'to'"))?;
    let dt = i32::try_from(to).ok().and_then(DataType::from_code).ok_or_else(|| bad_attribute!("unknown type {to}"))?;
    cast_with(ctx, input(inputs, 0)?, dt)
}

/// Cast and CastLike: `t` as `dt`, with the node's `saturate` and `round_mode`.
fn cast_with(ctx: &Ctx<'_>, t: &Tensor, dt: DataType) -> Result<Vec<Value>, KernelError> {
    if dt == DataType::Float8e8m0 {
        let (mode, saturate) = (ctx.string("round_mode").unwrap_or("up"), ctx.int("saturate") != Some(0));
        let values = cast_to(t, DataType::Float)?.to_f64s()?;
        let codes = values.into_iter().map(|x| crate::coded::encode_e8m0(x, mode, saturate)).collect();
        return one(Tensor::new(t.shape.clone(), Data::Coded(dt, codes)));
    }
    // Into a float8 type without saturation: overflow becomes infinity or NaN.
    if crate::coded::is_coded(dt) && !crate::coded::is_integer(dt) && ctx.int("saturate") == Some(0) {
        let codes =
            cast_to(t, DataType::Float)?.to_f64s()?.into_iter().map(|x| crate::coded::encode(dt, x, false)).collect();
        return one(Tensor::new(t.shape.clone(), Data::Coded(dt, codes)));
    }
    one(cast_to(t, dt)?)
}

fn bitwise(ctx: &Ctx<'_>, inputs: &[Option<&Value>], f: fn(i64, i64) -> i64) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    let (shape, out) = zip(ctx, &a.to_i64s()?, &a.shape, &b.to_i64s()?, &b.shape, f)?;
    one(integers_as(a.data_type(), shape, out))
}

fn bit_shift(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    let left = match ctx.string("direction") {
        Some("LEFT") => true,
        Some("RIGHT") => false,
        other => return Err(bad_attribute!("direction must be LEFT or RIGHT, not {other:?}")),
    };
    let dt = a.data_type();
    let signed = matches!(dt, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64);
    let width = match dt {
        DataType::Int8 | DataType::Uint8 => 8,
        DataType::Int16 | DataType::Uint16 => 16,
        DataType::Int32 | DataType::Uint32 => 32,
        _ => 64,
    };
    let shift = |x: i64, y: i64| -> i64 {
        if signed {
            // Signed types shift arithmetically; a shift outside [0, width) leaves only the
            // sign (right) or nothing (left), as onnx's reference does.
            return match (left, (0..width).contains(&y)) {
                (true, true) => x.wrapping_shl(y as u32),
                (false, true) => x >> y,
                (true, false) => 0,
                (false, false) => {
                    if x < 0 {
                        -1
                    } else {
                        0
                    }
                }
            };
        }
        let (x, y) = (x as u64, u32::try_from(y).unwrap_or(u32::MAX));
        (if left { x.checked_shl(y) } else { x.checked_shr(y) }).unwrap_or(0) as i64
    };
    let (shape, out) = zip(ctx, &a.to_i64s()?, &a.shape, &b.to_i64s()?, &b.shape, shift)?;
    one(integers_as(a.data_type(), shape, out))
}

/// Dropout: at inference (no `training_mode`, or false) the input and a mask of all true;
/// in training, elements dropped with probability `ratio` and the rest scaled up.
fn dropout(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let training = match optional(inputs, 2)? {
        Some(m) => matches!(&*m.data, Data::Bool(b) if b.first() == Some(&true)),
        None => false,
    };
    let ratio = match optional(inputs, 1)? {
        Some(r) => r.to_f64s()?.first().copied().unwrap_or(0.5),
        None => f64::from(ctx.float("ratio").unwrap_or(0.5)),
    };
    let mut out = vec![Value::Tensor(t.clone())];
    let mut mask = vec![true; t.len()];
    if training && ratio != 0.0 {
        if !(0.0..1.0).contains(&ratio) {
            return Err(bad_input!("ratio {ratio} is not in [0, 1)"));
        }
        // With a seed, the very mask onnx's reference draws: numpy's legacy RandomState
        // (MT19937 seeded by init_genrand) giving 53-bit uniform doubles; without one, a
        // seed from the clock.
        let seed = ctx.int("seed").map_or_else(super::random::clock_seed, |s| s as u32);
        let mut rng = super::random::LegacyRandom::new(seed);
        mask.iter_mut().for_each(|m| *m = rng.uniform() >= ratio);
        let scale = 1.0 / (1.0 - ratio);
        let kept = t.to_f64s()?.into_iter().zip(&mask).map(|(x, &m)| if m { x * scale } else { 0.0 }).collect();
        out[0] = Value::Tensor(numeric_like(t.data_type(), t.shape.clone(), kept)?);
    }
    if ctx.node.outputs.len() > 1 {
        out.push(Value::Tensor(Tensor::new(t.shape.clone(), Data::Bool(mask))));
    }
    Ok(out)
}

/// Clip in the input's own type: integers exactly, whatever their size. A bound is the
/// first element of its input (of the input's type) from opset 11, an attribute before.
fn clip(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    fn clipped<T: Number>(
        ctx: &Ctx<'_>,
        inputs: &[Option<&Value>],
        v: &[T],
        widen: impl Fn(&Data) -> Option<T>,
    ) -> Result<Vec<T>, KernelError> {
        let bound = |i: usize, attr: &str| -> Result<Option<T>, KernelError> {
            if ctx.opset < 11 {
                return Ok(ctx.float(attr).map(|b| T::from_f64(f64::from(b))));
            }
            match optional(inputs, i)? {
                Some(b) if !b.is_empty() => {
                    let b = b.contiguous();
                    let first = T::slice(&b.data).map(|s| s[0]).or_else(|| widen(&b.data));
                    first
                        .map(Some)
                        .ok_or_else(|| bad_input!("the bound is {}, not the input's type", b.data_type().name()))
                }
                _ => Ok(None),
            }
        };
        let (lo, hi) = (bound(1, "min")?, bound(2, "max")?);
        let (lo, hi) = (lo.unwrap_or(T::LOWEST), hi.unwrap_or(T::HIGHEST));
        // NaN fails both comparisons and stays NaN; a minimum above the maximum gives the
        // maximum, as numpy's clip.
        Ok(map_numbers(v, |x| {
            let x = if x < lo { lo } else { x };
            if x > hi { hi } else { x }
        }))
    }
    let data = match widened_half(&t.data) {
        Some((v, dt)) => {
            let half = |d: &Data| widened_half(d).and_then(|(b, _)| b.first().copied());
            narrowed_half(&clipped(ctx, inputs, &v, half)?, dt)
        }
        None => with_number!(&*t.data, v => Number::data(clipped(ctx, inputs, v, |_| None)?),
            other => return Err(bad_input!("Clip takes numbers, not {} values", other.data_type().name()))),
    };
    one(Tensor::new(t.shape.clone(), data))
}

/// The activations with attributes, computed in f64 and rounded once.
fn parametric(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let attr = |name: &str, default: f64| ctx.float(name).map_or(default, f64::from);
    match ctx.op() {
        "Elu" => {
            let alpha = attr("alpha", 1.0);
            through_f64(t, move |x| if x < 0.0 { alpha * (x.exp() - 1.0) } else { x })
        }
        "Selu" => {
            let (alpha, gamma) = (attr("alpha", 1.673_263_192_176_818_8), attr("gamma", 1.050_701_022_148_132_3));
            through_f64(t, move |x| if x <= 0.0 { gamma * (alpha * x.exp() - alpha) } else { gamma * x })
        }
        "LeakyRelu" => {
            let alpha = attr("alpha", 0.01);
            through_f64(t, move |x| if x < 0.0 { alpha * x } else { x })
        }
        "HardSigmoid" => {
            let (alpha, beta) = (attr("alpha", 0.2), attr("beta", 0.5));
            through_f64(t, move |x| (alpha * x + beta).clamp(0.0, 1.0))
        }
        "HardSwish" => through_f64(t, |x| x * (x / 6.0 + 0.5).clamp(0.0, 1.0)),
        "ThresholdedRelu" => {
            let alpha = attr("alpha", 1.0);
            through_f64(t, move |x| if x > alpha { x } else { 0.0 })
        }
        "Celu" => {
            let alpha = attr("alpha", 1.0);
            through_f64(t, move |x| x.max(0.0) + (alpha * ((x / alpha).exp() - 1.0)).min(0.0))
        }
        // float32 with the vectorizing erf and tanh, as onnxruntime computes it (within
        // 3·10⁻⁷ of the f64 result; libm's erf per element was most of a Gemma layer's
        // time); float64 exactly.
        "Gelu" => {
            if ctx.string("approximate") == Some("tanh") {
                float(t, crate::math::gelu_tanh, crate::math::gelu_tanh_f64)
            } else {
                float(t, crate::math::gelu, crate::math::gelu_f64)
            }
        }
        "Swish" => {
            let alpha = attr("alpha", 1.0);
            through_f64(t, move |x| x * sigmoid(alpha * x))
        }
        "Shrink" => {
            let (lambd, bias) = (attr("lambd", 0.5), attr("bias", 0.0));
            through_f64(t, move |x| {
                if x < -lambd {
                    x + bias
                } else if x > lambd {
                    x - bias
                } else {
                    0.0
                }
            })
        }
        other => Err(unsupported!("no activation {other}")),
    }
}

/// `f` over a float tensor, each element computed in f64 and rounded once; float32 and
/// float64 in one inlined loop each (no f64 copy of the tensor, no call per element).
fn through_f64(t: &Tensor, f: impl Fn(f64) -> f64 + Sync) -> Result<Vec<Value>, KernelError> {
    let data = match &*t.data {
        Data::F32(v) => Data::F32(map_numbers(v, |x| f(f64::from(x)) as f32).into()),
        Data::F64(v) => Data::F64(map_numbers(v, &f).into()),
        _ => return one(numeric_like(t.data_type(), t.shape.clone(), t.to_f64s()?.into_iter().map(f).collect())?),
    };
    one(Tensor::new(t.shape.clone(), data))
}
