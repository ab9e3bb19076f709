//! Text → IR lowering: the meaning of each construct, as onnx 1.23.2 gives it.

use onnx_core::ir::*;
use onnx_core::lower::from_ast::{self, Lowered};

fn lower(source: &str) -> Lowered {
    let parse = onnx_syntax::parse_model(source);
    assert!(parse.errors.is_empty(), "{:?}", parse.errors);
    from_ast::model(&parse.tree.expect("tree"), source)
}

fn clean(source: &str) -> Model {
    let lowered = lower(source);
    assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
    lowered.model
}

fn codes(source: &str) -> Vec<&'static str> {
    lower(source).diagnostics.iter().map(|d| d.code).collect()
}

fn main_nodes(m: &Model) -> Vec<&Node> {
    m.main_graph().expect("graph").nodes.iter().map(|&n| &m.nodes[n]).collect()
}

#[test]
fn header_fields_append_and_overwrite_like_onnx() {
    let m = clean(
        r#"<ir_version: 7, ir_version: 8, opset_import: ["" : 13], opset_import: ["" : 14, "com.ms" : 1],
            producer_name: "p", model_version: -3, metadata_props: ["k": "v"]> g () => () {}"#,
    );
    assert_eq!(m.ir_version, Some(8));
    assert_eq!(m.opset_import.len(), 3);
    assert_eq!(m.model_version, Some(-3));
    assert_eq!(m.producer_name, Some(Str::from("p")));
    assert_eq!(m.metadata_props.len(), 1);
    assert_eq!(codes("<IR_VERSION: 7> g () => () {}"), vec!["unknown-header-key"]);
    assert_eq!(codes("<ir_version: 7.0> g () => () {}"), vec!["type-mismatch"]);
}

#[test]
fn graph_inputs_with_values_are_also_initializers() {
    let m = clean("g (float[2] x = {1, 2}, y) => (z) <float[1] w = {3}, float[N] t> { z = Add(x, w) }");
    let g = m.main_graph().unwrap();
    assert_eq!(g.inputs.len(), 2);
    assert_eq!(g.initializers.len(), 2);
    assert_eq!(g.value_info.len(), 1);
    let x = &m.tensors[g.initializers[0]];
    assert_eq!(x.float_data, vec![1.0, 2.0]);
    assert_eq!(x.dims, vec![2]);
    assert_eq!(g.inputs[1].ty, None);
}

#[test]
fn node_slots_domains_labels_and_overloads() {
    let m = clean("g (x) => (y) { , = Foo(,) [] a = com.ms.Bar:ov(x,,y) b = .a.b(x) }");
    let n = main_nodes(&m);
    assert_eq!(n[0].outputs[..], [Str::new()]);
    assert_eq!(n[0].inputs[..], [Str::new()]);
    assert_eq!(n[0].name, None);
    assert_eq!(n[0].domain, Some(Str::from("")), "the parser always sets the domain");
    assert_eq!(n[1].name, Some(Str::new()));
    assert_eq!(n[1].domain, Some(Str::from("com.ms")));
    assert_eq!(n[1].op_type, Some(Str::from("Bar")));
    assert_eq!(n[1].overload(), Some(&Str::from("ov")));
    assert_eq!(n[1].inputs[..], [Str::from("x"), Str::new(), Str::from("y")]);
    assert_eq!((n[2].domain.clone(), n[2].op_type.clone()), (Some(Str::from("a")), Some(Str::from("b"))));
    assert_eq!(codes("g (x) => (y) { y = (x) }"), vec!["empty-op-type"]);
}

