//! Matrix products: MatMul (numpy semantics: batched, broadcast batch axes, 1-D operands
//! promoted), Gemm, MatMulInteger. The first version: a plain i-k-j loop accumulating in
//! f64; a GEMM crate replaces it in the speed pass (issue 24, "Speed").

use onnx_core::ir::DataType;

use super::{ByType, Ctx, Kernel, count, input, one, optional};
use crate::broadcast;
use crate::error::{KernelError, bad_input, unsupported};
use crate::gemm::View;
use crate::kernels::common::numeric_like;
use crate::number::Number;
use crate::value::{Data, Tensor, Value};

/// MatMul's and Gemm's kernels by the element type of A; `kernel(op)` has the one for the
/// other types.
pub const BY_TYPE: &[ByType] = &[
    ByType { op: "MatMul", since: 1, types: &[DataType::Float], kernel: float_matmul },
    ByType {
        op: "MatMul",
        // MatMul takes integers from version 9 on.
        since: 9,
        types: &[DataType::Int32, DataType::Int64, DataType::Uint32, DataType::Uint64],
        kernel: integer_matmul,
    },
    ByType { op: "Gemm", since: 1, types: &[DataType::Float], kernel: float_gemm },
];

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Det" => det,
        "MatMul" => any_matmul,
        "MatMulInteger" => |ctx, i| {
            let (a, b) = (input(i, 0)?, input(i, 1)?);
            check_product(ctx, a, b)?;
            let (za, zb) = (optional(i, 2)?, optional(i, 3)?);
            if let Some(y) = int8_product(ctx, a, za, b, zb)? {
                return one(y);
            }
            if let (Some(av), Some(bv)) = (bytes_less_zero_point(a, za, Side::Rows)?, b_less_zero_point(ctx, b, zb)?) {
                let (shape, out) = exact_integer_product(&av, &a.shape, &bv, &b.shape)?;
                return one(Tensor::new(shape, Data::I32(out.into())));
            }
            let av = less_zero_point(a, za, Side::Rows)?;
            let bv = less_zero_point(b, zb, Side::Columns)?;
            let (shape, out) = matmul(&av, &a.shape, &bv, &b.shape)?;
            one(Tensor::new(shape, Data::I32(out.into_iter().map(|x| x as i32).collect())))
        },
        "QLinearMatMul" => qlinear_matmul,
        "Gemm" => gemm,
        _ => return None,
    };
    Some(k)
}

/// MatMul of float32 operands. Operands may be strided views (a transposed or sliced
/// operand read through the GEMM's strides, not copied first: `crate::view`).
fn float_matmul(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    let (Data::F32(x), Data::F32(y)) = (&*a.data, &*b.data) else { return any_matmul(ctx, inputs) };
    check_product(ctx, a, b)?;
    // Two dequantized 8-bit operands, as their 8-bit product (prepared with the plan).
    if let Some(y) = super::dequantized_product::run(ctx, a, b) {
        return one(y);
    }
    let (shape, out) = product(Operand::of(x, a), Operand::of(y, b), 1.0, crate::gemm::sgemm)?;
    one(Tensor::new(shape, Data::F32(out.into())))
}

/// MatMul of integers, exactly, wrapping as numpy's matmul does (through f64 an int64
/// product past 2^53 would round).
fn integer_matmul(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    macro_rules! integers {
        ($($v:ident),*) => {
            match (&*a.data, &*b.data) {
                $((Data::$v(x), Data::$v(y)) => {
                    check_product(ctx, a, b)?;
                    let (shape, out) = product(Operand::of(x, a), Operand::of(y, b), Number::ONE, integer_gemm)?;
                    one(Tensor::new(shape, Number::data(out)))
                })*
                _ => any_matmul(ctx, inputs),
            }
        };
    }
    integers!(I32, I64, U32, U64)
}

/// MatMul of the other element types (and of operands whose types differ): through f64,
/// the result in A's type.
fn any_matmul(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    check_product(ctx, a, b)?;
    // 16-bit floats widened to float32 (exactly), multiplied by the float32 GEMM and rounded
    // once, as onnxruntime's CPU provider computes them (through f64 a float16 BERT's
    // products ran at a tenth of the float32 speed).
    let half = |t: &Tensor| matches!(t.data_type(), DataType::Float16 | DataType::Bfloat16);
    if half(a) && a.data_type() == b.data_type() {
        let (x, y) = (ctx.f32s(a, 0)?, ctx.f32s(b, 1)?);
        let (shape, out) = product(Operand::rows(&x, &a.shape), Operand::rows(&y, &b.shape), 1.0, crate::gemm::sgemm)?;
        return one(Tensor::new(shape, crate::number::narrowed_half(&out, a.data_type())));
    }
    let (shape, out) = matmul(&a.to_f64s()?, &a.shape, &b.to_f64s()?, &b.shape)?;
    one(numeric_like(a.data_type(), shape, out)?)
}

