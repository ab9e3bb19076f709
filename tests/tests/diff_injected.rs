//! `onnx diff` on the real and contrib exports: one change injected into a model gives
//! exactly one report, of the right kind, naming the node or value changed and placed on
//! the line of the model's text where that node is; a reordering of the nodes is no change,
//! and neither is a consistent renaming of every node and value with `ignore_names`. Every
//! corpus model against itself and against its printing read back: no change.

use bytes::Bytes;
use onnx_core::diagnostic::Anchor;
use onnx_core::diff::locate::Lines;
use onnx_core::diff::{Change, Kind, Options, Subject, diff};
use onnx_core::ir::{AttributeValue, DataType, DimValue, Model, NodeId, Str, TypeValue};
use onnx_core::{binary, print};
use onnx_tests::{corpus_dir, corpus_models};

fn exports() -> Vec<(String, Model)> {
    let mut models = Vec::new();
    for folder in ["real", "contrib"] {
        for path in onnx_tests::files_with_suffix(&corpus_dir().join(folder), ".onnx") {
            let rel = path.strip_prefix(corpus_dir()).expect("in corpus").to_string_lossy().into_owned();
            let data = Bytes::from(std::fs::read(&path).expect("readable"));
            let model = binary::decode_model(data, &rel).expect("decodes");
            models.push((rel, model));
        }
    }
    assert!(models.len() >= 60, "the real and contrib exports are missing: {}", models.len());
    models
}

fn changes(a: &Model, b: &Model, ignore_names: bool) -> Vec<Change> {
    diff(a, b, &Options { ignore_names, ..Options::default() })
}

fn main_nodes(m: &Model) -> Vec<NodeId> {
    m.main_graph().map(|g| g.nodes.clone()).unwrap_or_default()
}

/// Names read anywhere but as a direct input of a main-graph node (a subgraph's outer reads,
/// graph outputs): a node whose output is among them is not moved around by the injections.
fn read_elsewhere(m: &Model) -> std::collections::HashSet<Str> {
    let g = m.graph.expect("main graph");
    let mut set: std::collections::HashSet<Str> = m.graphs[g].outputs.iter().filter_map(|v| v.name.clone()).collect();
    for (id, node) in m.nodes.iter() {
        if !m.graphs[g].nodes.contains(&id) {
            set.extend(node.inputs.iter().cloned());
        }
    }
    set
}

const UNARY: [&str; 12] =
    ["Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Sqrt", "Erf", "Reciprocal", "Floor", "Log", "Softplus"];

/// The main-graph node in the middle of those that pass `keep`.
fn pick(m: &Model, keep: impl Fn(NodeId) -> bool) -> Option<NodeId> {
    let eligible: Vec<NodeId> = main_nodes(m).into_iter().filter(|&n| keep(n)).collect();
    eligible.get(eligible.len() / 2).copied()
}

fn label(m: &Model, n: NodeId) -> String {
    onnx_core::diff::node_label(m, n)
}

fn rename_reads(m: &mut Model, from: &Str, to: &Str) {
    let g = m.graph.expect("main graph");
    for n in m.graphs[g].nodes.clone() {
        for input in m.nodes[n].inputs.iter_mut() {
            if input == from {
                *input = to.clone();
            }
        }
    }
}

/// One injected change: what it did to the model, and what the one report must say.
struct Injected {
    what: &'static str,
    model: Model,
    kind: Kind,
    subject: Subject,
    /// The name the report gives.
    name: String,
    /// Words its detail starts with.
    detail: &'static str,
    /// The node of the first model the report must be placed on, where there is one.
    node: Option<NodeId>,
}

