//! Element-type conversion: a tensor's elements as another data type (Cast's semantics,
//! also used when reading stored tensors and textual inputs), and tensors of a given type
//! built from f64 or i64 values. Part of the data layer: kernels import it, not the reverse.

use half::{bf16, f16};
use onnx_core::ir::DataType;

use crate::error::{KernelError, bad_input};
use crate::number::{converted, widened_half};
use crate::value::{Data, Tensor};
use crate::with_number;

/// A float tensor of type `dt` from f64 values.
pub fn from_f64_like(dt: DataType, shape: Vec<usize>, v: Vec<f64>) -> Result<Tensor, KernelError> {
    if crate::coded::is_coded(dt) {
        return Ok(Tensor::new(
            shape,
            Data::Coded(dt, v.into_iter().map(|x| crate::coded::encode(dt, x, true)).collect()),
        ));
    }
    let data = match dt {
        DataType::Float => Data::F32(v.into_iter().map(|x| x as f32).collect()),
        DataType::Double => Data::F64(v.into()),
        DataType::Float16 => Data::F16(v.into_iter().map(f16::from_f64).collect()),
        DataType::Bfloat16 => Data::Bf16(v.into_iter().map(bf16::from_f64).collect()),
        other => return Err(bad_input!("{} is not a float type", other.name())),
    };
    Ok(Tensor::new(shape, data))
}

/// A tensor of numeric type `dt` from f64 values (integers truncate).
pub fn numeric_like(dt: DataType, shape: Vec<usize>, v: Vec<f64>) -> Result<Tensor, KernelError> {
    macro_rules! ints {
        ($($d:ident => $v:ident, $t:ty),*) => {
            match dt {
                $(DataType::$d => Tensor::new(shape, Data::$v(v.into_iter().map(|x| x as $t).collect())),)*
                _ => from_f64_like(dt, shape, v)?,
            }
        };
    }
    Ok(ints!(Int8 => I8, i8, Int16 => I16, i16, Int32 => I32, i32, Int64 => I64, i64, Uint8 => U8, u8,
        Uint16 => U16, u16, Uint32 => U32, u32, Uint64 => U64, u64))
}

/// The tensor's elements converted to `dt` (floats to integers truncate; strings parse and
/// print as numpy does for the common cases).
pub fn cast_to(t: &Tensor, dt: DataType) -> Result<Tensor, KernelError> {
    if t.data_type() == dt {
        return Ok(t.clone());
    }
    if let Data::Str(s) = &*t.data {
        let v: Vec<f64> = s.iter().map(|b| parse_number(b)).collect();
        return numeric_or_bool(dt, t.shape.clone(), v);
    }
    if dt == DataType::String {
        let text: Vec<Vec<u8>> = match &*t.data {
            Data::F32(v) => v.iter().map(|x| float_text(f64::from(*x), true)).collect(),
            Data::F64(v) => v.iter().map(|x| float_text(*x, false)).collect(),
            Data::Bool(v) => v.iter().map(|&x| if x { b"True".to_vec() } else { b"False".to_vec() }).collect(),
            _ => t.to_i64s()?.iter().map(|x| x.to_string().into_bytes()).collect(),
        };
        return Ok(Tensor::new(t.shape.clone(), Data::Str(text)));
    }
    // Into a float8 or float4 type: through float32, as onnx does (it rounds twice).
    if crate::coded::is_coded(dt) && !crate::coded::is_integer(dt) && t.data_type() != DataType::Float {
        return cast_to(&cast_to(t, DataType::Float)?, dt);
    }
    if let Some(data) = converted_directly(&t.data, dt) {
        return Ok(Tensor::new(t.shape.clone(), data));
    }
    // Integers to integers exactly (wrapping as numpy), without a detour through f64.
    if let (Ok(ints), true) = (t.to_i64s(), dt.is_integer()) {
        return Ok(integers_as(dt, t.shape.clone(), ints));
    }
    numeric_or_bool(dt, t.shape.clone(), t.to_f64s()?)
}

