//! Making dynamic dimensions fixed, as onnxruntime's `make_dynamic_shape_fixed` tool does
//! (`onnxruntime/python/tools/onnx_model_utils.py`), step for step: a symbolic dimension
//! (`batch=1`) gets its value in the inputs, outputs and `value_info` of every graph (the main
//! one and the bodies inside it); an input's whole shape (`x:1,3,224,224`) first clears the
//! dimension values below 1 exporters write for "dynamic", checks the rank and the fixed
//! sizes, and fixes the symbols it names everywhere as above. Then, as the tool does,
//! every output whose shape is not fixed takes the fixed shape inference finds from the new
//! inputs (inference run as onnx's `infer_shapes`, from the declared types).
//!
//! Unlike the tool, a symbol no dimension has and an input the graph lacks are errors (the
//! tool ignores the first silently), and every problem is listed at once. Beyond the tool, an
//! input's shape may name a symbol (`x:N,3,224,224`), which makes that size dynamic; the nodes
//! that pin it (inference fixes their outputs although an input carries the symbol: a
//! Reshape to a constant shape, …) are reported.

use std::collections::HashSet;
use std::fmt;

use crate::infer::GraphTypes;
use crate::ir::{DimValue, Dimension, GraphId, Model, Str, TypeValue, ValueInfo};

/// One fixing asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DimSetting {
    /// Every dimension named `name` becomes `value`.
    Param { name: String, value: i64 },
    /// The graph input `input` gets the shape `shape`.
    InputShape { input: String, shape: Vec<Size> },
}

/// One size of an input's shape: fixed, or a symbol (which makes a fixed size dynamic).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Size {
    Fixed(i64),
    Symbol(String),
}

impl DimSetting {
    /// `name=value` (a symbolic dimension) or `input:d0,d1,…` (an input's shape, whose sizes
    /// may be symbols).
    pub fn parse(text: &str) -> Result<DimSetting, String> {
        let size = |s: &str| match s.trim().parse::<i64>() {
            Ok(v) if v >= 1 => Ok(v),
            _ => Err(format!("{text}: '{s}' is not a size (a whole number of at least 1)")),
        };
        // A size of an input's shape may be a symbol: `x:N,3,224,224`.
        let entry = |s: &str| {
            let s = s.trim();
            let symbol = s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if symbol { Ok(Size::Symbol(s.to_owned())) } else { size(s).map(Size::Fixed) }
        };
        if let Some((input, dims)) = text.rsplit_once(':') {
            let shape = if dims.trim().is_empty() {
                Vec::new()
            } else {
                dims.split(',').map(entry).collect::<Result<_, _>>()?
            };
            return Ok(DimSetting::InputShape { input: input.to_owned(), shape });
        }
        if let Some((name, value)) = text.rsplit_once('=') {
            return Ok(DimSetting::Param { name: name.to_owned(), value: size(value)? });
        }
        Err(format!("{text}: write NAME=SIZE for a symbolic dimension or INPUT:D0,D1,… for an input's shape"))
    }
}

/// What was changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct DimsFixed {
    /// Dimensions given a value (by symbol or by input shape).
    pub dimensions: usize,
    /// Outputs that took a fixed shape from inference (and, where sizes were made symbolic,
    /// outputs and value_info entries that took the symbols).
    pub outputs: usize,
    /// Input dimensions made symbolic.
    pub made_symbolic: usize,
    /// For each symbol an input was given, the nodes that pin it: an input of theirs has
    /// the symbol, and inference gives their outputs fixed sizes only (a Reshape to a
    /// constant shape, …), so the model does not follow that size past them.
    pub pinned: Vec<Pin>,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pin {
    pub symbol: String,
    /// The node's name, else its first output's.
    pub node: String,
    pub op: String,
    /// Its first output's type as inferred, e.g. `float[1,256]`.
    pub output: String,
}

