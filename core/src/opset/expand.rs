//! Operators that do not exist at the target, written as the older operators they are made
//! of: the node is replaced by its schema's function body (HardSwish, Mish, GreaterOrEqual,
//! …), or, where onnx builds the body from the node itself, by the same computation written
//! here (LayerNormalization, Gelu). The nodes are written for the version the body is, and
//! then converted to the target like any other.

use std::collections::HashMap;

use super::Site;
use super::steps::{int_attribute, ints_attribute};
use crate::ir::{Attribute, DataType, Node, Str};
use crate::schema::OpSchema;

/// Replaces the node by its schema's static function body, or the body onnx builds from
/// the node (GroupNormalization, Attention, CenterCropPad, the losses: the bodies the
/// checker expands for onnxruntime, `infer::built_body`), bound to it.
pub(super) fn function_body(site: &mut Site, schema: &OpSchema) -> Result<(), String> {
    let op = site.op().to_owned();
    let caller = site.node().clone();
    if let Some(body) = crate::infer::schema_function_body(schema, schema.since_version) {
        let function = &body.model.function_store[body.function];
        let written_at = function.opset_version("").unwrap_or(schema.since_version);
        return inline(site, body.model, function, |n| body.bound(n, &caller), written_at);
    }
    let elem = |i: usize| site.elem_type(i);
    let built = crate::infer::built_body(&caller, schema, &elem);
    match built {
        Some((model, function, written_at)) => {
            let function = model.function_store[function].clone();
            inline(site, &model, &function, |_| None, written_at)
        }
        None => Err(format!("{op} exists only from opset {}", schema.since_version)),
    }
}

/// Replaces the node by the nodes of `function` (of `model`, each bound to the node by
/// `bind` where it refers to the node's attributes), written for opset `written_at`.
fn inline(
    site: &mut Site,
    model: &crate::ir::Model,
    function: &crate::ir::Function,
    bind: impl Fn(&Node) -> Option<Node>,
    written_at: i64,
) -> Result<(), String> {
    let op = site.op().to_owned();
    let caller = site.node().clone();
    // Formal parameters become the node's values; everything else the body defines gets a
    // fresh name.
    let mut names: HashMap<Str, Str> = HashMap::new();
    for (i, formal) in function.inputs.iter().enumerate() {
        names.insert(formal.clone(), caller.inputs.get(i).cloned().unwrap_or_default());
    }
    let stem = site.stem();
    for (i, formal) in function.outputs.iter().enumerate() {
        let name = match caller.outputs.get(i).filter(|o| !o.is_empty()) {
            Some(output) => output.clone(),
            None => site.fresh(&format!("{stem}_{formal}")),
        };
        names.insert(formal.clone(), name);
    }
    let mut nodes = Vec::new();
    for &b in &function.nodes {
        let written = &model.nodes[b];
        let mut node = bind(written).unwrap_or_else(|| written.clone());
        if node.attributes.iter().any(|a| a.subgraphs().next().is_some()) {
            return Err(format!("{op}'s function body holds subgraphs, which are not inlined"));
        }
        for output in node.outputs.iter_mut().filter(|o| !o.is_empty()) {
            let fresh = site.fresh(&format!("{stem}_{output}"));
            *output = names.entry(output.clone()).or_insert(fresh).clone();
        }
        for input in node.inputs.iter_mut().filter(|i| !i.is_empty()) {
            match names.get(input) {
                Some(name) => *input = name.clone(),
                None => return Err(format!("{op}'s function body reads '{input}', which it does not define")),
            }
        }
        // Tensors of the body's attributes live in the body's own model.
        for a in &mut node.attributes {
            if let Some(t) = a.t {
                a.t = Some(site.model.tensors.alloc(model.tensors[t].clone()));
            }
            for t in &mut a.tensors {
                *t = site.model.tensors.alloc(model.tensors[*t].clone());
            }
        }
        node.name = None;
        node.domain = None;
        nodes.push(node);
    }
    site.at = written_at;
    site.replaced_by = Some(nodes);
    Ok(())
}

