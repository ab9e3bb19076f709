//! Operator schemas as the features show them: which schema a node uses (the imported opset
//! of its domain, in its model or function), and one-line spellings of signatures,
//! formals and attributes.

use onnx_core::ir::{Model, NodeId};
use onnx_core::schema::{AttributeSchema, Formal, FormalOption, OpSchema, registry};

use onnx_core::facts::{ScopeId, Scopes};

/// The version of `domain` a scope imports: a function's own imports first, then the
/// model's. `""` and `ai.onnx` are one domain.
pub fn imported_version(model: &Model, scope: Option<ScopeId>, domain: &str) -> Option<i64> {
    if let Some(ScopeId::Function(f)) = scope
        && let Some(v) = model.function_store[f].opset_version(domain)
    {
        return Some(v);
    }
    model.opset_version(domain)
}

pub use onnx_core::ir::schema_domain;

/// The schema a node resolves to, with the imported version it was looked up at.
pub fn node_schema(model: &Model, scopes: &Scopes, node: NodeId) -> Option<(&'static OpSchema, i64)> {
    let n = &model.nodes[node];
    let op = n.op_type.as_ref()?.as_str()?;
    let domain = std::str::from_utf8(n.domain_str()).ok()?;
    let version = imported_version(model, scopes.node_scope.get(&node).copied(), domain)?;
    registry().lookup(domain, op, version).map(|s| (s, version))
}

/// The domain as people write it in prose.
pub fn domain_label(domain: &str) -> &str {
    if domain.is_empty() { "ai.onnx" } else { domain }
}

/// `X: T`, `B?: T` (optional), `inputs...: T` (variadic).
pub fn formal_label(f: &Formal) -> String {
    let mark = match f.option {
        FormalOption::Single => "",
        FormalOption::Optional => "?",
        FormalOption::Variadic => "...",
    };
    format!("{}{mark}: {}", f.name, f.type_str)
}

/// `Relu(X: T) -> (Y: T)`.
pub fn signature(schema: &OpSchema) -> String {
    let list = |formals: &[Formal]| formals.iter().map(formal_label).collect::<Vec<_>>().join(", ");
    format!("{}({}) -> ({})", schema.op, list(&schema.inputs), list(&schema.outputs))
}

/// `alpha: float = 0.01`, `axis: int (required)`.
pub fn attribute_line(a: &AttributeSchema) -> String {
    let mut line = format!("{}: {}", a.name, a.ty.name());
    if a.required {
        line.push_str(" (required)");
    } else if let Some(default) = &a.default {
        line.push_str(&format!(" = {default}"));
    }
    line
}
