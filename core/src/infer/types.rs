//! The vocabulary every part of inference shares, and nothing else: what is known of a
//! value ([`Known`]), what a rule found ([`Outputs`]), and small constructors and readers
//! of tensor types. A leaf module: it imports nothing from inference, so the environment
//! ([`super::env`]), the rules ([`super::ops`]) and the node dispatcher can all use it
//! without importing each other.

use crate::ir::{DimValue, Dimension, Shape, Tensor, TensorType, Type, TypeValue};

/// The value of a 0-D or 1-D integer tensor, element by element; an element may be a
/// symbolic dimension (from `Shape` of a symbolic input), a negated one (`-seq`, what Neg
/// makes of a length: see [`negated_symbol`]) or unknown.
#[derive(Clone, Debug, PartialEq)]
pub struct Known {
    pub elements: Vec<Option<DimValue>>,
    /// A 0-D tensor (one element, no axis).
    pub scalar: bool,
}

impl Known {
    pub fn vector(elements: Vec<Option<DimValue>>) -> Known {
        Known { elements, scalar: false }
    }

    /// All elements as plain integers, when none is symbolic or unknown.
    pub fn ints(&self) -> Option<Vec<i64>> {
        self.elements.iter().map(|e| if let Some(DimValue::Value(v)) = e { Some(*v) } else { None }).collect()
    }

    /// The elements as dimensions of a shape (what Reshape, Expand, … read).
    pub fn as_dims(&self) -> Vec<Dimension> {
        self.elements.iter().map(|e| Dimension { value: size_element(e), denotation: None }).collect()
    }
}

/// The symbol a value element negates: `seq` for `-seq`. Neg of a length gives such an
/// element so that Slice can read a start counted back from the end (T5's decoder slices
/// its position bias from `-seq`); it is never a size.
pub fn negated_symbol(element: &DimValue) -> Option<&str> {
    match element {
        DimValue::Param(name) => name.as_str().and_then(|n| n.strip_prefix('-')).filter(|n| !n.is_empty()),
        DimValue::Value(_) => None,
    }
}

/// A value element read as a dimension: a negated symbol is no size (unknown).
pub fn size_element(element: &Option<DimValue>) -> Option<DimValue> {
    element.clone().filter(|e| negated_symbol(e).is_none())
}

/// Larger constant tensors are not tracked: data propagation is for shape computations.
pub const MAX_TRACKED_ELEMENTS: usize = 64;

/// The largest rank inference builds from a declared count (the length of a shape input
/// whose values are not known). Real models stay far below it; a hostile one that declares
/// `int64[1000000000000]` as Reshape's shape must not make inference allocate a dimension
/// per declared element: the result's rank is then unknown.
pub const MAX_RANK: usize = 1024;

/// What a rule found: a type (and maybe a known value) per output.
#[derive(Clone, Default)]
pub struct Outputs {
    pub types: Types,
    pub values: Vec<Option<Known>>,
}

/// The output types of a node, inline for the usual single output (a heap allocation per
/// node was a measurable part of inference).
pub type Types = smallvec::SmallVec<[Option<Type>; 1]>;

impl Outputs {
    pub fn one(ty: Type) -> Outputs {
        Outputs { types: smallvec::smallvec![Some(ty)], values: Vec::new() }
    }

    pub fn with_value(mut self, known: Option<Known>) -> Outputs {
        // Nothing known is no entry at all, and no allocation.
        if known.is_some() {
            self.values = vec![known];
        }
        self
    }
}

/// The type a tensor constant has.
pub fn tensor_type(t: &Tensor) -> Type {
    tensor(t.data_type.unwrap_or(0), Some(t.dims.iter().map(|&d| dim(d)).collect()))
}

pub fn dim(v: i64) -> Dimension {
    Dimension { value: Some(DimValue::Value(v)), denotation: None }
}

/// The size of a dimension when it is a number (not symbolic, not unknown).
pub fn known_dim(d: &Dimension) -> Option<i64> {
    match d.value {
        Some(DimValue::Value(v)) => Some(v),
        _ => None,
    }
}

pub fn unknown_dim() -> Dimension {
    Dimension::default()
}

/// `count` unknown dims, or nothing (unknown rank) when `count` is negative or above
/// [`MAX_RANK`].
pub fn unknown_dims(count: i64) -> Option<Vec<Dimension>> {
    usize::try_from(count).ok().filter(|&n| n <= MAX_RANK).map(|n| vec![unknown_dim(); n])
}

/// A tensor type; `dims: None` is an unknown rank.
pub fn tensor(elem: i32, dims: Option<Vec<Dimension>>) -> Type {
    Type {
        value: Some(TypeValue::Tensor(TensorType { elem_type: Some(elem), shape: dims.map(|dims| Shape { dims }) })),
        denotation: None,
    }
}

/// A sequence type of the given element type.
pub fn sequence_of(element: Type) -> Type {
    Type { value: Some(TypeValue::Sequence(Some(Box::new(element)))), denotation: None }
}

/// The element type and dims of a tensor type (dims `None` for unknown rank).
pub fn tensor_parts(ty: &Type) -> Option<(Option<i32>, Option<&[Dimension]>)> {
    match &ty.value {
        Some(TypeValue::Tensor(t)) => Some((t.elem_type, t.shape.as_ref().map(|s| s.dims.as_slice()))),
        _ => None,
    }
}

/// The values of a small 0-D or 1-D int32/int64 tensor held in memory.
pub fn tensor_values(t: &Tensor) -> Option<Known> {
    if t.dims.len() > 1 || t.is_external() {
        return None;
    }
    let count = t.element_count()? as usize;
    if count > MAX_TRACKED_ELEMENTS {
        return None;
    }
    let ints = crate::ir::tensor_data::int_values(t)?;
    (ints.len() == count).then(|| Known {
        elements: ints.into_iter().map(|v| Some(DimValue::Value(v))).collect(),
        scalar: t.dims.is_empty(),
    })
}

/// What onnx's inference knows of a value it infers no type for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum OnnxKnows {
    /// Nothing: no declaration.
    Untyped,
    /// A declared type lacking parts (a tensor of no element type, a sequence or optional
    /// of no element or of an element of no kind, a map of no key or value type).
    Partly,
    /// A declared type of no kind.
    NoKind,
}

/// A tensor type of the given element type and dims.
pub fn tensor_of(elem: Option<i32>, dims: Option<Vec<Dimension>>) -> Type {
    tensor(elem.unwrap_or(0), dims)
}

/// A size computed in `i128` (sizes and attributes come from the model and may be huge,
/// so rules widen before they add or multiply), back in `i64` when it fits.
pub fn narrow(v: i128) -> Option<i64> {
    i64::try_from(v).ok()
}

/// Of two dims that describe one axis, the first that says something (a size or a name).
pub fn first_known(a: &Dimension, b: &Dimension) -> Dimension {
    if a.value.is_some() { a.clone() } else { b.clone() }
}

/// `axis` counted from the end when negative, when it names one of `rank` axes.
pub fn normalize_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}
