//! Unit tests of single rules on models built in code; the corpus and the invalid-model set
//! are compared with onnx in tests/tests/check_verdicts.rs.

use super::*;
use crate::ir::*;

fn codes(model: &Model) -> Vec<&'static str> {
    crate::pipeline::check_model(model, &CheckOptions::default()).diagnostics.into_iter().map(|d| d.code).collect()
}

/// A valid one-node model: `y = Relu(x)` at opset 21.
fn relu_model() -> Model {
    let mut m = Model { ir_version: Some(10), ..Model::default() };
    m.opset_import.push(OpsetImport { domain: Some("".into()), version: Some(21) });
    let float = |name: &str| ValueInfo {
        name: Some(name.into()),
        ty: Some(Type {
            value: Some(TypeValue::Tensor(TensorType { elem_type: Some(1), shape: Some(Shape::default()) })),
            denotation: None,
        }),
        ..ValueInfo::default()
    };
    let node = m.nodes.alloc(Node {
        inputs: smallvec::smallvec!["x".into()],
        outputs: smallvec::smallvec!["y".into()],
        op_type: Some("Relu".into()),
        ..Node::default()
    });
    let g = m.graphs.alloc(Graph {
        name: Some("g".into()),
        nodes: vec![node],
        inputs: vec![float("x")],
        outputs: vec![float("y")],
        ..Graph::default()
    });
    m.graph = Some(g);
    m
}

fn first_node(m: &mut Model) -> &mut Node {
    let id = m.graphs[m.graph.expect("graph")].nodes[0];
    &mut m.nodes[id]
}

#[test]
fn a_valid_model_has_no_diagnostics() {
    assert_eq!(codes(&relu_model()), Vec::<&str>::new());
}

#[test]
fn header_rules() {
    let mut m = relu_model();
    m.ir_version = None;
    assert!(codes(&m).contains(&"missing-ir-version"));
    m.ir_version = Some(15);
    assert!(codes(&m).contains(&"unsupported-ir-version"));
    m.ir_version = Some(10);
    m.opset_import.clear();
    assert!(codes(&m).contains(&"missing-opset-import"));
}

#[test]
fn node_against_schema() {
    let mut m = relu_model();
    first_node(&mut m).inputs.push("x".into());
    assert_eq!(codes(&m), vec!["input-count"]);
    let mut m = relu_model();
    first_node(&mut m).op_type = Some("Relux".into());
    assert_eq!(codes(&m), vec!["unknown-op"]);
    let mut m = relu_model();
    first_node(&mut m).attributes.push(float_attribute("alpha"));
    assert_eq!(codes(&m), vec!["unknown-attribute"]);
}

/// A FLOAT attribute of value 1.
fn float_attribute(name: &str) -> Attribute {
    Attribute { name: Some(name.into()), ty: Some(1), f: Some(1.0), ..Attribute::default() }
}

/// `relu_model` with its node made `com.microsoft::{op}` (imported at version 1).
fn contrib_model(op: &str) -> Model {
    let mut m = relu_model();
    m.opset_import.push(OpsetImport { domain: Some("com.microsoft".into()), version: Some(1) });
    let node = first_node(&mut m);
    node.op_type = Some(op.into());
    node.domain = Some("com.microsoft".into());
    m
}

/// onnx's checker passes `com.microsoft` nodes by; onnxruntime checks them against its
/// contrib schemas at load, and so do we: what it refuses is an error.
#[test]
fn contrib_nodes_are_judged_by_onnxruntimes_schemas() {
    let diagnostics = |m: &Model| {
        crate::pipeline::check_model(m, &CheckOptions::default())
            .diagnostics
            .into_iter()
            .map(|d| (d.code, d.severity))
            .collect::<Vec<_>>()
    };
    assert_eq!(codes(&contrib_model("FastGelu")), Vec::<&str>::new());
    let mut m = contrib_model("FastGelu");
    first_node(&mut m).attributes.push(float_attribute("alpha"));
    assert_eq!(codes(&m), vec!["unknown-attribute"]);
    // SkipLayerNormalization takes 3 to 5 inputs.
    assert_eq!(codes(&contrib_model("SkipLayerNormalization")), vec!["input-count"]);
    // An operator onnxruntime does not register: it refuses the model unless a custom-op
    // library adds one, which a model cannot say; a warning.
    let unknown = diagnostics(&contrib_model("NoSuchContribOp"));
    assert_eq!(unknown, vec![("unknown-op", crate::diagnostic::Severity::Warning)]);
    // What onnxruntime adds to onnx's own domain, onnx's checker refuses: so do we, saying
    // that onnxruntime runs it.
    let mut m = relu_model();
    first_node(&mut m).op_type = Some("SimplifiedLayerNormalization".into());
    let found = crate::pipeline::check_model(&m, &CheckOptions::default()).diagnostics;
    assert_eq!(found.iter().map(|d| d.code).collect::<Vec<_>>(), vec!["unknown-op"]);
    assert!(found[0].message.contains("onnxruntime registers its own"), "{}", found[0].message);
}