/// Fails when `a × b` would hold more elements than the run allows and than either operand
/// holds ([n, 1] × [1, n] makes n² from 2n).
fn check_product(ctx: &Ctx<'_>, a: &Tensor, b: &Tensor) -> Result<(), KernelError> {
    let p = batched(&a.shape, &b.shape)?;
    ctx.check_grown(count(&p.shape)?, a.len().max(b.len()))
}

/// B of an integer product made once per plan, from a constant 2-D B and zero point
/// (inputs `b` and `zero` of the node): packed for the 8-bit dot products where the
/// processor has them, else B less its zero points as float32 for the exact float runs.
#[derive(Debug)]
pub(crate) enum PreparedB {
    Packed(crate::int8::PackedB),
    Floats { values: Vec<f32>, k: usize, n: usize },
}

pub(crate) fn prepare_b(
    ctx: &Ctx<'_>,
    inputs: &[Option<&Value>],
    (b, zero): (usize, usize),
) -> Result<Option<(super::Prepared, usize)>, KernelError> {
    let named = |i: usize| ctx.node.inputs.get(i).is_some_and(|n| !n.is_empty());
    let Some(Value::Tensor(b)) = inputs.get(b).copied().flatten() else { return Ok(None) };
    let zero = match inputs.get(zero).copied().flatten() {
        Some(Value::Tensor(z)) => Some(z),
        None if !named(zero) => None,
        _ => return Ok(None),
    };
    let (&[k, n], Some((bytes, signed))) = (&b.shape[..], crate::int8::tensor_bytes(b)) else { return Ok(None) };
    let zb = match zero {
        Some(z) => match crate::int8::tensor_integers(z) {
            Some((v, s)) if s == signed && (v.len() == 1 || v.len() == n) => v,
            _ => return Ok(None),
        },
        None => vec![0],
    };
    let form = match crate::int8::PackedB::new(&crate::int8::Operand { bytes, signed, zero: &zb }, (k, n)) {
        Some(packed) => PreparedB::Packed(packed),
        None => {
            let values = bytes
                .iter()
                .enumerate()
                .map(|(i, &x)| (crate::int8::byte_value(x, signed) - zb[if zb.len() == 1 { 0 } else { i % n }]) as f32)
                .collect();
            PreparedB::Floats { values, k, n }
        }
    };
    let bytes = match &form {
        PreparedB::Packed(p) => p.bytes(),
        PreparedB::Floats { values, .. } => 4 * values.len(),
    };
    Ok(Some((std::sync::Arc::new(form) as super::Prepared, bytes)))
}

impl PreparedB {
    pub(crate) fn shape(&self) -> (usize, usize) {
        match self {
            PreparedB::Packed(p) => p.shape(),
            PreparedB::Floats { k, n, .. } => (*k, *n),
        }
    }
}

/// Which axis of an operand of MatMulInteger a per-axis zero point runs along.
#[derive(Clone, Copy)]
enum Side {
    /// A's rows: one zero point per row (`[M]`, or `[D1, …, M, 1]` for a batch of them).
    Rows,
    /// B's columns: one zero point per column (`[N]`, or `[D1, …, 1, N]`).
    Columns,
}

/// The elements of `t` (an operand of MatMulInteger) less their zero point `zero`: one
/// for the whole tensor, or one per row of A or per column of B, as onnx defines it.
fn less_zero_point(t: &Tensor, zero: Option<&Tensor>, side: Side) -> Result<Vec<f64>, KernelError> {
    let mut values = t.to_f64s()?;
    let Some(zero) = zero else { return Ok(values) };
    let z = zero.to_f64s()?;
    if let [z] = z[..] {
        values.iter_mut().for_each(|v| *v -= z);
        return Ok(values);
    }
    let r = t.shape.len();
    // A vector operand is one row of A or one column of B.
    let (rows, cols) = match r {
        0 => return Err(bad_input!("MatMulInteger operands must have at least one axis")),
        1 if matches!(side, Side::Rows) => (1, t.shape[0]),
        1 => (t.shape[0], 1),
        _ => (t.shape[r - 2], t.shape[r - 1]),
    };
    let matrix = rows * cols;
    let per_matrix = match side {
        Side::Rows => rows,
        Side::Columns => cols,
    };
    // Either one set for every matrix of the batch, or one per matrix.
    let batched = z.len() != per_matrix;
    if per_matrix == 0 || (batched && z.len() != per_matrix * (t.len() / matrix.max(1))) {
        let along = if matches!(side, Side::Rows) { "rows of A" } else { "columns of B" };
        return Err(bad_input!(
            "a zero point of {} values for an operand of shape {:?}: one, or one per {along} ({per_matrix}), is \
             expected",
            z.len(),
            t.shape
        ));
    }
    for (i, v) in values.iter_mut().enumerate() {
        let within = i % matrix;
        let at = match side {
            Side::Rows => within / cols,
            Side::Columns => within % cols,
        };
        let set = if batched { i / matrix } else { 0 };
        *v -= z[set * per_matrix + at];
    }
    Ok(values)
}