/// Everything that kept the settings from being applied.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SetDimsError(pub Vec<String>);

impl fmt::Display for SetDimsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("; "))
    }
}

/// Applies `settings` in order, then fixes the outputs inference can fix. On error the model
/// is left as it was.
pub fn set_dims(model: &mut Model, settings: &[DimSetting]) -> Result<DimsFixed, SetDimsError> {
    let Some(main) = model.graph else { return Err(SetDimsError(vec!["the model has no graph".into()])) };
    let mut changed = model.clone();
    let graphs = graphs_within(&changed, main);
    let mut errors = Vec::new();
    let mut fixed = DimsFixed::default();
    for setting in settings {
        match setting {
            DimSetting::Param { name, value } => {
                let n = fix_param(&mut changed, &graphs, name, *value);
                if n == 0 {
                    errors.push(format!("no dimension is named {name} (the model's: {})", symbols(&changed, &graphs)));
                }
                fixed.dimensions += n;
            }
            DimSetting::InputShape { input, shape } => match fix_input(&mut changed, &graphs, main, input, shape) {
                Ok((n, symbolic)) => {
                    fixed.dimensions += n;
                    fixed.made_symbolic += symbolic;
                }
                Err(e) => errors.push(e),
            },
        }
    }
    if !errors.is_empty() {
        return Err(SetDimsError(errors));
    }
    fixed.outputs = fix_outputs(&mut changed, main);
    let symbols: Vec<&str> = settings
        .iter()
        .flat_map(|s| match s {
            DimSetting::InputShape { shape, .. } => shape.as_slice(),
            DimSetting::Param { .. } => &[],
        })
        .filter_map(|size| match size {
            Size::Symbol(name) => Some(name.as_str()),
            Size::Fixed(_) => None,
        })
        .collect();
    if !symbols.is_empty() {
        // From the inputs and initializers alone, so that declarations of the old sizes do
        // not hide where the model itself follows or fixes them (the same for both steps:
        // the first changes only declarations).
        let inferred = crate::infer::infer_main_graph(&changed);
        fixed.outputs += follow_symbols(&mut changed, main, &symbols, &inferred);
        fixed.pinned = pins(&changed, main, &symbols, &inferred);
    }
    *model = changed;
    Ok(fixed)
}

/// The main graph and every graph inside it, as the tool visits them.
fn graphs_within(model: &Model, main: GraphId) -> Vec<GraphId> {
    let mut out = vec![main];
    let mut i = 0;
    while i < out.len() {
        for &n in &model.graphs[out[i]].nodes {
            for a in &model.nodes[n].attributes {
                out.extend(a.g.iter().chain(&a.graphs).copied());
            }
        }
        i += 1;
    }
    out
}

/// The dimensions of a value's tensor shape, when it has one.
fn tensor_dims(v: &mut ValueInfo) -> Option<&mut Vec<Dimension>> {
    match v.ty.as_mut()?.value.as_mut()? {
        TypeValue::Tensor(t) => t.shape.as_mut().map(|s| &mut s.dims),
        _ => None,
    }
}

/// The inputs, outputs and value_info of a graph.
fn values_of(model: &mut Model, g: GraphId) -> impl Iterator<Item = &mut ValueInfo> {
    let graph = &mut model.graphs[g];
    graph.inputs.iter_mut().chain(graph.outputs.iter_mut()).chain(graph.value_info.iter_mut())
}

fn fix_param(model: &mut Model, graphs: &[GraphId], name: &str, value: i64) -> usize {
    let mut n = 0;
    for &g in graphs {
        for v in values_of(model, g) {
            for d in tensor_dims(v).into_iter().flatten() {
                if matches!(&d.value, Some(DimValue::Param(p)) if p.as_bytes() == name.as_bytes()) {
                    *d = Dimension { value: Some(DimValue::Value(value)), denotation: None };
                    n += 1;
                }
            }
        }
    }
    n
}

