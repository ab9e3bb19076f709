//! Rules on hand-written models: results the corpus does not pin down, and hostile sizes
//! and attributes that must give unknown dims, never an overflow.

use super::infer_main_graph;
use crate::analysis::analyze_text;

/// The inferred type of `value` in the model `text`, spelled as the text format spells it.
fn inferred(text: &str, value: &str) -> String {
    let analysis = analyze_text(text);
    assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
    let types = infer_main_graph(&analysis.model).types;
    types.iter().find(|(k, _)| k.escaped() == value).map_or_else(|| "-".to_owned(), |(_, t)| t.to_string())
}

fn model(opset: i64, signature: &str, body: &str) -> String {
    format!("<ir_version: 10, opset_import: [\"\" : {opset}]>\ng {signature} {{\n{body}\n}}\n")
}

#[test]
fn loop_carried_shape_that_grows_is_not_the_first_iterations() {
    let text = model(
        17,
        "(int64 n, bool c, float[1] start) => (float[?] grown)",
        "grown = Loop (n, c, start) <body: graph = body (int64 i, bool ci, float[1] acc) => (bool co, float[?] more) {
            co = Identity (ci)
            more = Concat <axis: int = 0> (acc, acc)
        }>",
    );
    assert_eq!(inferred(&text, "grown"), "float[?]");
}

#[test]
fn loop_carried_shape_the_body_keeps_stays_known() {
    let text = model(
        17,
        "(int64 n, bool c, float[3] start) => (float[3] same)",
        "same = Loop (n, c, start) <body: graph = body (int64 i, bool ci, float[3] acc) => (bool co, float[3] next) {
            co = Identity (ci)
            next = Neg (acc)
        }>",
    );
    assert_eq!(inferred(&text, "same"), "float[3]");
}

#[test]
fn resize_reads_constant_scales_and_keeps_unresized_axes() {
    let text = model(
        19,
        "(float[1, 3, N, 8] x) => (float[1, 3, N, 20] y)",
        "scales = Constant <value: tensor = float[2] {2.5, 2.5}> ()
         y = Resize <axes: ints = [2, 3]> (x, , scales)",
    );
    assert_eq!(inferred(&text, "y"), "float[1,3,?,20]");
}

/// Pools whose window is longer than the padded input, as onnxruntime sizes them (the
/// evaluator's cases in tests/fixtures/ops hold its values): shorter by less than a stride
/// gives one window, rounding up toward zero in ceil mode; more than a stride is an error
/// the kernel reports, so the size stays unknown.
#[test]
fn pools_longer_than_their_padded_input() {
    let pooled = |attrs: &str| {
        let text = model(19, "(float[1, 1, 1] x) => (float[?, ?, ?] y)", &format!("y = MaxPool <{attrs}> (x)"));
        inferred(&text, "y")
    };
    assert_eq!(pooled("kernel_shape: ints = [2], strides: ints = [2]"), "float[1,1,1]");
    assert_eq!(pooled("kernel_shape: ints = [2], strides: ints = [1]"), "float[1,1,0]");
    assert_eq!(pooled("kernel_shape: ints = [3], strides: ints = [2], ceil_mode: int = 1"), "float[1,1,0]");
    assert_eq!(
        pooled("kernel_shape: ints = [4], strides: ints = [3], pads: ints = [0, 1], ceil_mode: int = 1"),
        "float[1,1,1]"
    );
    assert_eq!(pooled("kernel_shape: ints = [3], strides: ints = [1]"), "float[1,1,?]");
}

#[test]
fn concat_places_known_values_after_unknown_ones() {
    let text = model(
        17,
        "(float[2, 3] x, int64[1] k) => (float[?, ?] y)",
        "s = Shape <end: int = 1> (x)
         shape = Concat <axis: int = 0> (k, s)
         y = Reshape (x, shape)",
    );
    assert_eq!(inferred(&text, "y"), "float[?,2]");
}

#[test]
fn positions_of_a_symbolic_length_have_that_length() {
    // GPT-2's position ids: Range(0, Shape(x)[1], 1).
    let text = model(
        17,
        "(float[B, S, 8] x) => (int64[?] positions)",
        "s = Shape (x)
         one = Constant <value: tensor = int64 {1}> ()
         zero = Constant <value: tensor = int64 {0}> ()
         n = Gather (s, one)
         positions = Range (zero, n, one)",
    );
    assert_eq!(inferred(&text, "positions"), "int64[S]");
}