/// The fewest rows of A for which [`int8_product`] packs B.
const INT8_MIN_ROWS: usize = 8;

/// MatMulInteger (and QLinearMatMul's accumulators) through the processor's 8-bit dot
/// products (`crate::int8`), where it has them and the product is the usual one: 8-bit A
/// of any rank times a 2-D 8-bit B (the weights), zero points one for all or one per row
/// of a 2-D A and per column of B; fewer than [`INT8_MIN_ROWS`] rows by integer row updates
/// on any processor (`int8::few_rows`). `None` otherwise; the exact float32 path takes
/// those.
fn int8_product(
    ctx: &Ctx<'_>,
    a: &Tensor,
    za: Option<&Tensor>,
    b: &Tensor,
    zb: Option<&Tensor>,
) -> Result<Option<Tensor>, KernelError> {
    // A strided view (a transposed operand) is not its elements in order.
    let bytes = crate::int8::tensor_bytes;
    let (Some((a_bytes, a_signed)), Some((b_bytes, b_signed))) = (bytes(a), bytes(b)) else { return Ok(None) };
    if b.rank() != 2 || a.rank() == 0 {
        return Ok(None);
    }
    let zeros = |z: Option<&Tensor>| -> Result<Option<Vec<i32>>, KernelError> {
        let Some(z) = z else { return Ok(Some(vec![0])) };
        Ok(crate::int8::tensor_integers(z).map(|(v, _)| v))
    };
    let (Some(za), Some(zb)) = (zeros(za)?, zeros(zb)?) else { return Ok(None) };
    let p = batched(&a.shape, &b.shape)?;
    let (k, n) = (p.k, p.n);
    let rows = a.len() / k.max(1);
    let per_row = za.len() == p.m && a.rank() == 2;
    let lhs = crate::int8::Operand { bytes: a_bytes, signed: a_signed, zero: &za };
    if k == 0 || (za.len() != 1 && !per_row) {
        return Ok(None);
    }
    // B packed when the plan was made (a constant weight and zero point).
    if let Some(PreparedB::Packed(packed)) = prepared_b(ctx, (k, n)) {
        let Some(a_rows) = crate::int8::RowsA::new(&lhs, (rows, k)) else { return Ok(None) };
        crate::gemm::count_flops(2 * rows * k * n);
        return Ok(crate::int8::multiply(&a_rows, packed).map(|c| Tensor::new(p.shape, Data::I32(c.into()))));
    }
    if zb.len() != 1 && zb.len() != n {
        return Ok(None);
    }
    let rhs = crate::int8::Operand { bytes: b_bytes, signed: b_signed, zero: &zb };
    // Fewer rows than the kernel takes at once do not pay for packing B on every call (one
    // row of 768 by 768: 0.176 ms packed against 0.085 ms through the float path): those
    // add B's rows into the sums.
    if rows < INT8_MIN_ROWS {
        crate::gemm::count_flops(2 * rows * k * n);
        return Ok(crate::int8::few_rows(&lhs, &rhs, (rows, k, n)).map(|c| Tensor::new(p.shape, Data::I32(c.into()))));
    }
    crate::gemm::count_flops(2 * rows * k * n);
    Ok(crate::int8::product(&lhs, &rhs, (rows, k, n)).map(|c| Tensor::new(p.shape, Data::I32(c.into()))))
}

/// The node's prepared B ([`PreparedB`]), when there is one of `(k, n)`.
fn prepared_b<'c>(ctx: &'c Ctx<'_>, (k, n): (usize, usize)) -> Option<&'c PreparedB> {
    ctx.prepared.and_then(|p| p.as_any().downcast_ref::<PreparedB>()).filter(|p| p.shape() == (k, n))
}

/// The operators whose constant B is prepared once per plan ([`PreparedB`]).
pub fn prepare(op: &str) -> Option<super::Prepare> {
    let prepare: super::Prepare = match op {
        "MatMulInteger" => |ctx, inputs| prepare_b(ctx, inputs, (1, 3)),
        "QLinearMatMul" => |ctx, inputs| prepare_b(ctx, inputs, (3, 5)),
        "MatMul" => super::prepare_widened,
        _ => return None,
    };
    Some(prepare)
}

/// B less its zero points as [`bytes_less_zero_point`] gives them, or as the plan prepared
/// them once for a constant B.
fn b_less_zero_point<'t>(
    ctx: &'t Ctx<'_>,
    b: &Tensor,
    zero: Option<&Tensor>,
) -> Result<Option<std::borrow::Cow<'t, [f32]>>, KernelError> {
    if let [k, n] = b.shape[..]
        && let Some(PreparedB::Floats { values, .. }) = prepared_b(ctx, (k, n))
    {
        return Ok(Some(values.into()));
    }
    Ok(bytes_less_zero_point(b, zero, Side::Columns)?.map(Into::into))
}

