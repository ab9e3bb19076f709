//! The kernels: what an operator computes from its input values. One module per family of
//! operators, as inference's rules are (`onnx_core::infer`); each family has a
//! `kernel(op)` naming the kernel of each operator it knows (and may register kernels for
//! some element types only, [`ByType`]), and the table that maps
//! (domain, operator) to its kernel is built once from them ([`crate::registry`], keyed as the core's operator table is).
//!
//! A kernel is a plain function of the node's context (attributes, opset, limits) and its
//! input values; it returns the output values or a [`KernelError`]: the kind of thing that
//! is wrong (an input, an attribute, a limit passed, something not supported yet) and a
//! message saying what, which the runner turns into an error naming the node. Kernels never
//! panic on bad input: shapes, indices and attributes from the model are checked.

pub mod attention;
pub mod common;
pub mod contrib;
pub mod dequantized_product;
pub mod einsum;
pub mod elementwise;
pub mod flex;
pub mod image;
pub mod loss;
pub mod matmul;
pub mod ml;
pub mod nn;
pub mod quant;
pub mod random;
pub mod recurrent;
pub mod reduce;
pub mod resize;
pub mod rotary;
pub mod sample;
pub mod scatter_back;
pub mod select;
pub mod sequence;
pub mod shape;
pub mod signal;
pub mod stateful;
pub mod text;
pub mod tfidf;
pub mod training;

use onnx_core::ir::{AttributeValue, DataType, Model, Node, Str};

use crate::Limits;
use crate::error::{ErrorKind, KernelError, bad_input, limit};
pub use crate::value::count;
use crate::value::{Tensor, Value};

/// What a kernel sees besides its inputs.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub model: &'a Model,
    pub node: &'a Node,
    /// The imported version of the node's domain.
    pub opset: i64,
    pub limits: &'a Limits,
    /// The run's memory, checked before a kernel allocates a result from sizes.
    pub budget: &'a crate::memory::Budget,
    /// What the operator's [`Prepare`] made of this node's constant inputs when the plan
    /// was made (quantized weights decoded once), when it made something.
    pub prepared: Option<&'a Prepared>,
}

/// A kernel's own form of a node's constant inputs, made once per plan ([`Prepare`]) and
/// handed to the kernel on every run; the kernel downcasts it to its own type
/// ([`PreparedForm::as_any`]).
pub type Prepared = std::sync::Arc<dyn PreparedForm>;

/// What a [`Prepared`] holds: any plain data. (A trait of our own rather than `dyn Any`,
/// so that a plan stays unwind-safe: `dyn Any + RefUnwindSafe` has no downcast.)
pub trait PreparedForm: std::any::Any + Send + Sync + std::panic::RefUnwindSafe + std::panic::UnwindSafe {
    fn as_any(&self) -> &dyn std::any::Any;
}

/// Not its contents (decoded weights): that there is one.
impl std::fmt::Debug for dyn PreparedForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prepared")
    }
}

