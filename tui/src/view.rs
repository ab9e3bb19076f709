//! What the screens show, as plain data and strings: value rows, a node's row and detail
//! lines, the run's tables. Kept apart from drawing so tests can read it and so each
//! screen formats only the rows it draws.

use std::collections::HashMap;
use std::time::Duration;

use onnx_core::infer::ModelTypes;
use onnx_core::ir::{AttributeValue, Model, NodeId, Str, Type};

use crate::index::{Body, Def, Index};
use crate::sanitize;
use crate::worker::RunOutcome;

/// A row of the Values screen.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueRow {
    pub name: Str,
    pub kind: &'static str,
    pub def: Option<Def>,
}

/// Every value of a scope: inputs, initializers, then node outputs in order (graph outputs
/// among them, marked).
pub fn values_of(model: &Model, index: &Index, s: usize) -> Vec<ValueRow> {
    let Some(scope) = index.scopes.get(s) else { return Vec::new() };
    let mut rows = Vec::new();
    let outputs: Vec<&Str> = match scope.body {
        Body::Graph(g) => {
            let graph = &model.graphs[g];
            for (i, v) in graph.inputs.iter().enumerate() {
                if let Some(name) = &v.name {
                    rows.push(ValueRow { name: name.clone(), kind: "input", def: Some(Def::Input(i)) });
                }
            }
            for (i, &t) in graph.initializers.iter().enumerate() {
                if let Some(name) = &model.tensors[t].name {
                    rows.push(ValueRow { name: name.clone(), kind: "initializer", def: Some(Def::Initializer(i)) });
                }
            }
            graph.outputs.iter().filter_map(|v| v.name.as_ref()).collect()
        }
        Body::Function(f) => {
            let function = &model.function_store[f];
            for (i, name) in function.inputs.iter().enumerate() {
                rows.push(ValueRow { name: name.clone(), kind: "input", def: Some(Def::Input(i)) });
            }
            function.outputs.iter().collect()
        }
    };
    for &n in &scope.nodes {
        for (i, name) in model.nodes[n].outputs.iter().enumerate().filter(|(_, o)| !o.is_empty()) {
            let kind = if outputs.contains(&name) { "output" } else { "value" };
            rows.push(ValueRow { name: name.clone(), kind, def: Some(Def::Node(n, i)) });
        }
    }
    rows
}