/// The builder of nodes one expansion writes: fresh names from the node's, constants of
/// the computation's element type.
struct Builder<'s, 'a> {
    site: &'s mut Site<'a>,
    stem: String,
    nodes: Vec<Node>,
}

impl<'s, 'a> Builder<'s, 'a> {
    fn new(site: &'s mut Site<'a>) -> Self {
        let stem = site.stem();
        Builder { site, stem, nodes: Vec::new() }
    }

    /// A node of `op` reading `inputs`, with `attributes`; its output named from `what`,
    /// or `output` when given.
    fn node(&mut self, op: &str, inputs: &[&Str], attributes: Vec<Attribute>, what: &str, output: Option<Str>) -> Str {
        let out = output.unwrap_or_else(|| self.site.fresh(&format!("{}_{what}", self.stem)));
        self.nodes.push(Node {
            op_type: Some(Str::from(op)),
            inputs: inputs.iter().map(|&i| i.clone()).collect(),
            outputs: std::iter::once(out.clone()).collect(),
            attributes,
            ..Node::default()
        });
        out
    }

    /// A scalar constant of element type `dt`.
    fn scalar(&mut self, what: &str, dt: DataType, value: f64) -> Result<Str, String> {
        self.site.scalar(what, dt, value)
    }

    fn finish(self, at: i64) {
        self.site.at = at;
        self.site.replaced_by = Some(self.nodes);
    }
}

/// What LayerNormalization and RMSNormalization read of their node: the input's element
/// type, the type they compute in (`stash_type` 1: float), epsilon, the reduced axes, the
/// input and the scale.
struct Normalization {
    dt: DataType,
    stash: DataType,
    epsilon: f64,
    axes: Vec<i64>,
    x: Str,
    scale: Str,
}

impl Normalization {
    fn of(site: &Site) -> Result<Normalization, String> {
        let dt = site.elem_type(0).ok_or("the element type of its input is not known")?;
        let epsilon = match site.attribute("epsilon") {
            Some(crate::ir::AttributeValue::Float(f)) => f64::from(f),
            _ => 1e-5,
        };
        let stash = if site.int("stash_type").unwrap_or(1) == 1 { DataType::Float } else { dt };
        let axes = reduced_axes(site, site.int("axis").unwrap_or(-1))?;
        let node = site.node();
        let x = node.inputs.first().cloned().unwrap_or_default();
        let scale = node.inputs.get(1).cloned().unwrap_or_default();
        Ok(Normalization { dt, stash, epsilon, axes, x, scale })
    }
}

/// LayerNormalization-17 (onnx builds its body from the node): the mean and variance over
/// the axes from `axis` on, in float when `stash_type` is 1, then scale and bias. Written
/// for opset 16; its optional Mean and InvStdDev outputs are the same intermediate values.
pub(super) fn layer_normalization(site: &mut Site) -> Result<(), String> {
    let Normalization { dt, stash, epsilon, axes, x, scale } = Normalization::of(site)?;
    let node = site.node().clone();
    let bias = node.inputs.get(2).filter(|b| !b.is_empty()).cloned();
    let output = |i: usize| node.outputs.get(i).filter(|o| !o.is_empty()).cloned();
    let mut b = Builder::new(site);
    let cast = |b: &mut Builder, value: &Str, to: DataType, what: &str| {
        b.node("Cast", &[value], vec![int_attribute("to", i64::from(to.code()))], what, None)
    };
    let xs = if stash == dt { x.clone() } else { cast(&mut b, &x, stash, "stashed") };
    let reduce = vec![ints_attribute("axes", axes.clone()), int_attribute("keepdims", 1)];
    let mean = b.node("ReduceMean", &[&xs], reduce.clone(), "mean", output(1));
    let centred = b.node("Sub", &[&xs, &mean], Vec::new(), "centred", None);
    let squared = b.node("Mul", &[&centred, &centred], Vec::new(), "squared", None);
    let variance = b.node("ReduceMean", &[&squared], reduce, "variance", None);
    let eps = b.scalar("epsilon", stash, epsilon)?;
    let shifted = b.node("Add", &[&variance, &eps], Vec::new(), "shifted", None);
    let deviation = b.node("Sqrt", &[&shifted], Vec::new(), "deviation", None);
    let inverse = b.node("Reciprocal", &[&deviation], Vec::new(), "inverse", output(2));
    let normalised = b.node("Mul", &[&centred, &inverse], Vec::new(), "normalised", None);
    let normalised = if stash == dt { normalised } else { cast(&mut b, &normalised, dt, "unstashed") };
    match bias {
        Some(bias) => {
            let scaled = b.node("Mul", &[&normalised, &scale], Vec::new(), "scaled", None);
            b.node("Add", &[&scaled, &bias], Vec::new(), "biased", output(0));
        }
        None => {
            b.node("Mul", &[&normalised, &scale], Vec::new(), "scaled", output(0));
        }
    }
    b.finish(16);
    Ok(())
}

