use super::{comment_count, format_model};

fn fmt(source: &str) -> String {
    match format_model(source) {
        Ok(text) => text,
        Err(errors) => panic!("{errors:?}\n{source}"),
    }
}

/// Formats and checks that formatting again changes nothing.
fn fmt_stable(source: &str) -> String {
    let once = fmt(source);
    assert_eq!(fmt(&once), once, "formatting is not idempotent");
    assert_eq!(comment_count(&once), comment_count(source), "comments lost:\n{once}");
    once
}

#[test]
fn lays_out_a_model_in_the_canonical_style() {
    let source = r#"<ir_version:10,opset_import:[""  :  21]> g(float[N,3] x)=>(float[N,3] y){y=Relu(x)}"#;
    let expected = "<\n  ir_version: 10,\n  opset_import: [\"\" : 21]\n>\ng (float[N, 3] x) => (float[N, 3] y) {\n  y = Relu (x)\n}\n";
    assert_eq!(fmt_stable(source), expected);
}

#[test]
fn keeps_comments_in_place_and_at_most_one_blank_line() {
    let source = "# model comment\n<ir_version: 10, opset_import: [\"\": 21]>\n\n\n# graph comment\ng (float x) => (float y) {\n  a = Relu (x) # trailing\n\n\n\n  # own line\n  y = Relu (a)\n  # last\n}\n# end\n";
    let out = fmt_stable(source);
    assert!(out.starts_with("# model comment\n<\n"), "{out}");
    assert!(out.contains(">\n\n# graph comment\ng (float x)"), "{out}");
    assert!(out.contains("  a = Relu (x) # trailing\n\n  # own line\n  y = Relu (a)\n  # last\n}\n# end\n"), "{out}");
}

#[test]
fn a_comment_inside_a_list_breaks_it() {
    let source = "<ir_version: 10, opset_import: [\"\": 21]>\ng (float x, # the input\n float z) => (float y) {\n  y = Add (x, z)\n}\n";
    let out = fmt_stable(source);
    assert!(out.contains("g (\n  float x, # the input\n  float z\n) => (float y) {"), "{out}");
}

#[test]
fn comments_in_odd_places_move_to_the_next_boundary_and_stay_there() {
    let source =
        "<ir_version: 10, opset_import: [\"\": 21]>\ng (float # a\n x) => (float y) {\n  y = # b\n Relu # c\n (x)\n}\n";
    let out = fmt_stable(source);
    assert_eq!(comment_count(&out), 3);
}

#[test]
fn long_lists_wrap_at_100_columns() {
    let inputs: Vec<String> = (0..30).map(|i| format!("float input_number_{i}")).collect();
    let source = format!(
        "<ir_version: 10, opset_import: [\"\": 21]>\ng ({}) => (float y) {{ y = Relu (input_number_0) }}",
        inputs.join(", ")
    );
    let out = fmt_stable(&source);
    assert!(out.lines().all(|l| l.len() <= 100), "{out}");
    assert!(out.contains("g (\n  float input_number_0,\n  float input_number_1,\n"), "{out}");
}

#[test]
fn many_tensor_values_are_packed_into_lines() {
    let values: Vec<String> = (0..200).map(|i| i.to_string()).collect();
    let source = format!(
        "<ir_version: 10, opset_import: [\"\": 21]>\ng () => (float[200] y) <float[200] w = {{{}}}> {{ y = Identity (w) }}",
        values.join(",")
    );
    let out = fmt_stable(&source);
    assert!(out.lines().all(|l| l.len() <= 100), "{out}");
    assert!(out.lines().count() < 25, "{out}");
}

#[test]
fn keeps_what_the_model_depends_on_as_written() {
    // Empty slots (a trailing one keeps its comma), attributes after the inputs, `=` before
    // a tensor payload, quoted and byte-string names, numbers as written.
    let source = r#"<ir_version: 10, opset_import: ["": 21]>
g (float x, float "odd name") => (float y, float z) {
  y, , = Foo (x, , ) <alpha = 1.50, t = float[1] w = {1e0}>
  z = Bar (b"\xff", "odd name") <g: graph = h () => (float q) { q = Baz () }>
}
"#;
    let out = fmt_stable(source);
    assert!(out.contains("y, , = Foo (x, ,) <alpha = 1.50, t = float[1] w = {1e0}>"), "{out}");
    assert!(out.contains("z = Bar (b\"\\xff\", \"odd name\") <\n    g: graph = h () => (float q) {\n"), "{out}");
}