#[test]
fn a_symbolic_length_survives_reshape_and_slice() {
    // T5's decoder: positions reshaped to a column, and its mask sliced to the length of
    // its own axis (or to the end, written as INT64_MAX); CLIP's position ids sliced to a
    // symbolic length keep the axes they do not slice.
    let text = model(
        17,
        "(int64[S] r, float[B, 1, S, S] m, int64[1, 64] ids, int64[B, T] tokens) => (y, z, w, p, q, v)",
        "column = Constant <value: tensor = int64[2] {-1, 1}> ()
         y = Reshape (r, column)
         s = Shape (m)
         three = Constant <value: tensor = int64 {3}> ()
         n = Gather (s, three)
         zero = Constant <value: tensor = int64[1] {0}> ()
         axes = Constant <value: tensor = int64[1] {3}> ()
         end = Unsqueeze (n, zero)
         z = Slice (m, zero, end, axes)
         big = Constant <value: tensor = int64[1] {9223372036854775807}> ()
         w = Slice (m, zero, big, axes)
         t = Shape (tokens)
         one = Constant <value: tensor = int64 {1}> ()
         len = Gather (t, one)
         len1 = Unsqueeze (len, zero)
         axis1 = Constant <value: tensor = int64[1] {1}> ()
         p = Slice (ids, zero, len1, axis1)
         q = Add (tokens, p)
         minus = Neg (n)
         back = Unsqueeze (minus, zero)
         v = Slice (m, back, big, axes)",
    );
    assert_eq!(inferred(&text, "y"), "int64[S,1]");
    assert_eq!(inferred(&text, "z"), "float[B,1,S,S]");
    assert_eq!(inferred(&text, "w"), "float[B,1,S,S]");
    // min(64, T): not T, which may be longer; against T it broadcasts to T (when T > 64
    // the Add fails).
    assert_eq!(inferred(&text, "p"), "int64[1,min(64, T)]");
    assert_eq!(inferred(&text, "q"), "int64[B,T]");
    // From -S (Neg of the length) to the end of an axis of S: the whole axis.
    assert_eq!(inferred(&text, "v"), "float[B,1,S,S]");
}

#[test]
fn an_expand_shape_guarded_against_minus_one_stays_known() {
    // The TorchScript exporter's Expand target: Where(shape == -1, ones, shape), with -1
    // made as ConstantOfShape([4]) · -1. Symbolic dims are never -1, so the shape is kept.
    let text = model(
        17,
        "(bool[B, 1, 1, S] mask, float[B, S, 8] x) => (bool[?, ?, ?, ?] y)",
        "s = Shape (x)
         b = Shape <end: int = 1> (x)
         t = Shape <start: int = 1, end: int = 2> (x)
         one = Constant <value: tensor = int64[1] {1}> ()
         shape = Concat <axis: int = 0> (b, one, t, t)
         four = Constant <value: tensor = int64[1] {4}> ()
         ones = ConstantOfShape <value: tensor = int64[1] {1}> (four)
         minus = Constant <value: tensor = int64 {-1}> ()
         negative = Mul (ones, minus)
         unset = Equal (shape, negative)
         target = Where (unset, ones, shape)
         y = Expand (mask, target)",
    );
    assert_eq!(inferred(&text, "y"), "bool[B,1,S,S]");
}