/// The elements of an 8-bit operand less their zero points (8-bit too), in float32, where
/// they are exact (each within ±255); `None` for other types, which take the f64 path.
fn bytes_less_zero_point(t: &Tensor, zero: Option<&Tensor>, side: Side) -> Result<Option<Vec<f32>>, KernelError> {
    let byte = |t: &Tensor| matches!(t.data_type(), DataType::Uint8 | DataType::Int8);
    if !byte(t) || zero.is_some_and(|z| !byte(z)) {
        return Ok(None);
    }
    let single = match zero {
        None => Some(0.0),
        Some(z) if z.len() == 1 => z.to_f64s()?.first().map(|&v| v as f32),
        Some(_) => None,
    };
    let Some(z) = single else {
        return Ok(Some(less_zero_point(t, zero, side)?.into_iter().map(|v| v as f32).collect()));
    };
    Ok(match &*t.data {
        Data::U8(v) => Some(v.iter().map(|&x| f32::from(x) - z).collect()),
        Data::I8(v) => Some(v.iter().map(|&x| f32::from(x) - z).collect()),
        _ => None,
    })
}

/// Terms of a dot product of 8-bit values less their zero points (each within ±255) whose
/// partial sums are all integers below 2^24 whatever the order of the additions
/// (258·255² < 2^24), so exact in float32.
pub(crate) const EXACT_F32_TERMS: usize = 258;

/// `a × b` (numpy's matmul rules) of float32 operands holding 8-bit values less their
/// zero points, exactly, as int32: through the float32 GEMM along runs of at most
/// [`EXACT_F32_TERMS`] of K, whose exact results are added as integers (wrapping, as an
/// int32 accumulator does). The f64 product it replaces ran MatMulInteger at a tenth of
/// the float GEMM's speed.
pub(crate) fn exact_integer_product(
    a: &[f32],
    ash: &[usize],
    b: &[f32],
    bsh: &[usize],
) -> Result<(Vec<usize>, Vec<i32>), KernelError> {
    let k = batched(ash, bsh)?.k;
    let mut total: Option<(Vec<usize>, Vec<i32>)> = None;
    for start in (0..k.max(1)).step_by(EXACT_F32_TERMS) {
        let len = EXACT_F32_TERMS.min(k - start);
        // A's columns and B's rows start..start+len, read in place through the strides.
        let (mut a_part, mut b_part) = (Operand::rows(a, ash), Operand::rows(b, bsh));
        let (mut a_shape, mut b_shape) = (ash.to_vec(), bsh.to_vec());
        let (ra, rb) = (ash.len(), bsh.len());
        a_part.offset = start * a_part.strides[ra - 1];
        a_shape[ra - 1] = len;
        let b_axis = if rb == 1 { 0 } else { rb - 2 };
        b_part.offset = start * b_part.strides[b_axis];
        b_shape[b_axis] = len;
        a_part.shape = &a_shape;
        b_part.shape = &b_shape;
        let (shape, part) = product(a_part, b_part, 1.0, crate::gemm::sgemm)?;
        match &mut total {
            None => total = Some((shape, exact_to_i32(&part))),
            Some((_, sums)) => add_exact_run(sums, &part),
        }
    }
    total.ok_or(bad_input!("an empty product"))
}

/// Float32 values that are exact integers (an exact run's sums) as int32, in a loop
/// compiled for the widest vectors (as an iterator chain in the baseline's it was a
/// seventh of a quantized MobileNet's run).
pub(crate) fn exact_to_i32(v: &[f32]) -> Vec<i32> {
    let mut out = vec![0i32; v.len()];
    crate::simd::widest(
        #[inline(always)]
        || {
            for (o, &x) in out.iter_mut().zip(v) {
                *o = exact_i32(x);
            }
        },
    );
    out
}

/// A float32 that is an integer of magnitude below 2^31 as that integer (a value that is
/// not gives some integer). Through the bits of its sum with 1.5·2^52 in f64, where the
/// integer is the low bits: `as i32` saturates and maps NaN to zero, which the compiler
/// did one element at a time with a comparison each (a tenth of a small MatMulInteger).
#[inline(always)]
fn exact_i32(x: f32) -> i32 {
    const SHIFT: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52
    (f64::from(x) + SHIFT).to_bits() as i32
}

/// Adds an exact run's float32 sums to int32 accumulators, wrapping as they do.
pub(crate) fn add_exact_run(sums: &mut [i32], run: &[f32]) {
    crate::simd::widest(
        #[inline(always)]
        || {
            for (s, &v) in sums.iter_mut().zip(run) {
                *s = s.wrapping_add(exact_i32(v));
            }
        },
    );
}

/// The shapes of a batched product with numpy's matmul rules: the output shape, the
/// broadcast batch axes, m, k and n.
struct Batched {
    shape: Vec<usize>,
    batch: Vec<usize>,
    m: usize,
    k: usize,
    n: usize,
}