#[test]
fn annotations_start_their_own_lines() {
    let source = "<ir_version: 10, opset_import: [\"\": 21]>\ng (float x) => (float y) {\n  y = If (x) <then_branch: graph = #@ doc_string: \"t\"\n t () => (float a) { a = Relu (x) }, else_branch: graph = e () => (float b) { b = Relu (x) }>\n}\n";
    let out = fmt_stable(source);
    // The annotated graph continues its attribute: one level deeper, body and all.
    assert!(
        out.contains("    then_branch: graph =\n      #@ doc_string: \"t\"\n      t () => (float a) {\n        a ="),
        "{out}"
    );
}

#[test]
fn broken_text_is_not_formatted() {
    let errors = format_model("<ir_version: 10> g (float x) => (float y) { y = }").unwrap_err();
    assert!(!errors.is_empty());
}

#[test]
fn functions_are_separated_by_one_blank_line() {
    let source = "<ir_version: 10, opset_import: [\"\": 21, \"local\": 1]>\ng (float x) => (float y) { y = local.F (x) }\n<domain: \"local\", opset_import: [\"\": 21]> F <alpha> (a) => (b) { b = Relu (a) }";
    let out = fmt_stable(source);
    assert!(
        out.contains(
            "}\n\n<domain: \"local\", opset_import: [\"\" : 21]>\nF <alpha> (a) => (b) {\n  b = Relu (a)\n}\n"
        ),
        "{out}"
    );
}

#[test]
fn an_initializer_without_data_before_the_closing_angle_keeps_a_space() {
    let source =
        "<ir_version: 10, opset_import: [\"\": 21]>\ng (float x) => (float z) <float[2] w = > {\n  z = Add (x, w)\n}\n";
    let out = fmt_stable(source);
    assert!(out.contains("<float[2] w = > {"), "{out}");
}

/// Plain number lists are laid out without their tokens; lists with comments or strings
/// (where a `}` may hide) keep them.
#[test]
fn lists_with_comments_or_strings_keep_their_tokens() {
    let source = concat!(
        "<ir_version: 10, opset_import: [\"\": 21]>\n",
        "g (float[3] x) => (float[3] y)\n",
        "  <float[3] a = {1.5,  -2e3,inf}, float[2] b = {1, # one\n 2}, string[2] s = {\"}\", \"{,\"}> {\n",
        "  y = Add (x, a)\n",
        "}\n",
    );
    let out = fmt_stable(source);
    assert!(out.contains("float[3] a = {1.5, -2e3, inf}"), "{out}");
    assert!(out.contains("# one"), "{out}");
    assert!(out.contains("string[2] s = {\"}\", \"{,\"}"), "{out}");
    assert!(out.contains("y = Add (x, a)"), "{out}");
}

#[test]
fn the_initializer_list_after_the_nodes_stays_after_them() {
    let source = "<ir_version: 10, opset_import: [\"\": 21]>\ng (float[2] x) => (float[2] y) {\n  y = Add (x, w) <a = 1>\n  # the weights\n  @initializers <float[2] w = {1, 2}, # trailing\n float[2] v>\n}\n";
    let out = fmt_stable(source);
    assert!(
        out.contains(
            "  y = Add (x, w) <a = 1>\n  # the weights\n  @initializers <\n    float[2] w = {1, 2}, # trailing\n    float[2] v\n  >\n}\n"
        ),
        "{out}"
    );
    let flat = fmt_stable(
        "<ir_version: 10, opset_import: [\"\": 21]>\ng (float[2] x) => (float[2] y) {\n  y = Add (x, w)\n  @initializers<float[2] w = {1, 2}>}",
    );
    assert!(flat.contains("  y = Add (x, w)\n  @initializers <float[2] w = {1, 2}>\n}\n"), "{flat}");
}

#[test]
fn only_the_word_initializers_opens_a_list_after_the_nodes() {
    let errors = format_model("g (float x) => (float y) {\n  y = Relu (x)\n  @weights <float w>\n}\n").unwrap_err();
    assert!(errors.iter().any(|e| e.message.contains("`@initializers < … >`")), "{errors:?}");
}
