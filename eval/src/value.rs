//! Run-time values: tensors of concrete shape, sequences and optionals. Tensor data is
//! one buffer per element type (a vector, or for initializers a view of the model's bytes:
//! [`crate::buf`]), behind an `Arc` so that Reshape, Identity, Squeeze and the like share
//! it instead of copying. It is read row-major and contiguous, except by the few kernels
//! that take strided views ([`crate::view`]: what Transpose, Slice and Expand make when
//! only such kernels read their result).

use std::sync::Arc;

use half::{bf16, f16};
use onnx_core::ir::{DataType, Str, Tensor as IrTensor};

use bytes::Bytes;

use crate::buf::Buf;
use crate::error::{KernelError, bad_input, limit, unsupported};

/// The elements of a tensor, one variant per element type the evaluator computes with.
/// Numeric elements are a [`Buf`]: made by a kernel, or viewed where an initializer's bytes
/// lie in the model.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    F32(Buf<f32>),
    F64(Buf<f64>),
    F16(Buf<f16>),
    Bf16(Buf<bf16>),
    I8(Buf<i8>),
    I16(Buf<i16>),
    I32(Buf<i32>),
    I64(Buf<i64>),
    U8(Buf<u8>),
    U16(Buf<u16>),
    U32(Buf<u32>),
    U64(Buf<u64>),
    Bool(Vec<bool>),
    /// Strings as bytes: ONNX strings need not be UTF-8.
    Str(Vec<Vec<u8>>),
    /// The float8, float4 and 2- and 4-bit integer types: one code per element
    /// (see [`crate::coded`]).
    Coded(DataType, Vec<u8>),
}

/// Applies `$body` to the vector inside any variant of `$data`, bound as `$v`.
#[macro_export]
macro_rules! with_data {
    ($data:expr, $v:ident => $body:expr) => {
        $crate::with_number!($data, $v => $body,
            $crate::value::Data::F16($v) => $body,
            $crate::value::Data::Bf16($v) => $body,
            $crate::value::Data::Bool($v) => $body,
            $crate::value::Data::Str($v) => $body,
            $crate::value::Data::Coded(_, $v) => $body,
        )
    };
}

/// Rebuilds data of the same variant from `$body`, which maps the vector `$v` to a vector
/// of the same element type.
#[macro_export]
macro_rules! map_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            $crate::value::Data::F32($v) => $crate::value::Data::F32(($body).into()),
            $crate::value::Data::F64($v) => $crate::value::Data::F64(($body).into()),
            $crate::value::Data::F16($v) => $crate::value::Data::F16(($body).into()),
            $crate::value::Data::Bf16($v) => $crate::value::Data::Bf16(($body).into()),
            $crate::value::Data::I8($v) => $crate::value::Data::I8(($body).into()),
            $crate::value::Data::I16($v) => $crate::value::Data::I16(($body).into()),
            $crate::value::Data::I32($v) => $crate::value::Data::I32(($body).into()),
            $crate::value::Data::I64($v) => $crate::value::Data::I64(($body).into()),
            $crate::value::Data::U8($v) => $crate::value::Data::U8(($body).into()),
            $crate::value::Data::U16($v) => $crate::value::Data::U16(($body).into()),
            $crate::value::Data::U32($v) => $crate::value::Data::U32(($body).into()),
            $crate::value::Data::U64($v) => $crate::value::Data::U64(($body).into()),
            $crate::value::Data::Bool($v) => $crate::value::Data::Bool($body),
            $crate::value::Data::Str($v) => $crate::value::Data::Str($body),
            $crate::value::Data::Coded(dt, $v) => $crate::value::Data::Coded(*dt, $body),
        }
    };
}

impl Data {
    /// The bytes the elements take in memory.
    pub fn byte_size(&self) -> usize {
        match self {
            Data::Str(v) => v.iter().map(Vec::len).sum(),
            Data::Bool(v) => v.len(),
            Data::Coded(_, v) => v.len(),
            other => with_data!(other, v => std::mem::size_of_val(v.as_slice())),
        }
    }

    pub fn len(&self) -> usize {
        with_data!(self, v => v.len())
    }

