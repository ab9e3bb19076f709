//! The type lattice: how two descriptions of one value combine. Two types contradict when
//! they cannot describe one value (different element types, different ranks, two different
//! concrete sizes of one dimension, different kinds of type; a symbolic or unknown
//! dimension on either side agrees with anything, as in onnx's merge); a declared type is
//! refined by an inferred one; two possible types (an If's branches) have a union. Used by
//! the rules, the driver and the whole-model conflict reports ([`super::conflicts`]).

use crate::ir::{DimValue, Dimension, Shape, TensorType, Type, TypeValue, code_name};

use super::types::tensor;

/// Why two types cannot describe the same value, if they cannot.
pub fn contradiction(declared: &Type, inferred: &Type) -> Option<String> {
    let (Some(d), Some(i)) = (&declared.value, &inferred.value) else { return None };
    match (d, i) {
        (TypeValue::Tensor(d), TypeValue::Tensor(i)) | (TypeValue::SparseTensor(d), TypeValue::SparseTensor(i)) => {
            tensor_contradiction(d, i)
        }
        (TypeValue::Sequence(d), TypeValue::Sequence(i)) | (TypeValue::Optional(d), TypeValue::Optional(i)) => {
            match (d, i) {
                (Some(d), Some(i)) => contradiction(d, i),
                _ => None,
            }
        }
        (TypeValue::Map { key_type: dk, value_type: dv }, TypeValue::Map { key_type: ik, value_type: iv }) => {
            if let (Some(a), Some(b)) = (dk, ik)
                && a != b
            {
                return Some(format!("map keys {} declared, {} inferred", code_name(*a), code_name(*b)));
            }
            match (dv, iv) {
                (Some(d), Some(i)) => contradiction(d, i),
                _ => None,
            }
        }
        (TypeValue::Opaque { .. }, TypeValue::Opaque { .. }) => None,
        _ => Some("they are different kinds of type".to_owned()),
    }
}

fn tensor_contradiction(d: &TensorType, i: &TensorType) -> Option<String> {
    if let (Some(a), Some(b)) = (d.elem_type, i.elem_type)
        && a != 0
        && b != 0
        && a != b
    {
        return Some(format!("element type {} declared, {} inferred", code_name(a), code_name(b)));
    }
    let (Some(ds), Some(is)) = (&d.shape, &i.shape) else { return None };
    if ds.dims.len() != is.dims.len() {
        return Some(format!("rank {} declared, {} inferred", ds.dims.len(), is.dims.len()));
    }
    for (k, (a, b)) in ds.dims.iter().zip(&is.dims).enumerate() {
        if let (Some(DimValue::Value(x)), Some(DimValue::Value(y))) = (&a.value, &b.value)
            && x != y
        {
            return Some(format!("dimension {k} is {x} declared, {y} inferred"));
        }
    }
    None
}

/// A declared type refined by an inferred one, as onnx merges inferred types into the
/// types a graph writes down: the declared element type and sizes stay, and what the
/// declaration leaves open (element type, shape, a dimension) inference fills in. Used
/// where a subgraph's declared outputs feed the node that owns it.
pub fn refine(declared: &Type, inferred: &Type) -> Type {
    let (Some(d), Some(i)) = (&declared.value, &inferred.value) else {
        return if declared.value.is_some() { declared.clone() } else { inferred.clone() };
    };
    let value = match (d, i) {
        (TypeValue::Tensor(d), TypeValue::Tensor(i)) => TypeValue::Tensor(refine_tensor(d, i)),
        (TypeValue::SparseTensor(d), TypeValue::SparseTensor(i)) => TypeValue::SparseTensor(refine_tensor(d, i)),
        (TypeValue::Sequence(Some(d)), TypeValue::Sequence(Some(i))) => {
            TypeValue::Sequence(Some(Box::new(refine(d, i))))
        }
        (TypeValue::Optional(Some(d)), TypeValue::Optional(Some(i))) => {
            TypeValue::Optional(Some(Box::new(refine(d, i))))
        }
        (TypeValue::Sequence(None), TypeValue::Sequence(_)) | (TypeValue::Optional(None), TypeValue::Optional(_)) => {
            i.clone()
        }
        _ => d.clone(),
    };
    Type { value: Some(value), denotation: declared.denotation.clone() }
}

fn refine_tensor(d: &TensorType, i: &TensorType) -> TensorType {
    let elem_type = d.elem_type.filter(|&e| e != 0).or(i.elem_type);
    let shape = match (&d.shape, &i.shape) {
        (Some(ds), Some(is)) if ds.dims.len() == is.dims.len() => Some(Shape {
            dims: ds
                .dims
                .iter()
                .zip(&is.dims)
                .map(|(a, b)| match (&a.value, &b.value) {
                    (Some(DimValue::Value(_)), _) | (Some(DimValue::Param(_)), None | Some(DimValue::Param(_))) => {
                        a.clone()
                    }
                    _ => b.clone(),
                })
                .collect(),
        }),
        (Some(ds), _) => Some(ds.clone()),
        (None, is) => is.clone(),
    };
    TensorType { elem_type, shape }
}

/// The type two values agree on (If branches, loop iterations, sequence elements): dims that differ become unknown, ranks that differ an
/// unknown rank; different element types give nothing.
pub fn union(a: &Type, b: &Type) -> Option<Type> {
    match (&a.value, &b.value) {
        (Some(TypeValue::Tensor(x)), Some(TypeValue::Tensor(y))) => {
            if x.elem_type != y.elem_type {
                return None;
            }
            let shape = match (&x.shape, &y.shape) {
                (Some(p), Some(q)) if p.dims.len() == q.dims.len() => Some(Shape {
                    dims: p
                        .dims
                        .iter()
                        .zip(&q.dims)
                        .map(|(d, e)| if d.value == e.value { d.clone() } else { Dimension::default() })
                        .collect(),
                }),
                _ => None,
            };
            Some(tensor(x.elem_type?, shape.map(|s| s.dims)))
        }
        (Some(TypeValue::Sequence(Some(x))), Some(TypeValue::Sequence(Some(y)))) => {
            Some(Type { value: Some(TypeValue::Sequence(union(x, y).map(Box::new))), denotation: None })
        }
        (Some(TypeValue::Optional(Some(x))), Some(TypeValue::Optional(Some(y)))) => {
            Some(Type { value: Some(TypeValue::Optional(union(x, y).map(Box::new))), denotation: None })
        }
        _ if a == b => Some(a.clone()),
        _ => None,
    }
}
