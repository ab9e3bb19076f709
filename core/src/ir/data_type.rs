//! Element types of tensors (`TensorProto.DataType`), with the facts every stage needs: the
//! text name, the storage width, and which typed field holds values when there is no
//! `raw_data`.
//!
//! The IR keeps the raw `i32` code (an unknown code must survive a round trip); `DataType`
//! is the checked view of it.

use serde::Serialize;

macro_rules! data_types {
    ($($variant:ident = $code:literal, $name:literal, $bits:literal, $field:ident;)*) => {
        /// A known element type. Codes are the `TensorProto.DataType` numbers of onnx 1.23.2.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum DataType {
            $($variant = $code,)*
        }

        impl DataType {
            pub const ALL: &'static [DataType] = &[$(DataType::$variant,)*];

            /// The type for a `data_type`/`elem_type` code, or `None` for an unknown code.
            pub fn from_code(code: i32) -> Option<DataType> {
                match code {
                    $($code => Some(DataType::$variant),)*
                    _ => None,
                }
            }

            /// The name used by the ONNX text format (`float`, `bfloat16`, `float8e4m3fn`…).
            pub fn name(self) -> &'static str {
                match self {
                    $(DataType::$variant => $name,)*
                }
            }

            /// The type for a text-format name.
            pub fn from_name(name: &str) -> Option<DataType> {
                match name {
                    $($name => Some(DataType::$variant),)*
                    _ => None,
                }
            }

            /// Bits one element takes in `raw_data` (0 for `undefined` and `string`, which
            /// have no fixed-width raw form).
            pub fn bits(self) -> u64 {
                match self {
                    $(DataType::$variant => $bits,)*
                }
            }

            /// The typed field that holds values when `raw_data` is absent.
            pub fn typed_field(self) -> TypedField {
                match self {
                    $(DataType::$variant => TypedField::$field,)*
                }
            }
        }
    };
}

data_types! {
    Undefined = 0, "undefined", 0, None;
    Float = 1, "float", 32, FloatData;
    Uint8 = 2, "uint8", 8, Int32Data;
    Int8 = 3, "int8", 8, Int32Data;
    Uint16 = 4, "uint16", 16, Int32Data;
    Int16 = 5, "int16", 16, Int32Data;
    Int32 = 6, "int32", 32, Int32Data;
    Int64 = 7, "int64", 64, Int64Data;
    String = 8, "string", 0, StringData;
    Bool = 9, "bool", 8, Int32Data;
    Float16 = 10, "float16", 16, Int32Data;
    Double = 11, "double", 64, DoubleData;
    Uint32 = 12, "uint32", 32, Uint64Data;
    Uint64 = 13, "uint64", 64, Uint64Data;
    Complex64 = 14, "complex64", 64, FloatData;
    Complex128 = 15, "complex128", 128, DoubleData;
    Bfloat16 = 16, "bfloat16", 16, Int32Data;
    Float8e4m3fn = 17, "float8e4m3fn", 8, Int32Data;
    Float8e4m3fnuz = 18, "float8e4m3fnuz", 8, Int32Data;
    Float8e5m2 = 19, "float8e5m2", 8, Int32Data;
    Float8e5m2fnuz = 20, "float8e5m2fnuz", 8, Int32Data;
    Uint4 = 21, "uint4", 4, Int32Data;
    Int4 = 22, "int4", 4, Int32Data;
    Float4e2m1 = 23, "float4e2m1", 4, Int32Data;
    Float8e8m0 = 24, "float8e8m0", 8, Int32Data;
    Uint2 = 25, "uint2", 2, Int32Data;
    Int2 = 26, "int2", 2, Int32Data;
    Float6e2m3 = 27, "float6e2m3", 6, Int32Data;
    Float6e3m2 = 28, "float6e3m2", 6, Int32Data;
}

/// Which repeated field of `TensorProto` carries the values of a type without `raw_data`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypedField {
    None,
    FloatData,
    Int32Data,
    StringData,
    Int64Data,
    DoubleData,
    Uint64Data,
}

impl DataType {
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The whole-byte integer types, signed and unsigned (not bool, not the 2- and 4-bit
    /// ones): what map keys may be, and what integer arithmetic runs on.
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::Uint8
                | DataType::Uint16
                | DataType::Uint32
                | DataType::Uint64
        )
    }

    /// Bytes that `count` elements take in `raw_data`: sub-byte types are packed, so this is
    /// `ceil(count * bits / 8)`. `None` on overflow or for types without a raw form.
    pub fn raw_byte_size(self, count: u64) -> Option<u64> {
        let bits = self.bits();
        if bits == 0 {
            return None;
        }
        count.checked_mul(bits)?.checked_add(7).map(|b| b / 8)
    }
}

impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Text for a raw element-type code: the type's name, or `<code N>` for an unknown code.
pub fn code_name(code: i32) -> String {
    match DataType::from_code(code) {
        Some(t) => t.name().to_owned(),
        None => format!("<data type {code}>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_round_trip() {
        for &t in DataType::ALL {
            assert_eq!(DataType::from_code(t.code()), Some(t));
            assert_eq!(DataType::from_name(t.name()), Some(t));
        }
        assert_eq!(DataType::ALL.len(), 29);
        assert_eq!(DataType::from_code(29), None);
    }

    #[test]
    fn packed_sizes_round_up() {
        assert_eq!(DataType::Int4.raw_byte_size(3), Some(2));
        assert_eq!(DataType::Int2.raw_byte_size(5), Some(2));
        assert_eq!(DataType::Float6e2m3.raw_byte_size(3), Some(3));
        assert_eq!(DataType::Float.raw_byte_size(3), Some(12));
        assert_eq!(DataType::String.raw_byte_size(3), None);
        assert_eq!(DataType::Double.raw_byte_size(u64::MAX), None);
    }
}