#[test]
fn attribute_fields_must_match_the_type() {
    let mut m = relu_model();
    first_node(&mut m).op_type = Some("LeakyRelu".into());
    first_node(&mut m).attributes.push(Attribute {
        name: Some("alpha".into()),
        ty: Some(1),
        i: Some(1),
        ..Attribute::default()
    });
    assert_eq!(codes(&m), vec!["attribute-field-mismatch"]);
}

#[test]
fn tensor_data_rules() {
    let mut m = relu_model();
    let t = m.tensors.alloc(Tensor {
        name: Some("w".into()),
        data_type: Some(1),
        dims: vec![3],
        float_data: vec![1.0, 2.0],
        ..Tensor::default()
    });
    let g = m.graph.expect("graph");
    m.graphs[g].initializers.push(t);
    assert_eq!(codes(&m), vec!["tensor-data-short"]);
    m.tensors[t].dims = vec![-1];
    assert_eq!(codes(&m), vec!["negative-dimension"]);
    m.tensors[t].dims = vec![2];
    m.tensors[t].int64_data = vec![1, 2];
    assert_eq!(codes(&m), vec!["tensor-data-count"]);
}

#[test]
fn main_graph_values_need_a_rank() {
    let mut m = relu_model();
    let g = m.graph.expect("graph");
    if let Some(Type { value: Some(TypeValue::Tensor(t)), .. }) = &mut m.graphs[g].inputs[0].ty {
        t.shape = None;
    }
    assert_eq!(codes(&m), vec!["incomplete-type"]);
}

#[test]
fn did_you_mean_finds_near_names() {
    assert_eq!(node::did_you_mean("alpah", ["alpha", "beta"].into_iter()), Some("alpha"));
    assert_eq!(node::did_you_mean("gamma", ["alpha", "beta"].into_iter()), None);
}

/// A chain of `count` Relu nodes from `x` to `y` with one defect of each kind the checker
/// finds apart: a model-header rule (duplicate metadata key), scoping (an undefined
/// input), a node rule (an attribute Relu does not have) and inference (`y` declared as
/// int64 where float is inferred).
fn flawed_chain(count: usize) -> Model {
    let mut m = relu_model();
    let pair = || StringPair { key: Some("k".into()), value: Some("v".into()) };
    m.metadata_props = vec![pair(), pair()];
    let g = m.graph.expect("graph");
    let mut nodes = Vec::new();
    for i in 0..count {
        let input: Str = if i == 0 { "x".into() } else { format!("v{}", i - 1).into() };
        let output: Str = if i + 1 == count { "y".into() } else { format!("v{i}").into() };
        if i == count / 2 {
            let stray = Node {
                inputs: smallvec::smallvec!["ghost".into()],
                outputs: smallvec::smallvec!["stray".into()],
                op_type: Some("Relu".into()),
                ..Node::default()
            };
            nodes.push(m.nodes.alloc(stray));
        }
        let mut node = Node {
            inputs: smallvec::smallvec![input],
            outputs: smallvec::smallvec![output],
            op_type: Some("Relu".into()),
            ..Node::default()
        };
        if i == count / 3 {
            node.attributes.push(Attribute {
                name: Some("alpha".into()),
                ty: Some(1),
                f: Some(1.0),
                ..Attribute::default()
            });
        }
        nodes.push(m.nodes.alloc(node));
    }
    let graph = &mut m.graphs[g];
    graph.nodes = nodes;
    if let Some(TypeValue::Tensor(t)) = graph.outputs[0].ty.as_mut().and_then(|t| t.value.as_mut()) {
        t.elem_type = Some(7);
    }
    m
}

/// A big model's full check runs the structural rules beside inference (on two threads
/// when the machine has them); what it reports, and in what order, must be what a small
/// model's one-thread check reports.
#[test]
fn full_check_of_a_big_model_reports_as_a_small_one() {
    let full = CheckOptions { full_check: true, ..CheckOptions::default() };
    let found = |count: usize| -> Vec<&'static str> {
        let m = flawed_chain(count);
        crate::pipeline::check_model(&m, &full).diagnostics.into_iter().map(|d| d.code).collect()
    };
    let small = found(9);
    assert_eq!(small, vec!["duplicate-metadata-key", "undefined-value", "unknown-attribute", "type-conflict"]);
    const { assert!(crate::resolve::BESIDE_INFERENCE > 9) };
    assert_eq!(found(3 * crate::resolve::BESIDE_INFERENCE / 2), small);
}