/// Sizes and attributes near the ends of `i64` reach every rule that computes sizes.
#[test]
fn hostile_sizes_never_overflow() {
    let huge = i64::MAX;
    let tiny = i64::MIN;
    let nodes = [
        format!(
            "y = Conv <strides: ints = [{huge}], pads: ints = [{huge}, {huge}], kernel_shape: ints = [{huge}]> (x, w)"
        ),
        format!(
            "y = MaxPool <ceil_mode: int = 1, strides: ints = [{huge}], pads: ints = [{tiny}, {huge}], kernel_shape: ints = [{tiny}], dilations: ints = [{huge}]> (x)"
        ),
        format!(
            "y = ConvTranspose <strides: ints = [{huge}], output_padding: ints = [{huge}], dilations: ints = [{huge}], pads: ints = [{tiny}, {tiny}]> (x, w)"
        ),
        format!(
            "y = ConvTranspose <auto_pad: string = \"SAME_UPPER\", strides: ints = [{tiny}], kernel_shape: ints = [{huge}]> (x, w)"
        ),
        format!(
            "y = MaxUnpool <kernel_shape: ints = [{huge}], strides: ints = [{huge}], pads: ints = [{tiny}, {tiny}]> (x, w)"
        ),
        "y = Pad <mode: string = \"constant\"> (x, pads)".to_owned(),
        format!("y = DepthToSpace <blocksize: int = {huge}> (x4)"),
        format!("y = SpaceToDepth <blocksize: int = {huge}> (x4)"),
        format!(
            "y = TfIdfVectorizer <ngram_indexes: ints = [{huge}], mode: string = \"TF\", min_gram_length: int = 1, max_gram_length: int = 1, max_skip_count: int = 0, ngram_counts: ints = [0]> (x)"
        ),
        "y = Col2Im (x, image, block)".to_owned(),
        "y = Range (start, limit, delta)".to_owned(),
        "y = Slice (x, start, limit, axes, delta)".to_owned(),
        "y = DFT <onesided: int = 1, inverse: int = 1> (x4, , )".to_owned(),
        "y = Split <num_outputs: int = 3> (x)".to_owned(),
        "y = Unique (x)".to_owned(),
        "y = CausalConvWithState (x, w)".to_owned(),
        format!("y = OneHot <axis: int = {tiny}> (x, start, x)"),
    ];
    for node in nodes {
        let text = model(
            24,
            &format!(
                "(float[{huge}, 4, {huge}] x, float[{tiny}, 2, {tiny}] w, float[{huge}, {huge}, {tiny}, 2] x4, \
                 int64[6] pads, int64[2] image, int64[2] block, int64[1] axes) => (float[?] y)"
            ),
            &format!(
                "start = Constant <value: tensor = int64[1] {{{tiny}}}> ()
                 limit = Constant <value: tensor = int64[1] {{{huge}}}> ()
                 delta = Constant <value: tensor = int64[1] {{-1}}> ()
                 {node}"
            ),
        );
        // Check and type problems are fine here; the text must read, and no rule may panic.
        let analysis = analyze_text(&text);
        assert!(analysis.readable && analysis.model.nodes.len() == 4, "{text}\n{:?}", analysis.diagnostics);
        let _ = infer_main_graph(&analysis.model);
    }
}

/// A model whose main graph calls model-local functions (`functions` is the text after the
/// graph).
fn model_with_functions(signature: &str, body: &str, functions: &str) -> String {
    format!("<ir_version: 10, opset_import: [\"\" : 21, \"local\" : 1]>\ng {signature} {{\n{body}\n}}\n{functions}")
}

#[test]
fn recursive_functions_are_not_expanded_again() {
    let text = model_with_functions(
        "(float[2] x) => (float[2] y, float[2] z)",
        "y = local.Rec (x)\n z = local.Ping (x)",
        "<domain: \"local\", opset_import: [\"\" : 21, \"local\" : 1]>\nRec (a) => (b) { b = local.Rec (a) }\n\
         <domain: \"local\", opset_import: [\"\" : 21, \"local\" : 1]>\nPing (a) => (b) { b = local.Pong (a) }\n\
         <domain: \"local\", opset_import: [\"\" : 21, \"local\" : 1]>\nPong (a) => (b) { b = local.Ping (a) }\n",
    );
    assert_eq!(inferred(&text, "y"), "-");
    assert_eq!(inferred(&text, "z"), "-");
}

#[test]
fn call_chains_deeper_than_the_limit_stop_without_types() {
    let header = "<domain: \"local\", opset_import: [\"\" : 21, \"local\" : 1]>\n";
    let mut functions = String::new();
    for depth in 0..40 {
        let call = if depth == 39 { "b = Neg (a)".to_owned() } else { format!("b = local.F{} (a)", depth + 1) };
        functions.push_str(&format!("{header}F{depth} (a) => (b) {{ {call} }}\n"));
    }
    let deep = model_with_functions("(float[2] x) => (float[2] y)", "y = local.F0 (x)", &functions);
    assert_eq!(inferred(&deep, "y"), "-");
    let shallow = model_with_functions("(float[2] x) => (float[2] y)", "y = local.F30 (x)", &functions);
    assert_eq!(inferred(&shallow, "y"), "float[2]");
}

#[test]
fn a_functions_body_does_not_see_the_callers_values() {
    let text = model_with_functions(
        "(float[2] x, float[2] hidden) => (float[2] y)",
        "y = local.Leak (x)",
        "<domain: \"local\", opset_import: [\"\" : 21]>\nLeak (a) => (b) { b = Add (a, hidden) }\n",
    );
    // The model is invalid (`hidden` is undefined where it is used), so infer it directly.
    let analysis = analyze_text(&text);
    let types = infer_main_graph(&analysis.model).types;
    assert!(types.keys().any(|k| k.escaped() == "x"), "the graph's own values are typed");
    let y = types.iter().find(|(k, _)| k.escaped() == "y").map(|(_, t)| t.to_string());
    // From `a` alone: an unknown rank. Had the body seen the caller's `hidden`, float[2].
    assert_eq!(y.as_deref(), Some("float[]"));
}