fn batched(ash: &[usize], bsh: &[usize]) -> Result<Batched, KernelError> {
    if ash.is_empty() || bsh.is_empty() {
        return Err(bad_input!("MatMul operands must have at least one axis"));
    }
    // A vector is a row on the left, a column on the right (numpy's promotion).
    let (ra, rb) = (ash.len(), bsh.len());
    let (m, k) = if ra == 1 { (1, ash[0]) } else { (ash[ra - 2], ash[ra - 1]) };
    let (k2, n) = if rb == 1 { (bsh[0], 1) } else { (bsh[rb - 2], bsh[rb - 1]) };
    if k != k2 {
        return Err(bad_input!("shapes {ash:?} and {bsh:?} do not multiply ({k} ≠ {k2})"));
    }
    let batch = broadcast::shape(&[&ash[..ra.saturating_sub(2)], &bsh[..rb.saturating_sub(2)]])?;
    let mut shape = Vec::with_capacity(batch.len() + 2);
    shape.extend_from_slice(&batch);
    if ash.len() > 1 {
        shape.push(m);
    }
    if bsh.len() > 1 {
        shape.push(n);
    }
    Ok(Batched { shape, batch, m, k, n })
}

/// An operand of a product: its elements, shape, and where each element lies (a
/// row-major tensor, or a strided view of one).
struct Operand<'a, T> {
    data: &'a [T],
    shape: &'a [usize],
    offset: usize,
    strides: Vec<usize>,
}

impl<'a, T> Operand<'a, T> {
    /// `t`, whose elements are `data`.
    fn of(data: &'a [T], t: &'a Tensor) -> Operand<'a, T> {
        let (offset, strides) = t.placement();
        Operand { data, shape: &t.shape, offset, strides }
    }

    fn rows(data: &'a [T], shape: &'a [usize]) -> Operand<'a, T> {
        Operand { data, shape, offset: 0, strides: broadcast::strides(shape) }
    }

    /// The strides of its matrices' rows and columns (a vector promoted as numpy promotes
    /// it: a row on the left, a column on the right), and of each axis of `batch` (0 where
    /// it broadcasts).
    fn steps(&self, left: bool, batch: &[usize]) -> (usize, usize, Vec<usize>) {
        let r = self.shape.len();
        let (row, col) = match (r, left) {
            (1, true) => (0, self.strides[0]),
            (1, false) => (self.strides[0], 0),
            _ => (self.strides[r - 2], self.strides[r - 1]),
        };
        let own = &self.shape[..r.saturating_sub(2)];
        (row, col, broadcast::placed_strides(own, &self.strides, batch.len()))
    }
}

/// A GEMM of one precision (`gemm::sgemm` or `gemm::dgemm`).
type Gemm<T> = fn(T, View<'_, T>, View<'_, T>, T, &mut [T]) -> Result<(), KernelError>;

/// `a × b` with numpy's matmul rules, one GEMM per batch, each operand read through its
/// strides.
fn product<T: Copy + Default>(
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    one: T,
    gemm: Gemm<T>,
) -> Result<(Vec<usize>, Vec<T>), KernelError> {
    let p = batched(a.shape, b.shape)?;
    let (m, k, n) = (p.m, p.k, p.n);
    let mut out = vec![T::default(); count(&p.shape)?];
    // An empty product has nothing to compute (and its batch may be of any size).
    if out.is_empty() {
        return Ok((p.shape, out));
    }
    let (a_row, a_col, a_batch) = a.steps(true, &p.batch);
    let (b_row, b_col, b_batch) = b.steps(false, &p.batch);
    // One B for the whole batch (a weight matrix) and A's matrices one after the other:
    // one product of all A's rows, as a [batch·m, k] matrix. A sequence model's [2, 5, 32]
    // by [32, 32] was two 5-row products, each paying the call and a partly empty last
    // tile of rows.
    let batches = count(&p.batch)?;
    if batches > 1 && b_batch.iter().all(|&s| s == 0) && rows_follow_on(&p.batch, &a_batch, m * a_row) {
        let lhs = a.data.get(a.offset..).ok_or(bad_input!("the left operand is shorter than its shape"))?;
        let rhs = b.data.get(b.offset..).ok_or(bad_input!("the right operand is shorter than its shape"))?;
        let lhs = View { data: lhs, rows: batches * m, cols: k, row_stride: a_row, col_stride: a_col };
        let rhs = View { data: rhs, rows: k, cols: n, row_stride: b_row, col_stride: b_col };
        gemm(one, lhs, rhs, T::default(), &mut out)?;
        return Ok((p.shape, out));
    }
    let pairs = broadcast::offsets(&p.batch, &a_batch).zip(broadcast::offsets(&p.batch, &b_batch));
    for (i, (ia, ib)) in pairs.enumerate() {
        let lhs = a.data.get(a.offset + ia..).ok_or(bad_input!("the left operand is shorter than its shape"))?;
        let rhs = b.data.get(b.offset + ib..).ok_or(bad_input!("the right operand is shorter than its shape"))?;
        let lhs = View { data: lhs, rows: m, cols: k, row_stride: a_row, col_stride: a_col };
        let rhs = View { data: rhs, rows: k, cols: n, row_stride: b_row, col_stride: b_col };
        gemm(one, lhs, rhs, T::default(), &mut out[i * m * n..(i + 1) * m * n])?;
    }
    Ok((p.shape, out))
}