/// An If whose branches make an output with an operator onnx does not know, untyped, leaves
/// it untyped in onnx's inference: Relu, whose inference reads its input's type, fails on
/// it (`untyped-input`), Shape and the second operand of Concat do not, and declaring the
/// output's type in a branch lifts it (then the branches differ, which is its own finding).
#[test]
fn untyped_if_outputs_fail_only_the_nodes_whose_inference_reads_their_type() {
    let model = |use_it: &str, declared: &str| {
        format!(
            "<ir_version: 8, opset_import: [\"\" : 18, \"com.foo\" : 1]>\n\
             g (float[2] x, bool c) => (float[2] y) {{\n  y = If (c) <then_branch = t () => (float[2] r) {{ \
             u = If (c) <then_branch = t2 () => ({declared}z) {{ z = com.foo.Make (x) }}, \
             else_branch = e2 () => (z) {{ z = com.foo.Make (x) }}> {use_it} }}, \
             else_branch = e () => (float[2] r2) {{ r2 = Identity (x) }}>\n}}\n"
        )
    };
    let full = CheckOptions { full_check: true, ..CheckOptions::default() };
    let found = |text: String| -> Vec<&'static str> {
        crate::pipeline::check_text(&text, &full).diagnostics.iter().map(|d| d.code).collect()
    };
    assert!(found(model("r = Relu (u)", "")).contains(&"untyped-input"));
    for tolerated in ["s = Shape (u) r = Identity (x)", "r = Concat <axis: int = 0> (x, u)"] {
        let codes = found(model(tolerated, ""));
        assert!(!codes.contains(&"untyped-input"), "{tolerated}: {codes:?}");
    }
    // Where onnx's table row depends, the attributes decide: BatchNormalization's running
    // mean types an output in training mode only, Bernoulli's input types the output
    // unless `dtype` does.
    for (reader, untyped) in [
        ("r, m, v = BatchNormalization <training_mode: int = 1> (x, x, x, u, x)", true),
        ("r = BatchNormalization (x, x, x, u, x)", false),
        ("r = Bernoulli (u)", true),
        ("r = Bernoulli <dtype: int = 1> (u)", false),
    ] {
        let codes = found(model(reader, ""));
        assert_eq!(codes.contains(&"untyped-input"), untyped, "{reader}: {codes:?}");
    }
    let codes = found(model("r = Relu (u)", "float[2] "));
    assert!(!codes.contains(&"untyped-input") && codes.contains(&"subgraph-output-type"), "{codes:?}");
    // Declared in the graph's value_info, the If's output starts typed in onnx's inference:
    // whole, it is fine; of no kind (an empty TypeProto, `#@ type: b""`), it fails the
    // readers whose inference copies its shape (BatchNormalization) or makes an output of
    // no element type from it, not Relu's.
    let no_kind = "<\n  #@ type: b\"\"\n  u\n> ";
    for (value_info, reader, untyped) in [
        ("<float[2] u> ", "Relu (u)", false),
        ("", "Relu (u)", true),
        (no_kind, "Relu (u)", false),
        (no_kind, "BatchNormalization (u, x, x, x, x)", true),
        // Compress without `axis` makes a flat output with no element type.
        (no_kind, "Compress (u, c)", true),
        (no_kind, "Compress <axis: int = 0> (u, c)", false),
    ] {
        let text = format!(
            "<ir_version: 8, opset_import: [\"\" : 18, \"com.foo\" : 1]>\n\
             g (float[2] x, bool c) => (float[2] y) {value_info}{{\n  u = If (c) <then_branch = t () => (z) \
             {{ z = com.foo.Make (x) }}, else_branch = e () => (z) {{ z = com.foo.Make (x) }}>\n  y = {reader}\n}}\n"
        );
        let codes = found(text);
        assert_eq!(codes.contains(&"untyped-input"), untyped, "value_info {value_info:?}, {reader}: {codes:?}");
    }
}

/// A Loop carrying a value of unknown type (a custom operator's output) whose body declares
/// it an optional and gives back a sequence: the body sees the optional it declares on every
/// pass (as in onnx, which infers the body once), not the sequence it gave.
#[test]
fn loop_carried_value_of_unknown_type_keeps_the_kind_its_body_declares() {
    let text = "<ir_version: 8, opset_import: [\"\" : 16, \"com.foo\" : 1]>\n\
        g (int64 m, bool c, float[2] x) => (seq(float[2]) y) {\n  v = com.foo.Make (x)\n  \
        y = Loop (m, c, v) <body = b (int64 i, bool c_in, optional(seq(float[2])) o) => (bool c_out, seq(float[2]) s) {\n    \
        c_out = Identity (c_in)\n    has = OptionalHasElement (o)\n    \
        s = If (has) <then_branch = t () => (seq(float[2]) r) { r = OptionalGetElement (o) }, \
        else_branch = e () => (seq(float[2]) r2) { r2 = SequenceConstruct (x) }>\n  }>\n}\n";
    let full = CheckOptions { full_check: true, ..CheckOptions::default() };
    let report = crate::pipeline::check_text(text, &full);
    let errors: Vec<_> =
        report.diagnostics.iter().filter(|d| d.severity == crate::diagnostic::Severity::Error).collect();
    assert!(errors.is_empty(), "{errors:?}");
}