    /// Whether the elements are a view of the model's bytes rather than a copy.
    pub fn is_view(&self) -> bool {
        match self {
            Data::F32(v) => v.is_view(),
            Data::F64(v) => v.is_view(),
            Data::F16(v) => v.is_view(),
            Data::Bf16(v) => v.is_view(),
            Data::I8(v) => v.is_view(),
            Data::I16(v) => v.is_view(),
            Data::I32(v) => v.is_view(),
            Data::I64(v) => v.is_view(),
            Data::U8(v) => v.is_view(),
            Data::U16(v) => v.is_view(),
            Data::U32(v) => v.is_view(),
            Data::U64(v) => v.is_view(),
            Data::Bool(_) | Data::Str(_) | Data::Coded(..) => false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn data_type(&self) -> DataType {
        match self {
            Data::F32(_) => DataType::Float,
            Data::F64(_) => DataType::Double,
            Data::F16(_) => DataType::Float16,
            Data::Bf16(_) => DataType::Bfloat16,
            Data::I8(_) => DataType::Int8,
            Data::I16(_) => DataType::Int16,
            Data::I32(_) => DataType::Int32,
            Data::I64(_) => DataType::Int64,
            Data::U8(_) => DataType::Uint8,
            Data::U16(_) => DataType::Uint16,
            Data::U32(_) => DataType::Uint32,
            Data::U64(_) => DataType::Uint64,
            Data::Bool(_) => DataType::Bool,
            Data::Str(_) => DataType::String,
            Data::Coded(dt, _) => *dt,
        }
    }

    /// The elements at `indices`, in that order (gathers, transposes, slices).
    #[allow(clippy::clone_on_copy)] // one macro arm per element type, strings included
    pub fn pick(&self, indices: impl Iterator<Item = usize>) -> Data {
        map_data!(self, v => indices.map(|i| v[i].clone()).collect::<Vec<_>>())
    }

    /// Empty data of element type `dt`, with room for `capacity` elements.
    pub fn empty(dt: DataType, capacity: usize) -> Result<Data, KernelError> {
        Ok(match dt {
            DataType::Float => Data::F32(Vec::with_capacity(capacity).into()),
            DataType::Double => Data::F64(Vec::with_capacity(capacity).into()),
            DataType::Float16 => Data::F16(Vec::with_capacity(capacity).into()),
            DataType::Bfloat16 => Data::Bf16(Vec::with_capacity(capacity).into()),
            DataType::Int8 => Data::I8(Vec::with_capacity(capacity).into()),
            DataType::Int16 => Data::I16(Vec::with_capacity(capacity).into()),
            DataType::Int32 => Data::I32(Vec::with_capacity(capacity).into()),
            DataType::Int64 => Data::I64(Vec::with_capacity(capacity).into()),
            DataType::Uint8 => Data::U8(Vec::with_capacity(capacity).into()),
            DataType::Uint16 => Data::U16(Vec::with_capacity(capacity).into()),
            DataType::Uint32 => Data::U32(Vec::with_capacity(capacity).into()),
            DataType::Uint64 => Data::U64(Vec::with_capacity(capacity).into()),
            DataType::Bool => Data::Bool(Vec::with_capacity(capacity)),
            DataType::String => Data::Str(Vec::with_capacity(capacity)),
            dt if crate::coded::is_coded(dt) => Data::Coded(dt, Vec::with_capacity(capacity)),
            other => return Err(unsupported!("{} tensors are not supported yet", other.name())),
        })
    }

    /// Appends all of `other`, which must be of the same element type.
    pub fn extend_from(&mut self, other: &Data) -> Result<(), KernelError> {
        self.extend_from_range(other, 0..other.len())
    }

    /// Concat's layout: for each of `outer` rows, each part's next `block` elements in turn,
    /// the element type matched once rather than per block (Concat along a late axis
    /// copies blocks of one or a few elements).
    pub fn interleave(parts: &[(&Data, usize)], outer: usize) -> Result<Data, KernelError> {
        let Some(&(first, _)) = parts.first() else { return Err(bad_input!("nothing to join")) };
        let total = parts.iter().map(|(_, block)| block).sum::<usize>().saturating_mul(outer);
        let differ = |other: &Data| {
            bad_input!("element types differ: {} and {}", first.data_type().name(), other.data_type().name())
        };
        macro_rules! arms {
            ($($variant:ident),*) => {
                match first {
                    $(Data::$variant(_) => {
                        let slices = parts
                            .iter()
                            .map(|&(d, block)| match d {
                                Data::$variant(v) => Ok((v.as_slice(), block)),
                                other => Err(differ(other)),
                            })
                            .collect::<Result<Vec<_>, KernelError>>()?;
                        Data::$variant(interleave_slices(&slices, outer, total).into())
                    })*
                    Data::Coded(dt, _) => {
                        let slices = parts
                            .iter()
                            .map(|&(d, block)| match d {
                                Data::Coded(other, v) if other == dt => Ok((v.as_slice(), block)),
                                other => Err(differ(other)),
                            })
                            .collect::<Result<Vec<_>, KernelError>>()?;
                        Data::Coded(*dt, interleave_slices(&slices, outer, total))
                    }
                }
            };
        }
        Ok(arms!(F32, F64, F16, Bf16, I8, I16, I32, I64, U8, U16, U32, U64, Bool, Str))
    }

    /// Sets element `to` to `from[at]` for each pair (`to`, `at`), both in range, `from`
    /// of the same element type: a scatter, in place.
    pub fn assign(&mut self, pairs: impl Iterator<Item = (usize, usize)>, from: &Data) -> Result<(), KernelError> {
        macro_rules! arms {
            ($($variant:ident),*) => {
                match (self, from) {
                    $((Data::$variant(a), Data::$variant(b)) => {
                        let a = a.as_mut_vec();
                        pairs.for_each(|(to, at)| a[to] = b[at]);
                    })*
                    (Data::Bool(a), Data::Bool(b)) => pairs.for_each(|(to, at)| a[to] = b[at]),
                    (Data::Str(a), Data::Str(b)) => pairs.for_each(|(to, at)| a[to].clone_from(&b[at])),
                    (Data::Coded(x, a), Data::Coded(y, b)) if x == y => pairs.for_each(|(to, at)| a[to] = b[at]),
                    (a, b) => {
                        return Err(bad_input!(
                            "element types differ: {} and {}",
                            a.data_type().name(),
                            b.data_type().name()
                        ))
                    }
                }
            };
        }
        arms!(F32, F64, F16, Bf16, I8, I16, I32, I64, U8, U16, U32, U64);
        Ok(())
    }

    /// Appends `other[range]`, copied as a slice (no per-element step, no temporary).
    pub fn extend_from_range(&mut self, other: &Data, range: std::ops::Range<usize>) -> Result<(), KernelError> {
        macro_rules! arms {
            ($($variant:ident),*) => {
                match (self, other) {
                    $((Data::$variant(a), Data::$variant(b)) => a.extend_from_slice(&b[range]),)*
                    (Data::Coded(x, a), Data::Coded(y, b)) if x == y => a.extend_from_slice(&b[range]),
                    (a, b) => {
                        return Err(bad_input!(
                            "element types differ: {} and {}",
                            a.data_type().name(),
                            b.data_type().name()
                        ))
                    }
                }
            };
        }
        arms!(F32, F64, F16, Bf16, I8, I16, I32, I64, U8, U16, U32, U64, Bool, Str);
        Ok(())
    }
}

/// See [`Data::interleave`].
fn interleave_slices<T: Clone>(slices: &[(&[T], usize)], outer: usize, total: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(total);
    for o in 0..outer {
        for &(v, block) in slices {
            out.extend_from_slice(&v[o * block..(o + 1) * block]);
        }
    }
    out
}

/// A tensor: a concrete shape and its data, row-major unless `layout` says where each
/// element lies.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Arc<Data>,
    /// `None`: the data is the elements, row-major. Some: a strided view of the data
    /// ([`crate::view`]), which only view-reading kernels are handed.
    pub layout: Option<Arc<Layout>>,
}

impl Tensor {
    pub fn new(shape: Vec<usize>, data: Data) -> Tensor {
        Tensor { shape, data: Arc::new(data), layout: None }
    }