fn injections(m: &Model) -> Vec<Injected> {
    let mut out = Vec::new();
    let elsewhere = read_elsewhere(m);
    let op = |n: NodeId| m.nodes[n].op_type.as_ref().and_then(Str::as_str).unwrap_or("").to_owned();
    let single = |n: NodeId| {
        let node = &m.nodes[n];
        node.inputs.len() == 1 && node.outputs.len() == 1 && node.domain_str().is_empty() && node.attributes.is_empty()
    };
    let made_by_node = |name: &Str| main_nodes(m).iter().any(|&p| m.nodes[p].outputs.contains(name));

    // An integer attribute's value.
    let with_int = |n: NodeId| {
        m.nodes[n]
            .attributes
            .iter()
            .position(|a| matches!(a.value(), Some(AttributeValue::Int(_) | AttributeValue::Ints([_, ..]))))
    };
    if let Some(n) = pick(m, |n| with_int(n).is_some()) {
        let mut b = m.clone();
        let at = &mut b.nodes[n].attributes[with_int(n).expect("picked")];
        match at.i.as_mut() {
            Some(i) => *i += 1,
            None => at.ints[0] += 1,
        }
        let (name, subject, kind, detail) = (label(m, n), Subject::Node, Kind::Changed, "attribute");
        out.push(Injected { what: "attribute", model: b, kind, subject, name, detail, node: Some(n) });
    }

    // One operator for another.
    if let Some(n) = pick(m, |n| single(n) && UNARY.contains(&op(n).as_str())) {
        let mut b = m.clone();
        b.nodes[n].op_type = Some(Str::from(if op(n) == "Neg" { "Abs" } else { "Neg" }));
        let (name, subject, kind, detail) = (label(m, n), Subject::Node, Kind::Changed, "operator");
        out.push(Injected { what: "operator", model: b, kind, subject, name, detail, node: Some(n) });
    }

    // A node taken out, its readers reading its input.
    let removable =
        |n: NodeId| single(n) && made_by_node(&m.nodes[n].inputs[0]) && !elsewhere.contains(&m.nodes[n].outputs[0]);
    if let Some(n) = pick(m, removable) {
        let mut b = m.clone();
        let (from, to) = (m.nodes[n].outputs[0].clone(), m.nodes[n].inputs[0].clone());
        let g = b.graph.expect("main graph");
        b.graphs[g].nodes.retain(|&x| x != n);
        rename_reads(&mut b, &from, &to);
        let (name, subject, kind) = (label(m, n), Subject::Node, Kind::Removed);
        out.push(Injected { what: "removal", model: b, kind, subject, name, detail: "", node: Some(n) });
    }

    // An Identity put after a node.
    if let Some(n) = pick(m, |n| m.nodes[n].outputs.len() == 1 && !elsewhere.contains(&m.nodes[n].outputs[0])) {
        let mut b = m.clone();
        let value = m.nodes[n].outputs[0].clone();
        let fresh = Str::from("injected_value");
        rename_reads(&mut b, &value, &fresh);
        let node = onnx_core::ir::Node {
            inputs: [value].into_iter().collect(),
            outputs: [fresh].into_iter().collect(),
            name: Some(Str::from("injected_identity")),
            op_type: Some(Str::from("Identity")),
            ..Default::default()
        };
        let id = b.nodes.alloc(node);
        let g = b.graph.expect("main graph");
        let at = b.graphs[g].nodes.iter().position(|&x| x == n).expect("in graph") + 1;
        b.graphs[g].nodes.insert(at, id);
        let (subject, kind) = (Subject::Node, Kind::Added);
        out.push(Injected {
            what: "insertion",
            model: b,
            kind,
            subject,
            name: "injected_identity".into(),
            detail: "",
            node: None,
        });
    }

    // One value of a float initializer.
    let g = m.graph.expect("main graph");
    let float_raw = m.graphs[g].initializers.iter().copied().filter(|&t| {
        let t = &m.tensors[t];
        t.elem_type() == Some(DataType::Float) && t.raw_data.as_ref().is_some_and(|r| r.len() >= 4)
    });
    let float_raw: Vec<_> = float_raw.collect();
    if let Some(&t) = float_raw.get(float_raw.len() / 2) {
        let mut b = m.clone();
        let mut bytes = b.tensors[t].raw_data.as_ref().expect("raw").to_vec();
        let v = f32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) + 1.0;
        bytes[..4].copy_from_slice(&v.to_le_bytes());
        b.tensors[t].raw_data = Some(bytes.into());
        let name = m.tensors[t].name.as_ref().map(Str::escaped).unwrap_or_default();
        let (subject, kind) = (Subject::Initializer, Kind::Changed);
        out.push(Injected { what: "initializer value", model: b, kind, subject, name, detail: "1 of", node: None });
    }

    // A node's second input reading another value made before it.
    let first_input = m.graphs[g].inputs.first().and_then(|v| v.name.clone());
    if let Some(x) = first_input {
        let rewirable = |n: NodeId| {
            let node = &m.nodes[n];
            node.inputs.len() >= 2
                && !node.inputs[1].is_empty()
                && node.inputs[1] != x
                && node.inputs.iter().all(|i| *i != x)
        };
        if let Some(n) = pick(m, rewirable) {
            let mut b = m.clone();
            b.nodes[n].inputs[1] = x.clone();
            let (name, subject, kind, detail) = (label(m, n), Subject::Node, Kind::Changed, "input 1 reads");
            out.push(Injected { what: "rewiring", model: b, kind, subject, name, detail, node: Some(n) });
        }
    }

    // The default domain's opset version.
    if let Some(i) = m.opset_import.iter().position(|o| o.domain.as_ref().is_none_or(|d| d.is_empty())) {
        let mut b = m.clone();
        *b.opset_import[i].version.get_or_insert(0) += 1;
        let (subject, kind) = (Subject::Opset, Kind::Changed);
        out.push(Injected {
            what: "opset",
            model: b,
            kind,
            subject,
            name: "ai.onnx".into(),
            detail: "version",
            node: None,
        });
    }

    // A graph input's first dimension.
    let shaped = m.graphs[g].inputs.iter().position(|v| {
        matches!(v.ty.as_ref().and_then(|t| t.value.as_ref()), Some(TypeValue::Tensor(t)) if t.shape.as_ref().is_some_and(|s| !s.dims.is_empty()))
    });
    if let Some(i) = shaped {
        let mut b = m.clone();
        if let Some(TypeValue::Tensor(t)) = b.graphs[g].inputs[i].ty.as_mut().and_then(|t| t.value.as_mut())
            && let Some(shape) = t.shape.as_mut()
        {
            let size = if shape.dims[0].value == Some(DimValue::Value(7)) { 8 } else { 7 };
            shape.dims[0].value = Some(DimValue::Value(size));
        }
        let name = m.graphs[g].inputs[i].name.as_ref().map(Str::escaped).unwrap_or_default();
        let (subject, kind) = (Subject::Input, Kind::Changed);
        out.push(Injected { what: "input dimension", model: b, kind, subject, name, detail: "type", node: None });
    }
    out
}

