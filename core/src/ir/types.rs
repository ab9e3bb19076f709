//! Value types (`TypeProto`) and shapes.

use super::Str;

/// `TypeProto`: one of the type cases plus an optional denotation.
///
/// Denotations and opaque types are rare, so their texts are boxed: a type is then 48 bytes
/// instead of 120. Inference keeps one per value in hash tables, whose size decides how
/// often a lookup misses the cache and how many fresh pages a run faults in (on a
/// 20,000-node model this made check and infer about a tenth faster).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Type {
    pub value: Option<TypeValue>,
    pub denotation: Option<Box<Str>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeValue {
    Tensor(TensorType),
    Sequence(Option<Box<Type>>),
    Map { key_type: Option<i32>, value_type: Option<Box<Type>> },
    Optional(Option<Box<Type>>),
    SparseTensor(TensorType),
    Opaque { domain: Option<Box<Str>>, name: Option<Box<Str>> },
}

/// The body of a tensor or sparse-tensor type. `shape: None` is unknown rank; an empty
/// shape is a scalar.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TensorType {
    pub elem_type: Option<i32>,
    pub shape: Option<Shape>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shape {
    pub dims: Vec<Dimension>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dimension {
    /// `None` is an unknown dimension (neither a value nor a parameter).
    pub value: Option<DimValue>,
    /// Boxed, as for [`Type`]: rare, and a dimension is 48 bytes instead of 80.
    pub denotation: Option<Box<Str>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DimValue {
    Value(i64),
    Param(Str),
}

impl std::fmt::Display for Type {
    /// The text-format spelling: `float[N,3]`, `float` (scalar), `float[]` (unknown rank),
    /// `seq(int64[])`, `map(string, float)`, …
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn elem(f: &mut std::fmt::Formatter<'_>, code: Option<i32>) -> std::fmt::Result {
            match code {
                Some(c) => f.write_str(&super::code_name(c)),
                None => f.write_str("?"),
            }
        }
        fn tensor(f: &mut std::fmt::Formatter<'_>, t: &TensorType) -> std::fmt::Result {
            elem(f, t.elem_type)?;
            // As in the text format: no brackets is a scalar, `[]` an unknown rank.
            let Some(shape) = &t.shape else {
                return f.write_str("[]");
            };
            if !shape.dims.is_empty() {
                f.write_str("[")?;
                for (i, d) in shape.dims.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    match &d.value {
                        Some(DimValue::Value(v)) => write!(f, "{v}")?,
                        Some(DimValue::Param(p)) => write!(f, "{p}")?,
                        None => f.write_str("?")?,
                    }
                }
                f.write_str("]")?;
            }
            Ok(())
        }
        fn inner(f: &mut std::fmt::Formatter<'_>, t: &Option<Box<Type>>) -> std::fmt::Result {
            match t {
                Some(t) => write!(f, "{t}"),
                None => f.write_str("?"),
            }
        }
        match &self.value {
            None => f.write_str("?"),
            Some(TypeValue::Tensor(t)) => tensor(f, t),
            Some(TypeValue::SparseTensor(t)) => {
                f.write_str("sparse_tensor(")?;
                tensor(f, t)?;
                f.write_str(")")
            }
            Some(TypeValue::Sequence(t)) => {
                f.write_str("seq(")?;
                inner(f, t)?;
                f.write_str(")")
            }
            Some(TypeValue::Optional(t)) => {
                f.write_str("optional(")?;
                inner(f, t)?;
                f.write_str(")")
            }
            Some(TypeValue::Map { key_type, value_type }) => {
                f.write_str("map(")?;
                elem(f, *key_type)?;
                f.write_str(", ")?;
                inner(f, value_type)?;
                f.write_str(")")
            }
            Some(TypeValue::Opaque { domain, name }) => {
                f.write_str("opaque(")?;
                if let Some(d) = domain {
                    write!(f, "{d}, ")?;
                }
                if let Some(n) = name {
                    write!(f, "{n}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// As JSON (what `--json` outputs carry): an object tagged by `kind`, with the element type
/// by name and each dimension a number, a parameter's name or `null` when unknown, plus the
/// text spelling:
/// `{"kind": "tensor", "elem_type": "float", "shape": ["N", 3, null], "text": "float[N,3,?]"}`.
/// An unknown rank is `"shape": null`; a scalar `"shape": []`.
impl serde::Serialize for Type {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(None)?;
        let elem = |code: Option<i32>| code.map(super::code_name);
        let shape = |t: &TensorType| {
            t.shape.as_ref().map(|s| {
                s.dims
                    .iter()
                    .map(|d| match &d.value {
                        Some(DimValue::Value(v)) => serde_json::Value::from(*v),
                        Some(DimValue::Param(p)) => serde_json::Value::from(p.to_string()),
                        None => serde_json::Value::Null,
                    })
                    .collect::<Vec<_>>()
            })
        };
        match &self.value {
            Some(TypeValue::Tensor(t)) | Some(TypeValue::SparseTensor(t)) => {
                let kind = if matches!(self.value, Some(TypeValue::Tensor(_))) { "tensor" } else { "sparse_tensor" };
                map.serialize_entry("kind", kind)?;
                map.serialize_entry("elem_type", &elem(t.elem_type))?;
                map.serialize_entry("shape", &shape(t))?;
            }
            Some(TypeValue::Sequence(inner)) => {
                map.serialize_entry("kind", "sequence")?;
                map.serialize_entry("elem", inner)?;
            }
            Some(TypeValue::Optional(inner)) => {
                map.serialize_entry("kind", "optional")?;
                map.serialize_entry("elem", inner)?;
            }
            Some(TypeValue::Map { key_type, value_type }) => {
                map.serialize_entry("kind", "map")?;
                map.serialize_entry("key_type", &elem(*key_type))?;
                map.serialize_entry("value", value_type)?;
            }
            Some(TypeValue::Opaque { domain, name }) => {
                map.serialize_entry("kind", "opaque")?;
                map.serialize_entry("domain", &domain.as_ref().map(|d| d.to_string()))?;
                map.serialize_entry("name", &name.as_ref().map(|n| n.to_string()))?;
            }
            None => map.serialize_entry("kind", &Option::<&str>::None)?,
        }
        map.serialize_entry("text", &self.to_string())?;
        map.end()
    }
}