/// Whether the matrices read with `strides` over the batch axes `batch` lie one after the
/// other `matrix` elements apart (so that their rows continue with one row stride): each
/// axis of more than one step moves by the matrix times the axes after it.
fn rows_follow_on(batch: &[usize], strides: &[usize], matrix: usize) -> bool {
    let mut expected = Some(matrix);
    for (&len, &stride) in batch.iter().zip(strides).rev() {
        if len > 1 && Some(stride) != expected {
            return false;
        }
        expected = expected.and_then(|e| e.checked_mul(len));
    }
    true
}

/// `c = alpha·a·b + beta·c` over integers, wrapping: a plain loop (integer products are
/// rare in models; their speed matters less than their exactness).
fn integer_gemm<T: Number + Default>(
    alpha: T,
    a: View<'_, T>,
    b: View<'_, T>,
    beta: T,
    c: &mut [T],
) -> Result<(), KernelError> {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if b.rows != k || c.len() != m * n {
        return Err(bad_input!("a {m}×{k} by {}×{n} product into {} elements", b.rows, c.len()));
    }
    let at = |v: &View<'_, T>, r: usize, col: usize| {
        v.data
            .get(r * v.row_stride + col * v.col_stride)
            .copied()
            .ok_or(bad_input!("an operand is shorter than its shape"))
    };
    for i in 0..m {
        for j in 0..n {
            let mut sum = T::ZERO;
            for l in 0..k {
                sum = sum.add(at(&a, i, l)?.mul(at(&b, l, j)?));
            }
            let o = &mut c[i * n + j];
            *o = alpha.mul(sum).add(beta.mul(*o));
        }
    }
    Ok(())
}

/// `a × b` of float32 matrices with numpy's matmul rules.
pub fn matmul_f32(a: &[f32], ash: &[usize], b: &[f32], bsh: &[usize]) -> Result<(Vec<usize>, Vec<f32>), KernelError> {
    product(Operand::rows(a, ash), Operand::rows(b, bsh), 1.0, crate::gemm::sgemm)
}

/// `a × b` with numpy's matmul rules, in f64 (every other element type).
pub fn matmul(a: &[f64], ash: &[usize], b: &[f64], bsh: &[usize]) -> Result<(Vec<usize>, Vec<f64>), KernelError> {
    product(Operand::rows(a, ash), Operand::rows(b, bsh), 1.0, crate::gemm::dgemm)
}

fn transposed(v: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    // An empty matrix may have any number of rows (or columns): nothing to move.
    let rows = if v.is_empty() { 0 } else { rows };
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = v[r * cols + c];
        }
    }
    out
}

/// Gemm's operands and attributes, checked.
struct GemmArgs<'v> {
    a: &'v Tensor,
    b: &'v Tensor,
    ta: bool,
    tb: bool,
    alpha: f64,
    beta: f64,
}

fn gemm_args<'v>(ctx: &Ctx<'_>, inputs: &[Option<&'v Value>]) -> Result<GemmArgs<'v>, KernelError> {
    let (a, b) = (input(inputs, 0)?, input(inputs, 1)?);
    if a.rank() != 2 || b.rank() != 2 {
        return Err(bad_input!("Gemm takes matrices"));
    }
    let (ta, tb) = (ctx.int("transA").unwrap_or(0) != 0, ctx.int("transB").unwrap_or(0) != 0);
    let alpha = f64::from(ctx.float("alpha").unwrap_or(1.0));
    let beta = f64::from(ctx.float("beta").unwrap_or(1.0));
    let (m, n) = (a.shape[usize::from(ta)], b.shape[usize::from(!tb)]);
    ctx.check_grown(count(&[m, n])?, a.len().max(b.len()))?;
    Ok(GemmArgs { a, b, ta, tb, alpha, beta })
}

/// Gemm of float32 matrices (B of another type goes the general way).
fn float_gemm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let GemmArgs { a, b, ta, tb, alpha, beta } = gemm_args(ctx, inputs)?;
    let (Data::F32(x), Data::F32(y)) = (&*a.data, &*b.data) else { return gemm(ctx, inputs) };
    gemm_f32(x, &a.shape, ta, y, &b.shape, tb, alpha as f32, beta as f32, optional(inputs, 2)?)
}

/// Gemm of the other element types: through f64, the result in A's type.
fn gemm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let GemmArgs { a, b, ta, tb, alpha, beta } = gemm_args(ctx, inputs)?;
    let (mut av, mut ash) = (a.to_f64s()?, a.shape.clone());
    if ta {
        av = transposed(&av, ash[0], ash[1]);
        ash.reverse();
    }
    let (mut bv, mut bsh) = (b.to_f64s()?, b.shape.clone());
    if tb {
        bv = transposed(&bv, bsh[0], bsh[1]);
        bsh.reverse();
    }
    let (shape, mut out) = matmul(&av, &ash, &bv, &bsh)?;
    for o in &mut out {
        *o *= alpha;
    }
    if let Some(c) = optional(inputs, 2)? {
        let cv = c.to_f64s()?;
        if broadcast::shape(&[&c.shape, &shape])? != shape {
            return Err(bad_input!("C of shape {:?} does not broadcast to {shape:?}", c.shape));
        }
        let offsets = broadcast::offsets(&shape, &broadcast::input_strides(&c.shape, &shape));
        for (o, i) in out.iter_mut().zip(offsets) {
            *o += beta * cv[i];
        }
    }
    one(numeric_like(a.data_type(), shape, out)?)
}