/// Operators whose schema has a function body get the same types from the body as from
/// their rule: the body mechanism (used for operators without a rule) is checked against
/// the rules on every body the schemas hold for these signatures.
#[test]
fn schema_bodies_infer_what_the_rules_infer() {
    let cases: &[(&str, i64, &str, &str)] = &[
        ("Celu", 28, "(float[2, N, 4] x)", "y = Celu <alpha: float = 2.0> (x)"),
        ("Elu", 22, "(float[2, N, 4] x)", "y = Elu (x)"),
        ("HardSigmoid", 22, "(float[2, N, 4] x)", "y = HardSigmoid (x)"),
        ("HardSwish", 22, "(float[2, N, 4] x)", "y = HardSwish (x)"),
        ("LeakyRelu", 16, "(float[2, N, 4] x)", "y = LeakyRelu (x)"),
        ("Mish", 22, "(float[2, N, 4] x)", "y = Mish (x)"),
        ("Relu", 21, "(float[2, N, 4] x)", "y = Relu (x)"),
        ("Selu", 22, "(float[2, N, 4] x)", "y = Selu (x)"),
        ("Shrink", 21, "(float[2, N, 4] x)", "y = Shrink (x)"),
        ("Softplus", 22, "(float[2, N, 4] x)", "y = Softplus (x)"),
        ("Softsign", 22, "(float[2, N, 4] x)", "y = Softsign (x)"),
        ("ThresholdedRelu", 22, "(float[2, N, 4] x)", "y = ThresholdedRelu (x)"),
        ("Swish", 24, "(float[2, N, 4] x)", "y = Swish (x)"),
        ("PRelu", 21, "(float[2, N, 4] x, float[4] s)", "y = PRelu (x, s)"),
        ("GreaterOrEqual", 21, "(float[2, N, 4] x, float[4] s)", "y = GreaterOrEqual (x, s)"),
        ("LessOrEqual", 12, "(float[2, 1, 4] x, float[3, 1] s)", "y = LessOrEqual (x, s)"),
        ("MeanVarianceNormalization", 13, "(float[2, N, 4, 5] x)", "y = MeanVarianceNormalization (x)"),
        (
            "MeanVarianceNormalization",
            21,
            "(float[2, N, 4, 5] x)",
            "y = MeanVarianceNormalization <axes: ints = [1]> (x)",
        ),
        (
            "ReduceL2",
            18,
            "(float[2, N, 4] x)",
            "axes = Constant <value: tensor = int64[1] {-1}> ()\n y = ReduceL2 (x, axes)",
        ),
        (
            "ReduceLogSum",
            28,
            "(float[2, N, 4] x)",
            "axes = Constant <value: tensor = int64[1] {0}> ()\n y = ReduceLogSum <keepdims: int = 0> (x, axes)",
        ),
        ("ReduceSumSquare", 18, "(float[2, N, 4] x)", "y = ReduceSumSquare (x)"),
    ];
    for &(op, opset, inputs, body) in cases {
        let text = model(opset, &format!("{inputs} => (y)"), body);
        let analysis = analyze_text(&text);
        assert!(!analysis.has_errors(), "{text}\n{:?}", analysis.diagnostics);
        let model = &analysis.model;
        let graph = &model.graphs[model.graph.expect("main graph")];
        let numbers = crate::resolve::resolve_without_tables(model).numbers;
        let mut by_rule = super::Env::new(model, &numbers, opset);
        let mut by_body = super::Env::new(model, &numbers, opset);
        let g = model.graph.expect("main graph");
        for (v, value) in graph.inputs.iter().zip(numbers.graph_inputs(g, graph)) {
            let ty = v.ty.clone().expect("typed");
            by_rule.set_type(value, ty.clone());
            by_body.set_type(value, ty);
        }
        let (last, before) = graph.nodes.split_last().expect("a node");
        for &n in before {
            super::node::infer_node_in(model, n, &model.nodes[n], &mut by_rule);
            super::node::infer_node_in(model, n, &model.nodes[n], &mut by_body);
        }
        let node = &model.nodes[*last];
        super::node::infer_node_in(model, *last, node, &mut by_rule);
        let schema = crate::schema::registry().lookup("", op, opset).expect("a schema");
        let inputs = numbers.node_inputs(*last, node);
        let from_body = super::call::schema_body(schema, opset, node, inputs, &by_body)
            .unwrap_or_else(|| panic!("{op}-{opset}: no function body inferred"));
        let y = numbers.node_outputs(*last, node).first().expect("an output");
        let rule_type = by_rule.ty(y).map(ToString::to_string);
        let body_type = from_body.types.first().cloned().flatten().map(|t| t.to_string());
        assert!(rule_type.is_some(), "{op}-{opset}: the rule inferred nothing");
        assert_eq!(body_type, rule_type, "{op}-{opset}: the body and the rule disagree");
    }
}