/// The printed text's line `line` (1-based).
fn line_text(text: &str, line: usize) -> &str {
    text.lines().nth(line - 1).unwrap_or("")
}

#[test]
fn one_injected_change_is_one_report_on_its_line() {
    let (mut checked, mut placed) = (0, 0);
    for (rel, a) in exports() {
        if a.graph.is_none() {
            continue;
        }
        assert!(changes(&a, &a, false).is_empty(), "{rel}: differs from itself: {:?}", changes(&a, &a, false));
        let printed = print::canonical::model(&a);
        let lines = Lines::of_printed(&a);
        for injected in injections(&a) {
            let found = changes(&a, &injected.model, false);
            if std::env::var("DIFF_DUMP").is_ok() && found.len() != 1 {
                std::fs::write("/tmp/dump_a.onnxtxt", print::canonical::model(&a)).unwrap();
                std::fs::write("/tmp/dump_b.onnxtxt", print::canonical::model(&injected.model)).unwrap();
            }
            let report = |found: &[Change]| found.iter().map(|c| format!("{c:?}")).collect::<Vec<_>>().join("\n  ");
            assert_eq!(found.len(), 1, "{rel}: {}: expected one report, got:\n  {}", injected.what, report(&found));
            let c = &found[0];
            assert_eq!((c.kind, c.subject), (injected.kind, injected.subject), "{rel}: {}: {c:?}", injected.what);
            assert_eq!(c.name, injected.name, "{rel}: {}: {c:?}", injected.what);
            assert!(c.detail.starts_with(injected.detail), "{rel}: {}: {c:?}", injected.what);
            checked += 1;
            // Placed on the node's own lines of the printed first model.
            if let Some(n) = injected.node {
                let node_text = print::canonical::node(&a, n);
                let node_line = lines.line(Anchor::Node(n)).expect("a node has a line");
                assert_eq!(
                    line_text(&printed, node_line).trim(),
                    node_text.lines().find(|l| !l.trim_start().starts_with('#')).unwrap_or("").trim(),
                    "{rel}: {}: the node's line",
                    injected.what
                );
                let line = lines.line(c.a.expect("placed in the first model")).expect("a line");
                let last = node_line + node_text.lines().count() - 1;
                assert!(
                    (node_line..=last).contains(&line),
                    "{rel}: {}: line {line} outside {node_line}..={last}",
                    injected.what
                );
                placed += 1;
            }
        }
    }
    eprintln!("{checked} injected changes, {placed} placed on their node's lines");
    assert!(checked >= 400 && placed >= 200, "too few injections: {checked}, {placed}");
}