/// Gemm of float32 matrices: the transposes are strides, C is broadcast into the result
/// first and scaled by beta inside the GEMM.
#[allow(clippy::too_many_arguments)]
fn gemm_f32(
    a: &[f32],
    ash: &[usize],
    ta: bool,
    b: &[f32],
    bsh: &[usize],
    tb: bool,
    alpha: f32,
    beta: f32,
    c: Option<&Tensor>,
) -> Result<Vec<Value>, KernelError> {
    let lhs = if ta { View::rows(a, ash[0], ash[1]).t() } else { View::rows(a, ash[0], ash[1]) };
    let rhs = if tb { View::rows(b, bsh[0], bsh[1]).t() } else { View::rows(b, bsh[0], bsh[1]) };
    let shape = vec![lhs.rows, rhs.cols];
    let mut out = vec![0.0f32; count(&shape)?];
    let beta = match c {
        Some(c) => {
            if broadcast::shape(&[&c.shape, &shape])? != shape {
                return Err(bad_input!("C of shape {:?} does not broadcast to {shape:?}", c.shape));
            }
            let values: Vec<f32> = match &*c.data {
                Data::F32(v) => v.to_vec(),
                _ => c.to_f64s()?.into_iter().map(|x| x as f32).collect(),
            };
            for (o, i) in out.iter_mut().zip(broadcast::offsets(&shape, &broadcast::input_strides(&c.shape, &shape))) {
                *o = values[i];
            }
            beta
        }
        None => 0.0,
    };
    crate::gemm::sgemm(alpha, lhs, rhs, beta, &mut out)?;
    one(Tensor::new(shape, Data::F32(out.into())))
}

/// Det: the determinant of each square matrix in the last two axes, by LU decomposition
/// with partial pivoting in f64.
fn det(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let r = x.rank();
    if r < 2 || x.shape[r - 1] != x.shape[r - 2] {
        return Err(bad_input!("Det needs square matrices in the last two axes, got shape {:?}", x.shape));
    }
    let n = x.shape[r - 1];
    if n == 0 {
        // The determinant of a 0×0 matrix is 1, for every one of the batch (whose other
        // axes may be of any size).
        let batch = count(&x.shape[..r - 2])?;
        ctx.check_grown(batch, x.len())?;
        return one(numeric_like(x.data_type(), x.shape[..r - 2].to_vec(), vec![1.0; batch])?);
    }
    let values = x.to_f64s()?;
    let dets = values
        .chunks_exact(n.saturating_mul(n))
        .map(|m| {
            let mut a = m.to_vec();
            let mut det = 1.0;
            for col in 0..n {
                let pivot = (col..n).max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()));
                let Some(p) = pivot.filter(|&p| a[p * n + col] != 0.0) else { return 0.0 };
                if p != col {
                    for k in 0..n {
                        a.swap(p * n + k, col * n + k);
                    }
                    det = -det;
                }
                let d = a[col * n + col];
                det *= d;
                for row in col + 1..n {
                    let f = a[row * n + col] / d;
                    for k in col..n {
                        a[row * n + k] -= f * a[col * n + k];
                    }
                }
            }
            det
        })
        .collect();
    one(numeric_like(x.data_type(), x.shape[..r - 2].to_vec(), dets)?)
}