#[test]
fn a_loop_body_inferred_again_reports_its_constraint_errors_once() {
    // The carried shape grows, so the body is inferred more than once; each pass finds the
    // bad Add again, and only the last pass counts.
    let text = model(
        17,
        "(int64 n, bool c, float[1] start) => (float[?] grown)",
        "grown = Loop (n, c, start) <body: graph = body (int64 i, bool ci, float[1] acc) => (bool co, float[?] more) {
            co = Identity (ci)
            mixed = Add (acc, i)
            more = Concat <axis: int = 0> (acc, acc)
        }>",
    );
    let analysis = analyze_text(&text);
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
    let types = super::infer_model(&analysis.model);
    let codes: Vec<&str> = types.violations.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["type-parameter-mismatch"], "{:?}", types.violations);
}

/// The value descriptions `annotate` writes into the main graph, as `name: type`.
fn annotated(text: &str) -> Vec<String> {
    let mut model = analyze_text(text).model;
    super::annotate(&mut model);
    let g = model.graph.expect("a main graph");
    model.graphs[g]
        .value_info
        .iter()
        .map(|v| format!("{}: {}", v.name.as_ref().map(|n| n.escaped()).unwrap_or_default(), v.ty.as_ref().unwrap()))
        .collect()
}

#[test]
fn annotate_describes_each_name_once_and_leaves_described_ones_alone() {
    let annotated_body = |body: &str| annotated(&model(17, "(float[2, 3] x) => (float[2, 3] y)", body));
    let unique = "a = Neg (x)\n b = Cast <to: int = 7> (a)\n y = Relu (a)";
    assert_eq!(annotated_body(unique), ["a: float[2,3]", "b: int64[2,3]"]);
    // A name defined twice (an invalid model) is described once, with its first type.
    let duplicated = "a = Neg (x)\n a = Cast <to: int = 7> (x)\n y = Relu (x)";
    assert_eq!(annotated_body(duplicated), ["a: float[2,3]"]);
}

/// A big model's inference starts on its first nodes while name resolution numbers the
/// later ones on another thread (`resolve_beside`). What it finds, what it rejects and the
/// numbers it leaves must be what inference after a whole resolution finds, with the hard
/// cases in it: subgraphs, a shape computation, a name defined twice, a use of nothing,
/// and calls of a model-local function (functions are numbered last). Twice: with the
/// first call at the end (inference must wait node by node), and with the first node a
/// call (inference must wait for the functions).
#[test]
fn inference_beside_resolution_finds_what_it_finds_after_it() {
    for call_first in [false, true] {
        let text = big_model_text(call_first);
        let analysis = analyze_text(&text);
        let model = &analysis.model;
        assert!(model.nodes.len() >= crate::resolve::BESIDE_INFERENCE);
        let after = super::infer_model(model);
        let (resolution, beside, ()) =
            crate::resolve::resolve_beside(model, |numbers| super::infer_all(model, numbers), &|_, _| ());
        let alone = crate::resolve::resolve_without_tables(model);
        let codes = |d: &[crate::diagnostic::Diagnostic]| d.iter().map(|d| (d.code, d.anchor)).collect::<Vec<_>>();
        assert_eq!(codes(&resolution.diagnostics), codes(&alone.diagnostics));
        assert!(codes(&alone.diagnostics).iter().any(|(c, _)| *c == "duplicate-definition"));
        assert!(codes(&alone.diagnostics).iter().any(|(c, _)| *c == "undefined-value"));
        let beside = beside.with_numbers(resolution.numbers);
        assert_eq!(codes(&beside.violations), codes(&after.violations));
        assert_eq!(beside.types, after.types, "call first: {call_first}");
        let typed = after.types.iter().filter(|t| t.is_some()).count();
        assert!(typed > model.nodes.len() / 2, "only {typed} values typed");
        for (id, node) in model.nodes.iter() {
            let (found, expected) = (beside.numbers.node_inputs(id, node), after.numbers.node_inputs(id, node));
            assert_eq!(found.iter().collect::<Vec<_>>(), expected.iter().collect::<Vec<_>>());
            let (found, expected) = (beside.numbers.node_outputs(id, node), after.numbers.node_outputs(id, node));
            assert_eq!(found.iter().collect::<Vec<_>>(), expected.iter().collect::<Vec<_>>());
            assert_eq!(beside.numbers.node_in_graph_space(id), after.numbers.node_in_graph_space(id));
        }
    }
}

