//! The function bodies of operator schemas (onnx 1.23.2's schema export, committed in
//! core/schemas) parse and lower without a diagnostic, and resolve: every value they use is
//! defined.

use onnx_core::lower::from_ast;
use onnx_core::resolve::resolve;

#[test]
fn schema_function_bodies_parse_and_resolve() {
    let path = onnx_tests::corpus_dir().join("../../core/schemas/onnx_schemas.json");
    let export: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema export")).expect("JSON");
    let mut bodies = 0;
    let mut failures = Vec::new();
    for schema in export["schemas"].as_array().expect("schemas") {
        let Some(functions) = schema["fn"].as_object() else { continue };
        for (opset, text) in functions {
            let name = format!("{}-{opset}", schema["op"].as_str().unwrap_or("?"));
            let text = text.as_str().expect("body text");
            bodies += 1;
            let parse = onnx_syntax::parse_function(text);
            if let Some(e) = parse.errors.first() {
                failures.push(format!("{name}: {} {}", e.code, e.message));
                continue;
            }
            let lowered = from_ast::function(&parse.tree.expect("tree"), text);
            let resolved = resolve(&lowered.model);
            if let Some(d) = lowered.diagnostics.iter().chain(&resolved.diagnostics).next() {
                failures.push(format!("{name}: {} {}", d.code, d.message));
            }
        }
    }
    assert_eq!(bodies, 43, "the schema export holds 43 static function bodies");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
