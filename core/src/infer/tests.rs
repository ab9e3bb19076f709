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