impl<T: std::any::Any + Send + Sync + std::panic::RefUnwindSafe + std::panic::UnwindSafe> PreparedForm for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Makes a node's [`Prepared`] form when the plan is made, from the inputs that are
/// constants (the others `None`): `Ok(None)` when it has nothing to prepare from them, else
/// the form and the bytes it holds. onnxruntime pre-packs weights so at session start.
pub type Prepare = fn(&Ctx<'_>, &[Option<&Value>]) -> Result<Option<(Prepared, usize)>, KernelError>;

/// Makes the [`Prepared`] form of a float product of two DequantizeLinear outputs (MatMul,
/// Conv: the QDQ form) from the two nodes' constants; the plan finds the pair.
pub type DequantizedPrepare =
    fn(&dequantized_product::DequantizedA<'_>, &dequantized_product::DequantizedB<'_>) -> Option<(Prepared, usize)>;

/// The operators whose kernels take a [`Prepared`] form, by (domain, operator).
pub fn preparer(domain: &str, op: &str) -> Option<Prepare> {
    match domain {
        "com.microsoft" => contrib::prepare(op),
        "" => matmul::prepare(op).or_else(|| nn::prepare(op)),
        _ => None,
    }
}

/// A node's constant float16 and bfloat16 inputs widened to float32 once per plan, by
/// input index, for kernels that compute those types in float32 ([`Ctx::f32s`]).
/// onnxruntime's CPU provider has float32 kernels only for most of these operators; the
/// casts it puts in front of them fold its float16 weights to float32 once, at session
/// start. Widened on every run, a float16 transformer's weights cost a tenth of its time.
#[derive(Debug)]
pub struct WidenedConstants(Vec<Option<Vec<f32>>>);

/// The [`Prepare`] of [`WidenedConstants`]: `None` when no input is a 16-bit float constant.
pub fn prepare_widened(_: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Option<(Prepared, usize)>, KernelError> {
    let widened: Vec<Option<Vec<f32>>> = inputs
        .iter()
        .map(|i| match i {
            Some(Value::Tensor(t)) if t.layout.is_none() => crate::number::widened_half(&t.data).map(|(v, _)| v),
            _ => None,
        })
        .collect();
    let bytes: usize = widened.iter().flatten().map(|v| v.len() * 4).sum();
    if widened.iter().all(Option::is_none) {
        return Ok(None);
    }
    Ok(Some((std::sync::Arc::new(WidenedConstants(widened)) as Prepared, bytes)))
}

/// A kernel: the output values of a node from its input values (`None` for an omitted
/// optional input), or what kind of thing is wrong and the message saying so.
pub type Kernel = fn(&Ctx<'_>, &[Option<&Value>]) -> Result<Vec<Value>, KernelError>;

/// Which operators a family has a kernel for, and which kernel.
pub type Family = fn(&str) -> Option<Kernel>;

/// Kernels of an operator for some element types of its first input, from a since-version
/// on: when a node's first input has one of these types the runner calls this kernel, not
/// the family's kernel for every type (`kernel(op)`). onnxruntime keys its kernels the same
/// way, by (domain, operator, versions, type). A family lists its own in a `BY_TYPE`.
#[derive(Clone, Copy, Debug)]
pub struct ByType {
    pub op: &'static str,
    pub since: i64,
    pub types: &'static [DataType],
    pub kernel: Kernel,
}

/// The registrations by element type of the default domain's families.
pub const DEFAULT_DOMAIN_BY_TYPE: [&[ByType]; 1] = [matmul::BY_TYPE];

/// The registrations by element type of the other domains' families.
pub const OTHER_DOMAINS_BY_TYPE: [(&str, &[ByType]); 0] = [];

/// The families of the other domains the evaluator knows.
pub const OTHER_DOMAINS: [(&str, Family); 3] =
    [("ai.onnx.preview.training", training::kernel), ("ai.onnx.ml", ml::kernel), ("com.microsoft", contrib::kernel)];

/// The families of the default domain; an operator is claimed by at most one (the
/// registry's test checks it).
pub const DEFAULT_DOMAIN: [Family; 22] = [
    text::kernel,
    image::kernel,
    stateful::kernel,
    tfidf::kernel,
    scatter_back::kernel,
    rotary::kernel,
    signal::kernel,
    sample::kernel,
    einsum::kernel,
    sequence::kernel,
    attention::kernel,
    recurrent::kernel,
    resize::kernel,
    elementwise::kernel,
    shape::kernel,
    reduce::kernel,
    matmul::kernel,
    nn::kernel,
    select::kernel,
    quant::kernel,
    loss::kernel,
    random::kernel,
];

impl Ctx<'_> {
    /// Input `index` (the tensor `t`) as float32 values: widened once by the plan where it
    /// is a 16-bit float constant ([`WidenedConstants`]), else [`Tensor::to_f32s`].
    pub fn f32s<'t>(&'t self, t: &'t Tensor, index: usize) -> Result<std::borrow::Cow<'t, [f32]>, KernelError> {
        let prepared = self.prepared.and_then(|p| p.as_any().downcast_ref::<WidenedConstants>());
        match prepared.and_then(|w| w.0.get(index)).and_then(Option::as_ref) {
            Some(v) if v.len() == t.len() && t.layout.is_none() => Ok(std::borrow::Cow::Borrowed(&v[..])),
            _ => t.to_f32s(),
        }
    }

    pub fn op(&self) -> &str {
        self.node.op_type.as_ref().and_then(Str::as_str).unwrap_or("")
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Int(v) => Some(v),
            _ => None,
        }
    }

    pub fn ints(&self, name: &str) -> Option<&[i64]> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Ints(v) => Some(v),
            _ => None,
        }
    }

    pub fn float(&self, name: &str) -> Option<f32> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Float(v) => Some(v),
            _ => None,
        }
    }

    pub fn floats(&self, name: &str) -> Option<&[f32]> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Floats(v) => Some(v),
            _ => None,
        }
    }

    /// A list of strings as bytes (ONNX strings need not be UTF-8).
    pub fn strings(&self, name: &str) -> Option<Vec<Vec<u8>>> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Strings(v) => Some(v.iter().map(|s| s.as_bytes().to_vec()).collect()),
            _ => None,
        }
    }

    pub fn string(&self, name: &str) -> Option<&str> {
        self.node.attribute(name)?.s.as_ref()?.as_str()
    }

    /// A tensor attribute's value.
    pub fn tensor(&self, name: &str) -> Result<Option<Tensor>, KernelError> {
        match self.node.attribute(name).and_then(|a| a.value()) {
            Some(AttributeValue::Tensor(id)) => {
                // What is wrong with the tensor is wrong with the attribute (an element type
                // not supported yet, or sizes past the limit, stay what they are).
                Tensor::from_ir(&self.model.tensors[id]).map(Some).map_err(|e| {
                    let kind = if e.kind() == ErrorKind::BadInput { ErrorKind::BadAttribute } else { e.kind() };
                    KernelError::new(kind, format!("attribute '{name}': {e}"))
                })
            }
            _ => Ok(None),
        }
    }

    /// Fails when a tensor of `count` elements would pass the run's limit, or when making it
    /// (taken at the widest element) would pass the run's memory budget: asked before the
    /// allocation, which would abort the process if memory ran out.
    pub fn check_elements(&self, count: usize) -> Result<(), KernelError> {
        if count > self.limits.max_tensor_elements {
            return Err(limit!(
                "the result would hold {count} elements, more than the limit of {}",
                self.limits.max_tensor_elements
            ));
        }
        self.budget
            .check_more(count.saturating_mul(crate::memory::WIDEST_ELEMENT), &format!("a result of {count} elements"))
    }

    /// [`Ctx::check_elements`] for a result made from inputs that already hold `existing`
    /// elements: only a result larger than them is checked (inputs past the limit came in
    /// from outside, and a result no larger than them is no new allocation the model asks
    /// for).
    pub fn check_grown(&self, count: usize, existing: usize) -> Result<(), KernelError> {
        if count > existing { self.check_elements(count) } else { Ok(()) }
    }
}