/// A chain of blocks (Add, Shape, Reshape, an If whose branches are typed only through
/// what they compute) big enough to be resolved beside inference; the model-local
/// function `Twice` is called first or last.
fn big_model_text(call_first: bool) -> String {
    let blocks = crate::resolve::BESIDE_INFERENCE / 4 + 50;
    let call = |input: &str, output: &str| format!("{output} = local.Twice ({input})\n");
    let mut body = if call_first { call("x", "h0") } else { "h0 = Identity (x)\n".to_owned() };
    for i in 0..blocks {
        let j = i + 1;
        body += &format!(
            "a{i} = Add (h{i}, b)\n s{i} = Shape (a{i})\n r{i} = Reshape (a{i}, s{i})\n\
             h{j} = If (c) <then_branch: graph = t{i} () => (o) {{ o = Relu (r{i}) }}, \
             else_branch: graph = e{i} () => (o) {{ o = Neg (r{i}) }}>\n"
        );
        if i == blocks / 2 {
            body += &format!("a{i} = Neg (h{j})\n u{i} = Add (h{j}, nowhere)\n");
        }
    }
    body += &call(&format!("h{blocks}"), "y");
    format!(
        "<ir_version: 10, opset_import: [\"\" : 21, \"local\" : 1]>\n\
         g (float[N, 4] x, bool c) => (float[N, 4] y) <float[4] b = {{1, 2, 3, 4}}> {{\n{body}}}\n\
         <domain: \"local\", opset_import: [\"\" : 21]>\nTwice (v) => (w) {{ w = Add (v, v) }}\n"
    )
}