/// The symbolic dimensions the graphs' values have, for an error message.
fn symbols(model: &Model, graphs: &[GraphId]) -> String {
    let mut names: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for &g in graphs {
        let graph = &model.graphs[g];
        for v in graph.inputs.iter().chain(&graph.outputs).chain(&graph.value_info) {
            if let Some(TypeValue::Tensor(t)) = v.ty.as_ref().and_then(|t| t.value.as_ref()) {
                for d in t.shape.iter().flat_map(|s| &s.dims) {
                    if let Some(DimValue::Param(p)) = &d.value
                        && seen.insert(p.clone())
                    {
                        names.push(p.escaped());
                    }
                }
            }
        }
    }
    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
}

/// Gives input `input` its shape; returns how many sizes were fixed and how many made
/// symbolic.
fn fix_input(
    model: &mut Model,
    graphs: &[GraphId],
    main: GraphId,
    input: &str,
    shape: &[Size],
) -> Result<(usize, usize), String> {
    // Dimension values below 1 ("-1" for dynamic) are cleared first, in every graph.
    for &g in graphs {
        for v in values_of(model, g) {
            for d in tensor_dims(v).into_iter().flatten() {
                if matches!(d.value, Some(DimValue::Value(x)) if x < 1) {
                    *d = Dimension::default();
                }
            }
        }
    }
    let names: Vec<String> =
        model.graphs[main].inputs.iter().filter_map(|v| v.name.as_ref().map(Str::escaped)).collect();
    let Some(at) = model.graphs[main]
        .inputs
        .iter()
        .position(|v| v.name.as_ref().is_some_and(|n| n.as_bytes() == input.as_bytes()))
    else {
        return Err(format!("no graph input is named {input} (the inputs: {})", names.join(", ")));
    };
    let value = &mut model.graphs[main].inputs[at];
    let is_tensor = matches!(value.ty.as_ref().and_then(|t| t.value.as_ref()), Some(TypeValue::Tensor(_)));
    let Some(dims) = tensor_dims(value) else {
        return Err(if is_tensor {
            format!("input {input} has no shape, so no rank to check {} sizes against", shape.len())
        } else {
            format!("input {input} is not a tensor")
        });
    };
    if dims.len() != shape.len() {
        return Err(format!("input {input} has rank {}, the shape given has {} sizes", dims.len(), shape.len()));
    }
    let mut params = Vec::new();
    let (mut n, mut symbolic) = (0, 0);
    for (i, (d, size)) in dims.iter_mut().zip(shape).enumerate() {
        let size = match size {
            // Ours, beyond the tool: a symbol makes the size dynamic, whatever it was.
            Size::Symbol(name) => {
                *d = Dimension { value: Some(DimValue::Param(Str::from(name.as_str()))), denotation: None };
                symbolic += 1;
                continue;
            }
            Size::Fixed(size) => *size,
        };
        match &d.value {
            Some(DimValue::Value(v)) if *v != size => {
                return Err(format!("input {input}: dimension {} is fixed at {v}, not {size}", i + 1));
            }
            Some(DimValue::Value(_)) => {}
            Some(DimValue::Param(p)) => params.push((p.escaped(), size)),
            None => {
                *d = Dimension { value: Some(DimValue::Value(size)), denotation: None };
                n += 1;
            }
        }
    }
    for (name, size) in params {
        n += fix_param(model, graphs, &name, size);
    }
    Ok((n, symbolic))
}