/// The axes a normalization reduces, from `axis` to the last: from the front where the rank
/// is known (negative axes exist only from 11), else counted from the back.
fn reduced_axes(site: &Site, axis: i64) -> Result<Vec<i64>, String> {
    Ok(match site.rank(0).map(|r| r as i64) {
        Some(rank) => {
            let from = if axis < 0 { axis.saturating_add(rank) } else { axis };
            if !(0..rank).contains(&from) {
                return Err(format!("its axis {axis} is outside its input's {rank} dimensions"));
            }
            (from..rank).collect()
        }
        None if (-64..0).contains(&axis) => (axis..0).collect(),
        None if axis < 0 => {
            return Err("its axis counts from the back further than a rank inference does not know".to_owned());
        }
        None => return Err("its axis counts from the front and the rank of its input is not known".to_owned()),
    })
}

/// Gelu-20 (its body built from the node): `0.5·x·(1 + erf(x/√2))`, or with
/// `approximate = "tanh"`, `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`. Written for 19.
pub(super) fn gelu(site: &mut Site) -> Result<(), String> {
    let dt = site.elem_type(0).ok_or("the element type of its input is not known")?;
    let tanh = site.string("approximate").as_deref() == Some("tanh");
    let node = site.node().clone();
    let x = node.inputs.first().cloned().unwrap_or_default();
    let y = node.outputs.first().cloned();
    let mut b = Builder::new(site);
    let inner = if tanh {
        let cube = b.node("Mul", &[&x, &x], Vec::new(), "square", None);
        let cube = b.node("Mul", &[&cube, &x], Vec::new(), "cube", None);
        let k = b.scalar("cubic", dt, 0.044715)?;
        let term = b.node("Mul", &[&cube, &k], Vec::new(), "cubic_term", None);
        let sum = b.node("Add", &[&x, &term], Vec::new(), "inner", None);
        let c = b.scalar("sqrt_2_over_pi", dt, (2.0 / std::f64::consts::PI).sqrt())?;
        let scaled = b.node("Mul", &[&sum, &c], Vec::new(), "scaled", None);
        b.node("Tanh", &[&scaled], Vec::new(), "tanh", None)
    } else {
        let c = b.scalar("sqrt_half", dt, std::f64::consts::FRAC_1_SQRT_2)?;
        let scaled = b.node("Mul", &[&x, &c], Vec::new(), "scaled", None);
        b.node("Erf", &[&scaled], Vec::new(), "erf", None)
    };
    let one = b.scalar("one", dt, 1.0)?;
    let half = b.scalar("half", dt, 0.5)?;
    let plus = b.node("Add", &[&inner, &one], Vec::new(), "plus_one", None);
    let times = b.node("Mul", &[&x, &plus], Vec::new(), "times_x", None);
    b.node("Mul", &[&times, &half], Vec::new(), "gelu", y);
    b.finish(19);
    Ok(())
}