#[test]
fn attribute_values_follow_onnx_typing() {
    let m = clean(
        r#"g (x) => (y) { y = Foo <a: float = 2, b = [1.5, 2], c: int = [1, 2], d = -0, e: float = -0, f = @r,
           g: ints = @r2, h: ints = [], i = float[2] t {1, 2}, j = seq(float[N]), k = "s", l = -inf> (x) }"#,
    );
    let attrs = &main_nodes(&m)[0].attributes;
    let get = |name: &str| attrs.iter().find(|a| a.name.as_ref().is_some_and(|n| n == name)).expect(name);
    assert_eq!((get("a").ty, get("a").f), (Some(AttributeType::Float as i32), Some(2.0)));
    assert_eq!(get("b").floats, vec![1.5, 2.0]);
    assert_eq!((get("c").ty, get("c").ints.clone()), (Some(AttributeType::Ints as i32), vec![1, 2]));
    assert_eq!(get("d").i, Some(0));
    assert!(get("e").f.is_some_and(|f| f == 0.0 && f.is_sign_negative()));
    assert_eq!((get("f").ty, get("f").ref_attr_name.clone()), (Some(0), Some(Str::from("r"))));
    assert_eq!(get("g").ty, Some(AttributeType::Ints as i32));
    assert_eq!(get("h").ty, Some(AttributeType::Ints as i32));
    let t = &m.tensors[get("i").t.unwrap()];
    assert_eq!((t.name.clone(), t.float_data.clone()), (Some(Str::from("t")), vec![1.0, 2.0]));
    assert!(matches!(get("j").tp.as_ref().unwrap().value, Some(TypeValue::Sequence(_))));
    assert_eq!(get("k").s, Some(Str::from("s")));
    assert_eq!(get("l").f, Some(f32::NEG_INFINITY));
}

#[test]
fn attribute_errors() {
    assert_eq!(codes("g (x) => (y) { y = Foo <a = [1, 2.5]> (x) }"), vec!["attribute-type-mismatch"]);
    assert_eq!(codes("g (x) => (y) { y = Foo <a = []> (x) }"), vec!["untyped-empty-list"]);
    assert_eq!(codes("g (x) => (y) { y = Foo <a: int = []> (x) }"), vec!["attribute-type-mismatch"]);
    assert_eq!(codes("g (x) => (y) { y = Foo <a: ints = 5> (x) }"), vec!["attribute-type-mismatch"]);
    assert_eq!(codes("g (x) => (y) { y = Foo <a: Int = 5> (x) }"), vec!["unknown-attribute-type"]);
    assert_eq!(codes("g (x) => (y) { y = Foo <a = 99999999999999999999> (x) }"), vec!["number-out-of-range"]);
    assert_eq!(codes("g (x) => (y) { y = Foo <a = 1e39> (x) }"), vec!["number-out-of-range"]);
}

#[test]
fn our_dialect_keeps_list_elements() {
    let m =
        clean("g (x) => (y) { y = Foo <a: tensors = [float[1] {1}, int64[2] {3, 4}], b = [seq(float), float]> (x) }");
    let attrs = &main_nodes(&m)[0].attributes;
    assert_eq!(attrs[0].tensors.len(), 2);
    assert_eq!(attrs[1].type_protos.len(), 2);
}

#[test]
fn tensor_literals_store_values_by_type() {
    let m = clean(
        r#"g () => () <int8[1] a = {300}, uint64[1] b = {-1}, float16[1] c = {15360}, string[2] d = {"x", "y"},
           double[1] e = {1e300}, complex64[1] f = {1, 2}, float[2] g = ["location": "w.bin", "offset": "0"], float[2] h = > {}"#,
    );
    let g = m.main_graph().unwrap();
    let t = |i: usize| &m.tensors[g.initializers[i]];
    assert_eq!(t(0).int32_data, vec![300]);
    assert_eq!(t(1).uint64_data, vec![u64::MAX]);
    assert_eq!(t(2).int32_data, vec![15360]);
    assert_eq!(t(3).string_data, vec![Str::from("x"), Str::from("y")]);
    assert_eq!(t(4).double_data, vec![1e300]);
    assert_eq!(t(5).float_data, vec![1.0, 2.0]);
    assert!(t(6).is_external());
    assert!(t(7).raw_data.is_none() && t(7).float_data.is_empty());
    assert_eq!(codes("g () => () <int32[1] a = {3000000000}> {}"), vec!["number-out-of-range"]);
    assert_eq!(codes("g () => () <float[N] a = {1}> {}"), vec!["tensor-needs-numeric-dims"]);
    assert_eq!(codes("g () => () <float[] a = {1}> {}"), vec!["tensor-needs-shape"]);
    assert_eq!(codes("g () => () <seq(float) a = {1}> {}"), vec!["tensor-needs-tensor-type"]);
}