    pub fn scalar(data: Data) -> Tensor {
        Tensor::new(Vec::new(), data)
    }

    pub fn data_type(&self) -> DataType {
        self.data.data_type()
    }

    pub fn len(&self) -> usize {
        match self.layout {
            None => self.data.len(),
            Some(_) => elements(&self.shape),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The same elements under another shape (no copy, unless this is a strided view).
    pub fn reshaped(&self, shape: Vec<usize>) -> Tensor {
        Tensor { shape, data: Arc::clone(&self.contiguous().data), layout: None }
    }

    /// The elements as `i64`, for integer tensors (shapes, axes, indices).
    pub fn to_i64s(&self) -> Result<Vec<i64>, KernelError> {
        Ok(match &*self.contiguous().data {
            Data::I64(v) => v.to_vec(),
            Data::I32(v) => v.iter().map(|&x| i64::from(x)).collect(),
            Data::I16(v) => v.iter().map(|&x| i64::from(x)).collect(),
            Data::I8(v) => v.iter().map(|&x| i64::from(x)).collect(),
            Data::U8(v) => v.iter().map(|&x| i64::from(x)).collect(),
            Data::U16(v) => v.iter().map(|&x| i64::from(x)).collect(),
            Data::U32(v) => v.iter().map(|&x| i64::from(x)).collect(),
            Data::U64(v) => v.iter().map(|&x| x as i64).collect(),
            Data::Coded(dt, v) if crate::coded::is_integer(*dt) => {
                v.iter().map(|&c| crate::coded::decode(*dt, c) as i64).collect()
            }
            other => return Err(bad_input!("expected integers, got {} values", other.data_type().name())),
        })
    }

    /// The elements as `f32`: a row-major float32 tensor's borrowed, float16 and bfloat16
    /// widened exactly, others through `f64` (for kernels that compute in float32, as
    /// onnxruntime's do).
    pub fn to_f32s(&self) -> Result<std::borrow::Cow<'_, [f32]>, KernelError> {
        use std::borrow::Cow;
        Ok(match &*self.data {
            Data::F32(v) if self.layout.is_none() => Cow::Borrowed(&v[..]),
            Data::F16(_) | Data::Bf16(_) if self.layout.is_none() => {
                Cow::Owned(crate::number::widened_half(&self.data).map(|(v, _)| v).unwrap_or_default())
            }
            _ => Cow::Owned(self.to_f64s()?.into_iter().map(|v| v as f32).collect()),
        })
    }

    /// The elements as `f64`, for numeric tensors (scales, bounds, scalars of any type).
    pub fn to_f64s(&self) -> Result<Vec<f64>, KernelError> {
        Ok(match &*self.contiguous().data {
            Data::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Data::F64(v) => v.to_vec(),
            Data::F16(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Data::Bf16(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Data::Bool(v) => v.iter().map(|&x| if x { 1.0 } else { 0.0 }).collect(),
            Data::Str(_) => return Err(bad_input!("expected numbers, got strings")),
            Data::Coded(dt, v) => v.iter().map(|&c| crate::coded::decode(*dt, c)).collect(),
            _ => self.to_i64s()?.into_iter().map(|x| x as f64).collect(),
        })
    }

    /// The tensor as the IR holds constants (for writing `.pb` files and showing values).
    pub fn to_ir(&self, name: Option<&str>) -> IrTensor {
        let mut t = IrTensor {
            dims: self.shape.iter().map(|&d| d as i64).collect(),
            data_type: Some(self.data_type().code()),
            name: name.map(Str::from),
            ..IrTensor::default()
        };
        match &*self.contiguous().data {
            Data::F32(v) => t.float_data = v.to_vec(),
            Data::F64(v) => t.double_data = v.to_vec(),
            Data::I64(v) => t.int64_data = v.to_vec(),
            Data::U64(v) => t.uint64_data = v.to_vec(),
            Data::U32(v) => t.uint64_data = v.iter().map(|&x| u64::from(x)).collect(),
            Data::I32(v) => t.int32_data = v.to_vec(),
            Data::I16(v) => t.int32_data = v.iter().map(|&x| i32::from(x)).collect(),
            Data::I8(v) => t.int32_data = v.iter().map(|&x| i32::from(x)).collect(),
            Data::U16(v) => t.int32_data = v.iter().map(|&x| i32::from(x)).collect(),
            Data::U8(v) => t.int32_data = v.iter().map(|&x| i32::from(x)).collect(),
            Data::Bool(v) => t.int32_data = v.iter().map(|&x| i32::from(x)).collect(),
            Data::F16(v) => t.int32_data = v.iter().map(|x| i32::from(x.to_bits())).collect(),
            Data::Bf16(v) => t.int32_data = v.iter().map(|x| i32::from(x.to_bits())).collect(),
            Data::Str(v) => t.string_data = v.iter().map(|s| Str::from(s.as_slice())).collect(),
            Data::Coded(dt, v) => t.raw_data = Some(bytes::Bytes::from(crate::coded::pack(*dt, v))),
        }
        t
    }

    /// A tensor from a constant of the IR (an initializer, a `Constant`'s value, a `.pb`
    /// file). External data must have been loaded into `raw_data` by the caller.
    pub fn from_ir(t: &IrTensor) -> Result<Tensor, KernelError> {
        let dt_code = t.data_type.unwrap_or(0);
        let dt = DataType::from_code(dt_code).ok_or_else(|| bad_input!("unknown element type {dt_code}"))?;
        if t.is_external() {
            return Err(bad_input!("the tensor's data is external and was not loaded"));
        }
        let mut shape = Vec::with_capacity(t.dims.len());
        let mut count: usize = 1;
        for &d in &t.dims {
            let d = usize::try_from(d).map_err(|_| bad_input!("negative dimension {d}"))?;
            count = count.checked_mul(d).ok_or(limit!("the element count overflows"))?;
            shape.push(d);
        }
        let raw = t.raw_data.as_ref().filter(|r| !r.is_empty() || count == 0);
        let data = match raw {
            Some(raw) if dt != DataType::String => from_raw(dt, raw, count)?,
            _ => from_typed(dt, t, count)?,
        };
        if data.len() != count {
            return Err(bad_input!("the tensor holds {} values for shape {:?}", data.len(), shape));
        }
        Ok(Tensor::new(shape, data))
    }
}

fn from_raw(dt: DataType, raw: &Bytes, count: usize) -> Result<Data, KernelError> {
    if crate::coded::is_coded(dt) {
        return Ok(Data::Coded(dt, crate::coded::unpack(dt, raw, count)?));
    }
    let width = (dt.bits() / 8) as usize;
    if width == 0 || !dt.bits().is_multiple_of(8) {
        return Err(unsupported!("{} tensors are not supported yet", dt.name()));
    }
    if raw.len() != count.saturating_mul(width) {
        return Err(bad_input!(
            "raw_data holds {} bytes, {count} {} values need {}",
            raw.len(),
            dt.name(),
            count * width
        ));
    }
    fn view<T: bytemuck::Pod>(raw: &Bytes) -> Result<Buf<T>, KernelError> {
        Buf::from_le_bytes(raw).ok_or_else(|| bad_input!("raw_data is not a whole number of values"))
    }
    Ok(match dt {
        DataType::Float => Data::F32(view(raw)?),
        DataType::Double => Data::F64(view(raw)?),
        DataType::Float16 => Data::F16(view(raw)?),
        DataType::Bfloat16 => Data::Bf16(view(raw)?),
        DataType::Int8 => Data::I8(view(raw)?),
        DataType::Int16 => Data::I16(view(raw)?),
        DataType::Int32 => Data::I32(view(raw)?),
        DataType::Int64 => Data::I64(view(raw)?),
        DataType::Uint8 => Data::U8(view(raw)?),
        DataType::Uint16 => Data::U16(view(raw)?),
        DataType::Uint32 => Data::U32(view(raw)?),
        DataType::Uint64 => Data::U64(view(raw)?),
        DataType::Bool => Data::Bool(raw.iter().map(|&b| b != 0).collect()),
        other => return Err(unsupported!("{} tensors are not supported yet", other.name())),
    })
}

fn from_typed(dt: DataType, t: &IrTensor, count: usize) -> Result<Data, KernelError> {
    let ints = &t.int32_data;
    if crate::coded::is_coded(dt) {
        // Packed like raw data, one byte per int32.
        let bytes: Vec<u8> = ints.iter().map(|&x| x as u8).collect();
        return Ok(Data::Coded(dt, crate::coded::unpack(dt, &bytes, count)?));
    }
    Ok(match dt {
        DataType::Float => Data::F32(t.float_data.clone().into()),
        DataType::Double => Data::F64(t.double_data.clone().into()),
        DataType::Int64 => Data::I64(t.int64_data.clone().into()),
        DataType::Uint64 => Data::U64(t.uint64_data.clone().into()),
        DataType::Uint32 => Data::U32(t.uint64_data.iter().map(|&x| x as u32).collect()),
        DataType::Int32 => Data::I32(ints.clone().into()),
        DataType::Int16 => Data::I16(ints.iter().map(|&x| x as i16).collect()),
        DataType::Int8 => Data::I8(ints.iter().map(|&x| x as i8).collect()),
        DataType::Uint16 => Data::U16(ints.iter().map(|&x| x as u16).collect()),
        DataType::Uint8 => Data::U8(ints.iter().map(|&x| x as u8).collect()),
        DataType::Bool => Data::Bool(ints.iter().map(|&x| x != 0).collect()),
        DataType::Float16 => Data::F16(ints.iter().map(|&x| f16::from_bits(x as u16)).collect()),
        DataType::Bfloat16 => Data::Bf16(ints.iter().map(|&x| bf16::from_bits(x as u16)).collect()),
        DataType::String => Data::Str(t.string_data.iter().map(|s| s.as_bytes().to_vec()).collect()),
        other => return Err(unsupported!("{} tensors are not supported yet", other.name())),
    })
}

/// What a value of a graph holds at run time.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Tensor(Tensor),
    Sequence(Vec<Tensor>),
    /// A map (the ai.onnx.ml operators': DictVectorizer's and CastMap's inputs).
    Map(Map),
    /// A sequence of maps (ZipMap's output: one map per row). Kept apart from `Sequence`,
    /// whose operators take tensors only.
    Maps(Vec<Map>),
    /// An optional: `None` holds no value.
    Optional(Option<Box<Value>>),
}

/// A map of ONNX's `map(K, V)` type as the ai.onnx.ml operators use it: integer or string
/// keys, and one scalar value per key, in the order they were made.
#[derive(Clone, Debug, PartialEq)]
pub struct Map {
    /// 1-D: int64 (or another integer type) or string.
    pub keys: Tensor,
    /// 1-D, one value per key.
    pub values: Tensor,
}

impl Map {
    pub fn new(keys: Data, values: Data) -> Map {
        let (k, v) = (keys.len(), values.len());
        Map { keys: Tensor::new(vec![k], keys), values: Tensor::new(vec![v], values) }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `map(int64,float)`, with its size.
    pub fn describe(&self) -> String {
        format!("map({},{}; {} entries)", self.keys.data_type().name(), self.values.data_type().name(), self.len())
    }
}

impl Value {
    pub fn tensor(&self) -> Result<&Tensor, KernelError> {
        match self {
            Value::Tensor(t) => Ok(t),
            Value::Sequence(_) | Value::Maps(_) => Err(bad_input!("expected a tensor, got a sequence")),
            Value::Map(_) => Err(bad_input!("expected a tensor, got a map")),
            Value::Optional(_) => Err(bad_input!("expected a tensor, got an optional")),
        }
    }

    /// The bytes its elements take in memory (strings by their length), for memory bounds.
    pub fn byte_size(&self) -> usize {
        let map_size = |m: &Map| m.keys.data.byte_size() + m.values.data.byte_size();
        match self {
            Value::Tensor(t) => t.data.byte_size(),
            Value::Sequence(items) => items.iter().map(|t| t.data.byte_size()).sum(),
            Value::Map(m) => map_size(m),
            Value::Maps(maps) => maps.iter().map(map_size).sum(),
            Value::Optional(None) => 0,
            Value::Optional(Some(v)) => v.byte_size(),
        }
    }

    /// A short description: `float[2,3]`, `sequence(3 tensors)`.
    pub fn describe(&self) -> String {
        match self {
            Value::Tensor(t) => {
                let dims: Vec<String> = t.shape.iter().map(ToString::to_string).collect();
                format!("{}[{}]", t.data_type().name(), dims.join(","))
            }
            Value::Sequence(items) => format!("sequence({} tensors)", items.len()),
            Value::Map(m) => m.describe(),
            Value::Maps(maps) => match maps.first() {
                Some(m) => format!(
                    "sequence({} maps of {},{})",
                    maps.len(),
                    m.keys.data_type().name(),
                    m.values.data_type().name()
                ),
                None => "sequence(0 maps)".into(),
            },
            Value::Optional(None) => "optional(none)".into(),
            Value::Optional(Some(v)) => format!("optional({})", v.describe()),
        }
    }
}

impl From<Tensor> for Value {
    fn from(t: Tensor) -> Value {
        Value::Tensor(t)
    }
}

/// The product of `dims`, checked (0 when any is 0, whatever the others).
pub fn count(dims: &[usize]) -> Result<usize, KernelError> {
    if dims.contains(&0) {
        return Ok(0);
    }
    dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).ok_or_else(|| limit!("the element count overflows"))
}

/// Where a view's elements lie ([`crate::view`]): position (i0, i1, …) is element
/// `offset + Σ i_a·strides[a]` of the data. Every position of the shape lies inside it.
/// Here, beside the tensor that holds it, so that the data layer's modules import one way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub offset: usize,
    pub strides: Vec<usize>,
}

/// The number of elements of `shape`: 0 when any dimension is 0, even if the others
/// multiply past `usize` (an empty tensor may declare any other dimensions).
pub fn elements(shape: &[usize]) -> usize {
    if shape.contains(&0) { 0 } else { shape.iter().fold(1usize, |n, &d| n.saturating_mul(d)) }
}