/// The declared sizes (of the main graph's outputs and value_info) where inference, from the
/// inputs and initializers alone, now finds one of `symbols`, take it; returns how many
/// values changed.
fn follow_symbols(model: &mut Model, main: GraphId, symbols: &[&str], inferred: &GraphTypes) -> usize {
    let mut changed = 0;
    let graph = &mut model.graphs[main];
    for v in graph.outputs.iter_mut().chain(graph.value_info.iter_mut()) {
        let Some(TypeValue::Tensor(found)) =
            v.name.as_ref().and_then(|n| inferred.types.get(n)).and_then(|t| t.value.as_ref())
        else {
            continue;
        };
        let Some(found) = &found.shape else { continue };
        let Some(dims) = tensor_dims(v) else { continue };
        if dims.len() != found.dims.len() {
            continue;
        }
        let mut any = false;
        for (d, f) in dims.iter_mut().zip(&found.dims) {
            let symbolic =
                matches!(&f.value, Some(DimValue::Param(p)) if symbols.iter().any(|s| p.as_bytes() == s.as_bytes()));
            if symbolic && matches!(d.value, Some(DimValue::Value(_)) | None) {
                *d = f.clone();
                any = true;
            }
        }
        changed += usize::from(any);
    }
    changed
}

/// The nodes of the main graph that pin one of `symbols`: an input has it, and their outputs
/// are inferred with fixed sizes only.
fn pins(model: &Model, main: GraphId, symbols: &[&str], inferred: &GraphTypes) -> Vec<Pin> {
    let mentions = |ty: &crate::ir::Type, symbol: &str| match &ty.value {
        Some(TypeValue::Tensor(t)) => t
            .shape
            .iter()
            .flat_map(|s| &s.dims)
            .any(|d| matches!(&d.value, Some(DimValue::Param(p)) if p.as_bytes() == symbol.as_bytes())),
        _ => false,
    };
    let mut out = Vec::new();
    for &n in &model.graphs[main].nodes {
        let node = &model.nodes[n];
        let inputs: Vec<&crate::ir::Type> = node.inputs.iter().filter_map(|i| inferred.types.get(i)).collect();
        let outputs: Vec<Option<&crate::ir::Type>> =
            node.outputs.iter().filter(|o| !o.as_bytes().is_empty()).map(|o| inferred.types.get(o)).collect();
        for &symbol in symbols {
            let carried = inputs.iter().any(|t| mentions(t, symbol));
            let fixed_after = !outputs.is_empty() && outputs.iter().all(|t| t.is_some_and(is_fixed));
            if carried && fixed_after {
                let first = node.outputs.first().map(Str::escaped).unwrap_or_default();
                out.push(Pin {
                    symbol: symbol.to_owned(),
                    node: node.name.as_ref().filter(|n| !n.as_bytes().is_empty()).map_or(first, Str::escaped),
                    op: node.op_type.as_ref().map(Str::escaped).unwrap_or_default(),
                    output: outputs[0].map(ToString::to_string).unwrap_or_default(),
                });
            }
        }
    }
    out
}

/// Outputs whose shape is not fixed take the one inference finds, when that one is.
fn fix_outputs(model: &mut Model, main: GraphId) -> usize {
    let inferred = crate::infer::infer_main_graph_as_onnx(model);
    let mut n = 0;
    for out in model.graphs[main].outputs.iter_mut() {
        if out.ty.as_ref().is_some_and(is_fixed) {
            continue;
        }
        let Some(found) = out.name.as_ref().and_then(|name| inferred.types.get(name)) else { continue };
        let (Some(TypeValue::Tensor(found)), true) = (found.value.as_ref(), is_fixed(found)) else { continue };
        if let Some(TypeValue::Tensor(t)) = out.ty.as_mut().and_then(|t| t.value.as_mut()) {
            t.shape = found.shape.clone();
            n += 1;
        }
    }
    n
}

/// A tensor type whose every dimension has a value of at least 1 (a scalar too).
fn is_fixed(ty: &crate::ir::Type) -> bool {
    match &ty.value {
        Some(TypeValue::Tensor(t)) => t
            .shape
            .as_ref()
            .is_some_and(|s| s.dims.iter().all(|d| matches!(d.value, Some(DimValue::Value(v)) if v > 0))),
        _ => false,
    }
}