/// QLinearMatMul: the integer product of the zero-point-shifted operands, rescaled by
/// `a_scale·b_scale / y_scale`, rounded half to even, shifted by `y_zero_point` and
/// saturated to its type (per-tensor scales and zero points).
fn qlinear_matmul(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let scalar = |i: usize, what: &str| -> Result<f64, KernelError> {
        let t = input(inputs, i)?;
        match t.to_f64s()?[..] {
            [v] => Ok(v),
            _ => Err(unsupported!("{what}: per-axis values are not supported yet")),
        }
    };
    let (a, b, zy) = (input(inputs, 0)?, input(inputs, 3)?, input(inputs, 7)?);
    let (sa, za, sb, zb) =
        (scalar(1, "a_scale")?, scalar(2, "a_zero_point")?, scalar(4, "b_scale")?, scalar(5, "b_zero_point")?);
    let (sy, zy_value) = (scalar(6, "y_scale")?, scalar(7, "y_zero_point")?);
    let (a_zero, b_zero) = (input(inputs, 2)?, input(inputs, 5)?);
    let (shape, product) = if let Some(y) = int8_product(ctx, a, Some(a_zero), b, Some(b_zero))? {
        let Data::I32(v) = &*y.data else { return Err(bad_input!("the 8-bit product gave no int32")) };
        (y.shape.clone(), v.iter().map(|&x| f64::from(x)).collect())
    } else if let (Some(av), Some(bv)) =
        (bytes_less_zero_point(a, Some(a_zero), Side::Rows)?, b_less_zero_point(ctx, b, Some(b_zero))?)
    {
        let (shape, product) = exact_integer_product(&av, &a.shape, &bv, &b.shape)?;
        (shape, product.into_iter().map(f64::from).collect())
    } else {
        let av: Vec<f64> = a.to_f64s()?.into_iter().map(|x| x - za).collect();
        let bv: Vec<f64> = b.to_f64s()?.into_iter().map(|x| x - zb).collect();
        matmul(&av, &a.shape, &bv, &b.shape)?
    };
    let (lo, hi) = match zy.data_type() {
        onnx_core::ir::DataType::Uint8 => (0.0, 255.0),
        onnx_core::ir::DataType::Int8 => (-128.0, 127.0),
        other => return Err(unsupported!("y_zero_point of type {} is not supported", other.name())),
    };
    // The rescale in float32, as onnx's reference takes it for float32 and float16 scales.
    let multiplier = (sa as f32 * sb as f32 / sy as f32) as f64;
    let out = product.into_iter().map(|c| ((c * multiplier).round_ties_even() + zy_value).clamp(lo, hi)).collect();
    one(numeric_like(zy.data_type(), shape, out)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a × b` by the definition, for row-major `a` of shape `[batch, m, k]` read through
    /// `a_at(batch, i, l)` and a 2-D `b`.
    fn by_definition(
        a_at: impl Fn(usize, usize, usize) -> f32,
        b: &[f32],
        (batch, m, k, n): (usize, usize, usize, usize),
    ) -> Vec<f32> {
        let mut out = Vec::new();
        for s in 0..batch {
            for i in 0..m {
                for j in 0..n {
                    out.push((0..k).map(|l| a_at(s, i, l) * b[l * n + j]).sum());
                }
            }
        }
        out
    }

    /// Exact integer sums in float32 come back as those integers, negative ones and the
    /// largest an exact run makes too.
    #[test]
    fn exact_float_sums_come_back_as_their_integers() {
        for x in [0i32, 1, -1, 7, -255 * 255, (1 << 24) - 1, -(1 << 24), 1 << 30, i32::MIN + 128] {
            assert_eq!(exact_i32(x as f32), x, "{x}");
        }
        assert_eq!(exact_to_i32(&[3.0, -4.0, 16_581_375.0]), [3, -4, 16_581_375]);
        let mut sums = [i32::MAX, -2];
        add_exact_run(&mut sums, &[1.0, -16_581_375.0]);
        assert_eq!(sums, [i32::MIN, -16_581_377]);
    }

    /// A batch of matrices times one weight matrix is computed as one product of all the
    /// batch's rows when they follow on, and batch by batch when they do not (a view whose
    /// batch axes are swapped): both give the definition.
    #[test]
    fn a_batch_times_one_matrix_is_the_definition_whether_or_not_its_rows_follow_on() {
        let (d0, d1, m, k, n) = (2, 3, 5, 7, 6);
        let a: Vec<f32> = (0..d0 * d1 * m * k).map(|x| ((x * 7) % 13) as f32 - 6.0).collect();
        let b: Vec<f32> = (0..k * n).map(|x| ((x * 5) % 11) as f32 * 0.25).collect();
        let want = by_definition(|s, i, l| a[(s * m + i) * k + l], &b, (d0 * d1, m, k, n));
        for b_shape in [vec![k, n], vec![1, k, n], vec![1, 1, k, n]] {
            let (shape, got) = matmul_f32(&a, &[d0, d1, m, k], &b, &b_shape).expect("multiplies");
            assert_eq!(shape, [d0, d1, m, n], "{b_shape:?}");
            assert_eq!(got, want, "{b_shape:?}");
        }
        assert!(rows_follow_on(&[d0, d1], &[d1 * m * k, m * k], m * k));
        // The batch axes swapped: shape [d1, d0, m, k], batch strides [m·k, d1·m·k].
        let swapped_strides = [m * k, d1 * m * k, k, 1];
        assert!(!rows_follow_on(&[d1, d0], &swapped_strides[..2], m * k));
        let swapped = Operand { data: &a, shape: &[d1, d0, m, k], offset: 0, strides: swapped_strides.to_vec() };
        let (shape, got) = product(swapped, Operand::rows(&b, &[k, n]), 1.0, crate::gemm::sgemm).expect("multiplies");
        assert_eq!(shape, [d1, d0, m, n]);
        let want = by_definition(|s, i, l| a[((s % d0) * d1 + s / d0) * m * k + i * k + l], &b, (d0 * d1, m, k, n));
        assert_eq!(got, want);
        // Axes of one step may have any stride.
        assert!(rows_follow_on(&[1, 4, 1], &[0, 10, 99], 10));
    }
}