/// The type of a value as the model declares it or inference found it (inferred first).
pub fn value_type(model: &Model, types: Option<&ModelTypes>, s: usize, index: &Index, row: &ValueRow) -> String {
    let Some(scope) = index.scopes.get(s) else { return String::new() };
    if let (Some(Def::Node(n, i)), Some(types)) = (row.def, types)
        && let Some(t) = types.node_output(model, n, i)
    {
        return type_text(t);
    }
    match (scope.body, row.def) {
        (Body::Graph(g), Some(Def::Input(i))) => {
            model.graphs[g].inputs.get(i).and_then(|v| v.ty.as_ref()).map(type_text).unwrap_or_default()
        }
        (Body::Graph(g), Some(Def::Initializer(i))) => model.graphs[g]
            .initializers
            .get(i)
            .map(|&t| type_text(&onnx_core::infer::tensor_type(&model.tensors[t])))
            .unwrap_or_default(),
        (Body::Graph(g), Some(Def::Node(..))) => {
            let graph = &model.graphs[g];
            let described = graph.outputs.iter().chain(&graph.value_info).find(|v| v.name.as_ref() == Some(&row.name));
            described.and_then(|v| v.ty.as_ref()).map(type_text).unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// The bytes each value of a scope's rows takes: an initializer's own size, else what its
/// type (inferred first, else declared) says when it is a tensor whose dimensions are all
/// numbers; `None` otherwise (a symbolic batch size, a sequence, no type yet).
pub fn value_sizes(
    model: &Model,
    types: Option<&ModelTypes>,
    index: &Index,
    s: usize,
    rows: &[ValueRow],
) -> Vec<Option<u64>> {
    let graph = match index.scopes.get(s).map(|scope| scope.body) {
        Some(Body::Graph(g)) => Some(&model.graphs[g]),
        _ => None,
    };
    // Declared types of computed values, once (a search per row is quadratic).
    let declared: HashMap<&Str, &Type> = graph
        .map(|g| {
            g.outputs.iter().chain(&g.value_info).filter_map(|v| Some((v.name.as_ref()?, v.ty.as_ref()?))).collect()
        })
        .unwrap_or_default();
    rows.iter()
        .map(|r| match (r.def?, graph) {
            (Def::Initializer(i), Some(g)) => model.tensors[*g.initializers.get(i)?].expected_raw_size(),
            (Def::Input(i), Some(g)) => type_bytes(g.inputs.get(i)?.ty.as_ref()?),
            (Def::Node(n, i), _) => {
                let inferred = types.and_then(|t| t.node_output(model, n, i));
                type_bytes(inferred.or_else(|| declared.get(&r.name).copied())?)
            }
            _ => None,
        })
        .collect()
}

/// The bytes a tensor of type `t` takes, when its element type and every dimension are known.
pub fn type_bytes(t: &Type) -> Option<u64> {
    let Some(onnx_core::ir::TypeValue::Tensor(tensor)) = &t.value else { return None };
    let count = tensor.shape.as_ref()?.dims.iter().try_fold(1u64, |acc, d| match d.value {
        Some(onnx_core::ir::DimValue::Value(v)) => acc.checked_mul(u64::try_from(v).ok()?),
        _ => None,
    })?;
    onnx_core::ir::DataType::from_code(tensor.elem_type?)?.raw_byte_size(count)
}

/// A type as the text format spells it, cleaned (dimension names come from the model).
pub fn type_text(t: &Type) -> String {
    sanitize::str(&t.to_string()).into_owned()
}

/// The types of a node's outputs, `?` where nothing is known yet.
pub fn output_types(model: &Model, types: Option<&ModelTypes>, n: NodeId) -> String {
    let node = &model.nodes[n];
    let each: Vec<String> = (0..node.outputs.len())
        .map(|i| types.and_then(|t| t.node_output(model, n, i)).map_or_else(|| "?".to_owned(), type_text))
        .collect();
    each.join(", ")
}

/// `op`, or `domain:op` outside the default domain, with the opset version in force.
pub fn op_label(model: &Model, n: NodeId) -> String {
    let node = &model.nodes[n];
    let op = sanitize::opt(node.op_type.as_ref());
    let domain = node.schema_domain().unwrap_or("");
    let version = model.opset_version(domain).map(|v| format!(" v{v}")).unwrap_or_default();
    if domain.is_empty() { format!("{op}{version}") } else { format!("{}:{op}{version}", sanitize::str(domain)) }
}

/// An attribute's value in a short text form (long lists and tensors summarised).
pub fn attribute_value(model: &Model, value: Option<AttributeValue<'_>>) -> String {
    fn list<T: std::fmt::Display>(items: &[T]) -> String {
        let shown: Vec<String> = items.iter().take(16).map(ToString::to_string).collect();
        let more = if items.len() > 16 { format!(", … ({} in all)", items.len()) } else { String::new() };
        format!("[{}{more}]", shown.join(", "))
    }
    let tensor = |t: onnx_core::ir::TensorId| {
        let t = &model.tensors[t];
        format!("tensor {}", type_text(&onnx_core::infer::tensor_type(t)))
    };
    match value {
        None => "(no value)".into(),
        Some(AttributeValue::Float(f)) => f.to_string(),
        Some(AttributeValue::Int(i)) => i.to_string(),
        Some(AttributeValue::String(s)) => format!("\"{}\"", sanitize::name(s)),
        Some(AttributeValue::Tensor(t)) => tensor(t),
        Some(AttributeValue::Graph(g)) => format!("graph {}", sanitize::opt(model.graphs[g].name.as_ref())),
        Some(AttributeValue::SparseTensor(_)) => "sparse tensor".into(),
        Some(AttributeValue::TypeProto(t)) => type_text(t),
        Some(AttributeValue::Floats(v)) => list(v),
        Some(AttributeValue::Ints(v)) => list(v),
        Some(AttributeValue::Strings(v)) => list(&v.iter().map(|s| sanitize::name(s).into_owned()).collect::<Vec<_>>()),
        Some(AttributeValue::Tensors(v)) => format!("{} tensors", v.len()),
        Some(AttributeValue::Graphs(v)) => format!("{} graphs", v.len()),
        Some(AttributeValue::SparseTensors(v)) => format!("{} sparse tensors", v.len()),
        Some(AttributeValue::TypeProtos(v)) => format!("{} types", v.len()),
    }
}

/// The first few elements of a value, for a glance (`[0.5, -1, 2, …]`).
pub fn preview(v: &onnx_eval::Value) -> String {
    const SHOWN: usize = 6;
    let Ok(t) = v.tensor() else { return String::new() };
    // Only the shown elements are converted: outputs may hold millions.
    let count = t.len().min(SHOWN);
    let head = onnx_eval::Tensor::new(vec![count], t.data.pick(0..count));
    let Ok(numbers) = head.to_f64s() else { return String::new() };
    let head: Vec<String> = numbers.iter().map(|&x| number(x)).collect();
    let more = if t.len() > SHOWN { ", …" } else { "" };
    format!("[{}{more}]", head.join(", "))
}

/// A number in at most about ten characters.
pub fn number(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e9 {
        format!("{x}")
    } else if x.abs() >= 1e5 || (x != 0.0 && x.abs() < 1e-3) {
        format!("{x:.3e}")
    } else {
        format!("{x:.5}")
    }
}

/// A duration in the unit that reads best.
pub fn duration(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// The run's nodes, slowest first: the main graph's and those inside subgraphs (whose time
/// is also in the node holding them).
pub fn slowest(o: &RunOutcome) -> Vec<(NodeId, Duration)> {
    let mut t = o.timings.clone();
    t.extend(o.nested_timings.iter().map(|(n, d)| (*n, *d)));
    t.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.into_raw().cmp(&b.0.into_raw())));
    t
}

/// Time per operator type: (op, total, node count), most time first.
pub fn by_op(model: &Model, o: &RunOutcome) -> Vec<(String, Duration, usize)> {
    let mut sums: HashMap<String, (Duration, usize)> = HashMap::new();
    for &(n, d) in &o.timings {
        let e = sums.entry(op_label(model, n)).or_default();
        e.0 += d;
        e.1 += 1;
    }
    let mut list: Vec<_> = sums.into_iter().map(|(op, (d, c))| (op, d, c)).collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    list
}

/// A byte count in the unit that reads best.
pub fn bytes(n: u64) -> String {
    match n {
        n if n < 1 << 10 => format!("{n} B"),
        n if n < 1 << 20 => format!("{:.1} KiB", n as f64 / 1024.0),
        n if n < 1 << 30 => format!("{:.1} MiB", n as f64 / (1 << 20) as f64),
        n => format!("{:.2} GiB", n as f64 / (1u64 << 30) as f64),
    }
}

/// `1 node`, `3 nodes`: a count and its noun, plural when the count is not one (`noun` is
/// the singular; the plural adds an `s`, which every noun counted here takes).
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// `text` in at most `cells` terminal cells: whole when it fits, else its start and end
/// with `…` between them. Names that share a long prefix (`model.encoder.layer.11.…`)
/// differ at their ends, which cutting on the right would hide.
pub fn middle(text: &str, cells: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let width = |c: char| c.width().unwrap_or(0);
    let total: usize = text.chars().map(width).sum();
    if total <= cells {
        return text.to_owned();
    }
    if cells == 0 {
        return String::new();
    }
    // The end gets the larger half: it tells the names apart more often than the start.
    let room = cells - 1;
    let (mut head_room, mut tail_room) = (room / 2, room - room / 2);
    let mut head = String::new();
    for c in text.chars() {
        if width(c) > head_room {
            break;
        }
        head_room -= width(c);
        head.push(c);
    }
    let mut tail: Vec<char> = Vec::new();
    for c in text.chars().rev() {
        if width(c) > tail_room {
            break;
        }
        tail_room -= width(c);
        tail.push(c);
    }
    tail.reverse();
    format!("{head}…{}", tail.into_iter().collect::<String>())
}

/// MACs as `onnx cost` counts them: a number with thousands separators, or the formula in the
/// symbolic dimensions.
pub fn macs(count: &onnx_core::cost::Count) -> String {
    match count.known() {
        Some(v) => onnx_core::cost::grouped(v.unsigned_abs()),
        None => count.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_keep_both_ends() {
        let a = "p2o.pd_op.conv2d.16.0.tmp_1_quantized_output_of_the_block";
        let b = "p2o.pd_op.conv2d.16.0.tmp_1_quantized_output_of_the_other";
        assert_eq!(middle("short", 10), "short");
        let (sa, sb) = (middle(a, 24), middle(b, 24));
        assert_ne!(sa, sb, "names that differ at the end stay apart");
        assert!(sa.starts_with("p2o.pd_op.c") && sa.ends_with("of_the_block") && sa.contains('…'), "{sa}");
        assert_eq!(sa.chars().count(), 24);
        assert_eq!(middle("名前名前名前", 5), "名…前", "wide characters count two cells");
        assert_eq!(middle("abc", 0), "");
    }
}