/// Every node and every value renamed, as an exporter run again might name them.
fn renamed_everywhere(m: &Model) -> Model {
    let mut b = m.clone();
    let mut names: std::collections::HashMap<Str, Str> = std::collections::HashMap::new();
    let g = b.graph.expect("main graph");
    let fresh = |old: &Str, names: &mut std::collections::HashMap<Str, Str>| {
        if old.is_empty() {
            return old.clone();
        }
        let count = names.len();
        names.entry(old.clone()).or_insert_with(|| Str::from(format!("v{count}"))).clone()
    };
    let graph = &mut b.graphs[g];
    for v in graph.inputs.iter_mut().chain(graph.outputs.iter_mut()).chain(graph.value_info.iter_mut()) {
        if let Some(name) = v.name.as_mut() {
            *name = fresh(name, &mut names);
        }
    }
    for t in b.graphs[g].initializers.clone() {
        if let Some(name) = b.tensors[t].name.as_mut() {
            *name = fresh(name, &mut names);
        }
    }
    for (k, n) in b.graphs[g].nodes.clone().into_iter().enumerate() {
        let node = &mut b.nodes[n];
        node.name = Some(Str::from(format!("n{k}")));
        for name in node.inputs.iter_mut().chain(node.outputs.iter_mut()) {
            *name = fresh(name, &mut names);
        }
    }
    b
}

/// The main graph's nodes in another valid order: producers first, taking the latest ready
/// node each time instead of the earliest.
fn reordered(m: &Model) -> Model {
    let mut b = m.clone();
    let g = b.graph.expect("main graph");
    let nodes = b.graphs[g].nodes.clone();
    let mut made: std::collections::HashSet<Str> = std::collections::HashSet::new();
    let defined_inside: std::collections::HashSet<Str> =
        nodes.iter().flat_map(|&n| m.nodes[n].outputs.iter().cloned()).collect();
    let mut left = nodes.clone();
    let mut order = Vec::new();
    while !left.is_empty() {
        let ready = left.iter().rposition(|&n| {
            m.nodes[n].inputs.iter().all(|i| i.is_empty() || !defined_inside.contains(i) || made.contains(i))
                && onnx_core::ir::names_read_inside(m, n)
                    .iter()
                    .all(|i| !defined_inside.contains(i) || made.contains(i))
        });
        // A model out of order already keeps the rest as it is.
        let at = ready.unwrap_or(0);
        let n = left.remove(at);
        made.extend(m.nodes[n].outputs.iter().cloned());
        order.push(n);
    }
    b.graphs[g].nodes = order;
    b
}