/// Input `i`, which must be present and a tensor.
pub fn input<'v>(inputs: &[Option<&'v Value>], i: usize) -> Result<&'v Tensor, KernelError> {
    match inputs.get(i).copied().flatten() {
        Some(v) => v.tensor().map_err(|e| bad_input!("input {i}: {e}")),
        None => Err(bad_input!("input {i} is missing")),
    }
}

/// Input `i` when given.
pub fn optional<'v>(inputs: &[Option<&'v Value>], i: usize) -> Result<Option<&'v Tensor>, KernelError> {
    match inputs.get(i).copied().flatten() {
        Some(v) => v.tensor().map(Some).map_err(|e| bad_input!("input {i}: {e}")),
        None => Ok(None),
    }
}

/// One tensor output.
pub fn one(t: Tensor) -> Result<Vec<Value>, KernelError> {
    Ok(vec![Value::Tensor(t)])
}

/// `axis` (negative counts from the end) as an index below `rank`; an axis out of range is
/// a bad attribute (see [`input_axis`] for an axis given as an input).
pub fn axis(axis: i64, rank: usize) -> Result<usize, KernelError> {
    axis_of(axis, rank, ErrorKind::BadAttribute)
}

/// [`axis`] for an axis given as an input: one out of range is a bad input.
pub fn input_axis(axis: i64, rank: usize) -> Result<usize, KernelError> {
    axis_of(axis, rank, ErrorKind::BadInput)
}

fn axis_of(axis: i64, rank: usize, kind: ErrorKind) -> Result<usize, KernelError> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&a) {
        Ok(a as usize)
    } else {
        Err(KernelError::new(kind, format!("axis {axis} is out of range for rank {rank}")))
    }
}