/// `annotate` of a big model (inference beside resolution, the outputs to describe listed
/// on the resolver's thread) describes each named node output inference after a whole
/// resolution types, once, in node order, except the graph's outputs.
#[test]
fn annotating_a_big_model_describes_what_inference_after_resolution_types() {
    let analysis = analyze_text(&big_model_text(false));
    let mut model = analysis.model;
    let g = model.graph.expect("a main graph");
    let types = super::infer_model(&model);
    let mut seen = std::collections::HashSet::new();
    let mut expected = Vec::new();
    for &n in &model.graphs[g].nodes {
        for (i, name) in model.nodes[n].outputs.iter().enumerate() {
            if name.as_str() != Some("y") && seen.insert(name.clone()) {
                let ty = types.node_output(&model, n, i);
                expected.extend(ty.map(|t| (name.to_string(), t.to_string())));
            }
        }
    }
    let added = super::annotate(&mut model);
    let found: Vec<_> = model.graphs[g]
        .value_info
        .iter()
        .map(|v| {
            (
                v.name.as_ref().map(ToString::to_string).unwrap_or_default(),
                v.ty.as_ref().map(ToString::to_string).unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(added, found.len());
    assert!(found.len() > model.nodes.len() / 2);
    assert_eq!(found, expected);
}

/// Nodes share what they give only when nothing tells them apart: no attributes, no input
/// known, the same operator at the same version, the same inputs given.
#[test]
fn untyped_nodes_share_outputs_only_when_nothing_tells_them_apart() {
    let text = model(
        21,
        "(float[2] x) => (float[2] y)",
        "a = Relu (x)
        b = Relu (nowhere)
        c = Relu (elsewhere)
        d = Clip (nowhere, , elsewhere)
        e = Clip (nowhere, elsewhere)
        f = LeakyRelu <alpha: float = 0.5> (nowhere)
        g = Abs (nowhere)
        y = Identity (a)",
    );
    let analysis = analyze_text(&text);
    let model = &analysis.model;
    let numbers = crate::resolve::resolve_without_tables(model).numbers;
    let mut env = super::Env::new(model, &numbers, 21);
    let g = model.graph.expect("a main graph");
    super::infer_graph(model, g, &mut env);
    let keys: Vec<_> = model.graphs[g]
        .nodes
        .iter()
        .map(|&n| {
            let node = &model.nodes[n];
            let op = node.op_type.as_ref().and_then(crate::ir::Str::as_str).unwrap_or("");
            let schema = crate::schema::registry().lookup("", op, 21).expect("a schema");
            env.untyped_key(schema, 21, node, numbers.node_inputs(n, node))
        })
        .collect();
    assert!(keys[0].is_none(), "its input is known");
    assert!(keys[1].is_some() && keys[1] == keys[2], "two Relu of unknown inputs");
    assert!(keys[3].is_some() && keys[4].is_some() && keys[3] != keys[4], "other inputs given");
    assert!(keys[5].is_none(), "attributes");
    assert!(keys[6].is_some() && keys[6] != keys[1], "another operator");
}

#[test]
fn reductions_that_check_no_axis_range_reduce_only_the_axes_in_range() {
    // Version 1 and ReduceMax-11 pass over an axis out of range (as onnx); ReduceSum-11
    // checks the range, so its output is not inferred from such axes.
    let unranged = model(11, "(float[2, 3] x) => (float[2, 3] y)", "y = ReduceMax <axes: ints = [7, 1]> (x)");
    assert_eq!(inferred(&unranged, "y"), "float[2,1]");
    let version_1 =
        model(9, "(float[2, 3] x) => (float[2, 3] y)", "y = ReduceSum <axes: ints = [-3], keepdims: int = 0> (x)");
    assert_eq!(inferred(&version_1, "y"), "float[2,3]");
}

#[test]
fn gemm_output_beside_an_operand_of_unknown_shape_follows_each_version() {
    // B has no shape: version 13 still gives rank 2 with M from A, version 11 nothing,
    // version 6 C's shape.
    let signature = "(float[2, 3] a, float[] b, float[2, 4] c) => (float[2, 4] y)";
    let at = |opset| inferred(&model(opset, signature, "y = Gemm (a, b, c)"), "y");
    assert_eq!(at(13), "float[2,?]");
    assert_eq!(at(11), "float[]");
    assert_eq!(at(6), "float[2,4]");
}

/// A model importing onnxruntime's `com.microsoft` domain beside onnx's.
fn contrib_model(signature: &str, body: &str) -> String {
    format!("<ir_version: 10, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\ng {signature} {{\n{body}\n}}\n")
}

#[test]
fn contrib_normalizations_give_onnxruntimes_shapes() {
    // The sum's dims the input leaves unknown are the skip's; mean and inv_std_var are
    // float32 with the last axis 1.
    let text = contrib_model(
        "(float16[?, ?, 8] x, float16[B, S, 8] s, float16[8] g) => (float16[] y, float[] m, float[] i, float16[] z)",
        "y, m, i, z = com.microsoft.SkipLayerNormalization (x, s, g)",
    );
    assert_eq!(inferred(&text, "y"), "float16[B,S,8]");
    assert_eq!(inferred(&text, "m"), "float[B,S,1]");
    assert_eq!(inferred(&text, "i"), "float[B,S,1]");
    assert_eq!(inferred(&text, "z"), "float16[B,S,8]");
    // A skip of batch 1 is repeated over the input's batch: its 1 says nothing; without the
    // input's rank, a 3-D skip gives it; the hidden size may come from gamma.
    let text = contrib_model(
        "(float[?, ?, ?] x, float[1, S, ?] s, float[8] g) => (float[] y)",
        "y = com.microsoft.SkipSimplifiedLayerNormalization (x, s, g)",
    );
    assert_eq!(inferred(&text, "y"), "float[?,S,8]");
    let text = contrib_model(
        "(float[] x, float[B, S, 8] s, float[8] g) => (float[] y)",
        "y = com.microsoft.SkipLayerNormalization (x, s, g)",
    );
    assert_eq!(inferred(&text, "y"), "float[B,S,8]");
    let text = contrib_model(
        "(int32[B, S] ids, float[10, 4] w, float[8, 4] p, float[4] g, float[4] b) => (float[] y, int32[] mi, float[] e)",
        "y, mi, e = com.microsoft.EmbedLayerNormalization (ids, , w, p, , g, b)",
    );
    assert_eq!(inferred(&text, "y"), "float[B,S,4]");
    assert_eq!(inferred(&text, "mi"), "int32[B]");
    assert_eq!(inferred(&text, "e"), "float[B,S,4]");
}

#[test]
fn contrib_fused_operators_give_onnxruntimes_shapes() {
    // transBatch moves the first axis before the last two, then trans swaps those.
    let text = contrib_model(
        "(float[5, 3, 4, 2] a, float[6, 3, 4, 5] b) => (float[] y)",
        "y = com.microsoft.FusedMatMul <transA = 1, transBatchA = 1, transB = 1, transBatchB = 1> (a, b)",
    );
    assert_eq!(inferred(&text, "y"), "float[3,4,2,6]");
    let text = contrib_model(
        "(float[M, 4] a, float[5, 4] b) => (float[] y)",
        "y = com.microsoft.FusedGemm <transB = 1, activation = \"Relu\"> (a, b)",
    );
    assert_eq!(inferred(&text, "y"), "float[M,5]");
    let text = contrib_model(
        "(float[N, 3, 8, 8] x, float[4, 3, 3, 3] w) => (float[] y)",
        "y = com.microsoft.FusedConv <pads = [1, 1, 1, 1], strides = [2, 2], activation = \"Relu\"> (x, w)",
    );
    assert_eq!(inferred(&text, "y"), "float[N,4,4,4]");
    // Range's delta is 1 when omitted.
    let text = contrib_model(
        "() => (int64[] y)",
        "s = Constant <value = int64 {-2}> ()
         l = Constant <value = int64 {3}> ()
         y = com.microsoft.Range (s, l)",
    );
    assert_eq!(inferred(&text, "y"), "int64[5]");
}

/// onnxruntime's attention operators keep the symbolic dims of their inputs, as
/// onnxruntime's `symbolic_shape_infer.py` does (the shapes below are its, but for a sum of
/// a symbol and a number, which it writes as a new symbol `past+seq` and we leave unknown).
#[test]
fn contrib_attention_operators_keep_symbolic_dims() {
    let attention = contrib_model(
        "(float[batch, seq, 32] x, float[32, 96] w, float[96] b, int32[batch] m, int32[batch, total] raw, float[2, batch, 2, past, 16] past) => (y, present, y2, present2)",
        "y, present = com.microsoft.Attention <num_heads: int = 2> (x, w, b, m)
         y2, present2 = com.microsoft.Attention <num_heads: int = 2, unidirectional: int = 1> (x, w, b, raw, past)",
    );
    assert_eq!(inferred(&attention, "y"), "float[batch,seq,32]");
    assert_eq!(inferred(&attention, "present"), "float[2,batch,2,seq,16]");
    assert_eq!(inferred(&attention, "present2"), "float[2,batch,2,total,16]");
    let mha = contrib_model(
        "(float[batch, seq, 32] q, float[batch, kv, 32] k, float[batch, kv, 32] v, float[batch, 2, past, 16] pk, float[batch, 2, past, 16] pv) => (y, pk1, pv1, y2, pk2, pv2)",
        "y, pk1, pv1 = com.microsoft.MultiHeadAttention <num_heads: int = 2> (q, k, v)
         y2, pk2, pv2 = com.microsoft.MultiHeadAttention <num_heads: int = 2> (q, k, v, , , , pk, pv)",
    );
    assert_eq!(inferred(&mha, "y"), "float[batch,seq,32]");
    assert_eq!(inferred(&mha, "pk1"), "float[batch,2,kv,16]");
    assert_eq!(inferred(&mha, "pv2"), "float[batch,2,?,16]");
    let rotary = contrib_model(
        "(float[batch, seq, 32] x, int64[batch, seq] p, float[10, 8] c, float[10, 8] s) => (y)",
        "y = com.microsoft.RotaryEmbedding (x, p, c, s)",
    );
    assert_eq!(inferred(&rotary, "y"), "float[batch,seq,32]");
    let gqa = contrib_model(
        "(float[batch, seq, 64] q, float[batch, seq, 32] k, float[batch, seq, 32] v, float[batch, 2, max, 16] pk, float[batch, 2, max, 16] pv, int32[batch] sl, int32 t, float[batch, seq, 128] qkv) => (y, pk1, pv1, y2)",
        "y, pk1, pv1 = com.microsoft.GroupQueryAttention <num_heads: int = 4, kv_num_heads: int = 2> (q, k, v, pk, pv, sl, t)
         y2 = com.microsoft.GroupQueryAttention <num_heads: int = 4, kv_num_heads: int = 2> (qkv, , , pk, pv, sl, t)",
    );
    assert_eq!(inferred(&gqa, "y"), "float[batch,seq,64]");
    // max(buffer, total_sequence_length): unknown while the total is.
    assert_eq!(inferred(&gqa, "pk1"), "float[batch,2,?,16]");
    assert_eq!(inferred(&gqa, "y2"), "float[batch,seq,64]");
    // Without a past, a quantized cache is written as int8, or as int4 two to a uint8.
    for (bits, cache) in [(8, "int8[batch,2,?,16]"), (4, "uint8[batch,2,?,8]")] {
        let quantized = contrib_model(
            "(float[batch, seq, 64] q, float[batch, seq, 32] k, float[batch, seq, 32] v, int32[batch] sl, int32 t, float[32] ks, float[32] vs) => (y, pk1, pv1)",
            &format!(
                "y, pk1, pv1 = com.microsoft.GroupQueryAttention <num_heads: int = 4, kv_num_heads: int = 2, \
                 k_quant_type: string = \"PER_CHANNEL\", v_quant_type: string = \"PER_CHANNEL\", \
                 kv_cache_bit_width: int = {bits}> (q, k, v, , , sl, t, , , , , , ks, vs)"
            ),
        );
        assert_eq!(inferred(&quantized, "pk1"), cache);
        assert_eq!(inferred(&quantized, "y"), "float[batch,seq,64]");
    }
}