#[test]
fn reordering_and_consistent_renaming_are_no_change() {
    let mut moved = 0;
    for (rel, a) in exports() {
        if a.graph.is_none() {
            continue;
        }
        let b = reordered(&a);
        if b.graphs[b.graph.expect("graph")].nodes != a.graphs[a.graph.expect("graph")].nodes {
            moved += 1;
        }
        let found = changes(&a, &b, false);
        assert!(found.is_empty(), "{rel}: reordering gave {} reports: {:?}", found.len(), found.first());
        let renamed = renamed_everywhere(&b);
        let found = changes(&a, &renamed, true);
        assert!(
            found.is_empty(),
            "{rel}: reordered and renamed, --ignore-names: {} reports: {:#?}",
            found.len(),
            &found[..found.len().min(6)]
        );
        // Without ignore_names, the renaming shows.
        assert!(!changes(&a, &renamed, false).is_empty(), "{rel}: renaming unseen");
    }
    assert!(moved >= 40, "too few models whose order changed: {moved}");
}

#[test]
fn every_corpus_model_equals_itself_and_its_printing_read_back() {
    let mut compared = 0;
    for path in corpus_models() {
        let rel = path.strip_prefix(corpus_dir()).expect("in corpus").to_string_lossy().into_owned();
        let data = Bytes::from(std::fs::read(&path).expect("readable"));
        let Ok(a) = binary::decode_model(data, &rel) else { continue };
        let dir = path.parent().map(std::path::Path::to_path_buf);
        let options = Options { ignore_names: false, dir_a: dir.clone(), dir_b: dir };
        let found = diff(&a, &a, &options);
        assert!(found.is_empty(), "{rel}: differs from itself: {:?}", found.first());
        if print::onnx_style::surely_lossy(&a) {
            continue;
        }
        let text = print::canonical::model(&a);
        let back = onnx_core::analysis::analyze_text(&text);
        if back.has_errors() {
            continue;
        }
        let found = diff(&a, &back.model, &options);
        assert!(found.is_empty(), "{rel}: differs from its printing read back: {:?}", found.first());
        compared += 1;
    }
    assert!(compared >= 1500, "too few models compared with their printing: {compared}");
}

/// Found by mutating models: a model that repeats an opset domain, a metadata key, a
/// function, an attribute of a node or a value description (all invalid) still equals
/// itself: the repeats pair in order.
#[test]
fn invalid_models_with_repeats_equal_themselves() {
    let text = r#"<ir_version: 8, opset_import: ["" : 17, "" : 18, "local" : 1], metadata_props: ["k" : "1", "k" : "2"]>
g (float[2] x) => (float[2] y) <float[2] w = {1, 2}> {
  t = local.F <a: int = 1, a: int = 2> (x)
  u = Add <alpha: float = 1.0, alpha: float = 2.0> (t, w)
  y = Relu (u)
}
<domain: "local", opset_import: ["" : 17]>
F (x) => (y) { y = Relu (x) }
<domain: "local", opset_import: ["" : 17]>
F (x) => (y) { y = Neg (x) }
"#;
    let analysis = onnx_core::analysis::analyze_text(text);
    let m = analysis.model;
    assert!(m.opset_import.len() == 3 && m.functions.len() == 2, "the repeats are kept: {:?}", m.opset_import);
    for ignore_names in [false, true] {
        let found = changes(&m, &m, ignore_names);
        assert!(found.is_empty(), "differs from itself: {found:#?}");
    }
}