/// The common conversions element by element, without a detour through an f64 copy:
/// between the numeric types, float32 to the 16-bit floats, and those to the wider floats.
/// `None` for the rest (strings, booleans, float8 and the 4-bit types).
fn converted_directly(data: &Data, dt: DataType) -> Option<Data> {
    macro_rules! into {
        ($s:expr) => {
            match dt {
                DataType::Float => Data::F32(converted::<_, f32>($s).into()),
                DataType::Double => Data::F64(converted::<_, f64>($s).into()),
                DataType::Int8 => Data::I8(converted::<_, i8>($s).into()),
                DataType::Int16 => Data::I16(converted::<_, i16>($s).into()),
                DataType::Int32 => Data::I32(converted::<_, i32>($s).into()),
                DataType::Int64 => Data::I64(converted::<_, i64>($s).into()),
                DataType::Uint8 => Data::U8(converted::<_, u8>($s).into()),
                DataType::Uint16 => Data::U16(converted::<_, u16>($s).into()),
                DataType::Uint32 => Data::U32(converted::<_, u32>($s).into()),
                DataType::Uint64 => Data::U64(converted::<_, u64>($s).into()),
                _ => return None,
            }
        };
    }
    Some(match (data, dt) {
        (Data::F32(v), DataType::Float16 | DataType::Bfloat16) => crate::number::narrowed_half(v, dt),
        (Data::F16(_) | Data::Bf16(_), DataType::Float | DataType::Double) => {
            let (wide, _) = widened_half(data)?;
            into!(&wide)
        }
        _ => with_number!(data, v => into!(v), _ => return None),
    })
}

pub fn integers_as(dt: DataType, shape: Vec<usize>, v: Vec<i64>) -> Tensor {
    let data = match dt {
        DataType::Int8 => Data::I8(v.into_iter().map(|x| x as i8).collect()),
        DataType::Int16 => Data::I16(v.into_iter().map(|x| x as i16).collect()),
        DataType::Int32 => Data::I32(v.into_iter().map(|x| x as i32).collect()),
        DataType::Uint8 => Data::U8(v.into_iter().map(|x| x as u8).collect()),
        DataType::Uint16 => Data::U16(v.into_iter().map(|x| x as u16).collect()),
        DataType::Uint32 => Data::U32(v.into_iter().map(|x| x as u32).collect()),
        DataType::Uint64 => Data::U64(v.into_iter().map(|x| x as u64).collect()),
        _ => Data::I64(v.into()),
    };
    Tensor::new(shape, data)
}

fn numeric_or_bool(dt: DataType, shape: Vec<usize>, v: Vec<f64>) -> Result<Tensor, KernelError> {
    if dt == DataType::Bool {
        return Ok(Tensor::new(shape, Data::Bool(v.into_iter().map(|x| x != 0.0).collect())));
    }
    // Out-of-range floats to integers: numpy's result on x86 is the integer minimum; NaN too.
    if dt.is_integer() {
        let ints = v
            .into_iter()
            .map(|x| if x.is_finite() && x.abs() < 9.2e18 { x.trunc() as i64 } else { i64::MIN })
            .collect();
        return Ok(integers_as(dt, shape, ints));
    }
    numeric_like(dt, shape, v)
}

fn parse_number(b: &[u8]) -> f64 {
    let s = String::from_utf8_lossy(b);
    let s = s.trim();
    match s.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        "nan" | "+nan" | "-nan" => f64::NAN,
        _ => s.parse().unwrap_or(f64::NAN),
    }
}

/// A float as numpy's `str` writes it for float32 (`single`) or float64.
fn float_text(x: f64, single: bool) -> Vec<u8> {
    if x.is_nan() {
        return b"nan".to_vec();
    }
    if x.is_infinite() {
        return if x > 0.0 { b"inf".to_vec() } else { b"-inf".to_vec() };
    }
    let text = if single { format!("{:?}", x as f32) } else { format!("{x:?}") };
    text.into_bytes()
}