/// CastLike-15: a Cast to its second input's element type. Written for 14.
pub(super) fn cast_like(site: &mut Site) -> Result<(), String> {
    let to = site.elem_type(1).ok_or("the element type of its second input is not known")?;
    let node = site.node().clone();
    let x = node.inputs.first().cloned().unwrap_or_default();
    let mut b = Builder::new(site);
    b.node("Cast", &[&x], vec![int_attribute("to", i64::from(to.code()))], "cast", node.outputs.first().cloned());
    b.finish(14);
    Ok(())
}

/// Celu-12: `max(0, x) + min(0, α·(exp(x/α) − 1))`. Written for 11.
pub(super) fn celu(site: &mut Site) -> Result<(), String> {
    let dt = site.elem_type(0).unwrap_or(DataType::Float);
    let alpha = f64::from(
        site.attribute("alpha")
            .and_then(|a| match a {
                crate::ir::AttributeValue::Float(f) => Some(f),
                _ => None,
            })
            .unwrap_or(1.0),
    );
    let node = site.node().clone();
    let x = node.inputs.first().cloned().unwrap_or_default();
    let mut b = Builder::new(site);
    let a = b.scalar("alpha", dt, alpha)?;
    let one = b.scalar("one", dt, 1.0)?;
    let zero = b.scalar("zero", dt, 0.0)?;
    let scaled = b.node("Div", &[&x, &a], Vec::new(), "scaled", None);
    let exp = b.node("Exp", &[&scaled], Vec::new(), "exp", None);
    let less = b.node("Sub", &[&exp, &one], Vec::new(), "less_one", None);
    let times = b.node("Mul", &[&less, &a], Vec::new(), "times_alpha", None);
    let negative = b.node("Min", &[&times, &zero], Vec::new(), "negative", None);
    let positive = b.node("Relu", &[&x], Vec::new(), "positive", None);
    b.node("Add", &[&positive, &negative], Vec::new(), "celu", node.outputs.first().cloned());
    b.finish(11);
    Ok(())
}

/// RMSNormalization-23: `x / √(mean(x²) + ε) · scale` over the axes from `axis`, in float when
/// `stash_type` is 1. Written for 17 (ReduceMean with an axes attribute), then converted to
/// the target like any other node.
pub(super) fn rms_normalization(site: &mut Site) -> Result<(), String> {
    let Normalization { dt, stash, epsilon, axes, x, scale } = Normalization::of(site)?;
    let node = site.node().clone();
    let mut b = Builder::new(site);
    let cast = |b: &mut Builder, value: &Str, to: DataType, what: &str| {
        b.node("Cast", &[value], vec![int_attribute("to", i64::from(to.code()))], what, None)
    };
    let xs = if stash == dt { x.clone() } else { cast(&mut b, &x, stash, "stashed") };
    let squared = b.node("Mul", &[&xs, &xs], Vec::new(), "squared", None);
    let reduce = vec![ints_attribute("axes", axes), int_attribute("keepdims", 1)];
    let mean = b.node("ReduceMean", &[&squared], reduce, "mean_square", None);
    let eps = b.scalar("epsilon", stash, epsilon)?;
    let shifted = b.node("Add", &[&mean, &eps], Vec::new(), "shifted", None);
    let root = b.node("Sqrt", &[&shifted], Vec::new(), "root", None);
    let normalised = b.node("Div", &[&xs, &root], Vec::new(), "normalised", None);
    let normalised = if stash == dt { normalised } else { cast(&mut b, &normalised, dt, "unstashed") };
    b.node("Mul", &[&normalised, &scale], Vec::new(), "scaled", node.outputs.first().cloned());
    b.finish(17);
    Ok(())
}