#[test]
fn types_and_shapes() {
    let m = clean(
        r#"g (float a, float[] b, float[N, ?, "M + N", -1] c, opaque(x.y, T) d, opaque(x.y) e, map(int64, seq(float)) f) => () {}"#,
    );
    let g = m.main_graph().unwrap();
    let ty = |i: usize| g.inputs[i].ty.as_ref().unwrap().to_string();
    assert_eq!(ty(0), "float");
    assert_eq!(ty(1), "float[]");
    assert_eq!(ty(2), "float[N,?,M + N,-1]");
    assert_eq!(ty(3), "opaque(x.y, T)");
    assert_eq!(ty(4), "opaque(x.y)");
    assert_eq!(ty(5), "map(int64, seq(float))");
}

#[test]
fn functions() {
    let m = clean(
        r#"g (x) => (y) { y = local.F(x) }
           <domain: "local", opset_import: ["" : 18], overload: "o", doc_string: "d">
           F <a, b: float = 1.5> (float[N] x) => (y) <float t> { t = Relu(x) y = Neg(t) }"#,
    );
    let f = &m.function_store[m.functions[0]];
    assert_eq!(f.domain, Some(Str::from("local")));
    assert_eq!(f.overload, Some(Str::from("o")));
    assert_eq!(f.attributes, vec![Str::from("a")]);
    assert_eq!(f.attribute_protos.len(), 1);
    assert_eq!(f.value_info.len(), 2, "typed input x, then local t");
    assert_eq!(f.nodes.len(), 2);
    assert_eq!(codes(r#"g () => () {} F <a: float = "s"> (x) => (y) {}"#), vec!["attribute-type-mismatch"]);
    assert_eq!(codes(r#"g () => () {} <ir_version: 7> F (x) => (y) {}"#), vec!["unknown-header-key"]);
}

#[test]
fn annotations_set_fields_onnx_text_cannot_express() {
    let m = clean(
        r#"#@ node_domain: unset
           <ir_version: 10, opset_import: ["" : 21]>
           #@ doc_string: b"graph\ndoc", metadata_props: ["k": "v"]
           main (
             #@ doc_string: "input", denotation: "IMAGE", metadata_props: ["a": "b"]
             float[N] x
           ) => (float[N] y) <
             #@ storage: raw, tensor_doc_string: "w", segment: [0, 2]
             float[2] w = {1, -0.5},
             #@ raw_data: b"\x01\xff"
             uint8[2] direct =
           > {
             #@ doc_string: "node", metadata_props: ["n": "1"]
             a = Relu(x)
             #@ domain: "", overload: ""
             b = Relu(a)
             y = com.ms.Add <
               #@ doc_string: "attr"
               k = 1,
               t = #@ storage: raw
                   int64[1] {7}> (a, b)
           }"#,
    );
    let g = m.main_graph().unwrap();
    assert_eq!(g.doc_string.as_ref().unwrap().as_bytes(), b"graph\ndoc");
    assert_eq!(g.metadata_props.len(), 1);
    let x = &g.inputs[0];
    assert_eq!(x.doc_string, Some(Str::from("input")));
    assert_eq!(x.ty.as_ref().unwrap().denotation, Some(Box::new(Str::from("IMAGE"))));
    assert_eq!(x.metadata_props.len(), 1);
    let w = &m.tensors[g.initializers[0]];
    assert!(w.float_data.is_empty());
    assert_eq!(w.raw_data.as_deref(), Some(&[0, 0, 0x80, 0x3f, 0, 0, 0, 0xbf][..]));
    assert_eq!(w.doc_string, Some(Str::from("w")));
    assert_eq!(w.segment, Some(Segment { begin: Some(0), end: Some(2) }));
    assert_eq!(m.tensors[g.initializers[1]].raw_data.as_deref(), Some(&[1, 0xff][..]));
    let n = main_nodes(&m);
    assert_eq!((n[0].domain.clone(), n[0].doc_string().cloned()), (None, Some(Str::from("node"))));
    assert_eq!(n[0].metadata_props().len(), 1);
    assert_eq!((n[1].domain.clone(), n[1].overload().cloned()), (Some(Str::new()), Some(Str::new())));
    assert_eq!(n[2].domain, Some(Str::from("com.ms")), "a written domain is set");
    assert_eq!(n[2].attributes[0].doc_string, Some(Str::from("attr")));
    let t = &m.tensors[n[2].attributes[1].t.unwrap()];
    assert_eq!(t.raw_data.as_deref(), Some(&7i64.to_le_bytes()[..]));
}
