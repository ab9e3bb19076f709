//! Decoding the `onnx-opschema/1` export (layout: semantics spec §4.4) into a [`Registry`].

use foldhash::HashMap;

use serde::Deserialize;

use std::sync::OnceLock;

use super::{AttributeSchema, Formal, FormalOption, OpSchema, OpTable, Registry, TypeConstraint, Versions};
use crate::ir::AttributeType;

/// The export's header: everything but the schemas, which the build script indexed.
#[derive(Deserialize)]
struct Export<'a> {
    #[serde(borrow)]
    format: &'a str,
    ir_version: i64,
    domains: HashMap<String, i64>,
    extras: Extras,
}

#[derive(Deserialize)]
struct RawSchema {
    op: String,
    dom: String,
    since: i64,
    #[serde(rename = "in", default)]
    inputs: Vec<(String, String, String, u8, usize)>,
    #[serde(rename = "out", default)]
    outputs: Vec<(String, String, String, u8, usize)>,
    arity: [i64; 4],
    #[serde(default)]
    tc: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    attr: Vec<(String, String, u8, Option<serde_json::Value>)>,
    #[serde(default)]
    si: u8,
    #[serde(default)]
    dp: u8,
    #[serde(default)]
    dep: u8,
    #[serde(default)]
    exp: u8,
    #[serde(default)]
    nd: u8,
    #[serde(default, rename = "fn")]
    bodies: HashMap<String, String>,
    #[serde(default)]
    cfn: Vec<i64>,
    #[serde(default)]
    ort: u8,
}

#[derive(Debug, Deserialize)]
pub(super) struct Extras {
    allowed_output_counts: Vec<OutputCounts>,
    allow_unchecked_attributes: Vec<SchemaKey>,
    checker_experimental_ops: Vec<String>,
    internal_attribute_prefix: String,
}

#[derive(Debug, Deserialize)]
struct OutputCounts {
    op: String,
    dom: String,
    since: i64,
    counts: Vec<usize>,
}

#[derive(Debug, Deserialize)]
struct SchemaKey {
    op: String,
    dom: String,
    since: i64,
}

fn attribute_type(code: &str) -> Option<AttributeType> {
    use AttributeType::*;
    Some(match code {
        "f" => Float,
        "i" => Int,
        "s" => String,
        "t" => Tensor,
        "g" => Graph,
        "st" => SparseTensor,
        "tp" => TypeProto,
        "fs" => Floats,
        "is" => Ints,
        "ss" => Strings,
        "ts" => Tensors,
        "gs" => Graphs,
        "sts" => SparseTensors,
        "tps" => TypeProtos,
        _ => return None,
    })
}

fn formal(raw: (String, String, String, u8, usize), constraints: &[TypeConstraint]) -> Result<Formal, String> {
    let (name, type_str, option, homogeneous, min_arity) = raw;
    let option = match option.as_str() {
        "s" => FormalOption::Single,
        "o" => FormalOption::Optional,
        "v" => FormalOption::Variadic,
        other => return Err(format!("formal '{name}': unknown option '{other}'")),
    };
    let constraint = constraints.iter().position(|c| c.param == type_str);
    let tensor_elems = match constraint {
        Some(i) => constraints[i].tensor_elems,
        None => super::tensor_elem_bits([type_str.as_str()]),
    };
    Ok(Formal { name, type_str, option, homogeneous: homogeneous != 0, min_arity, constraint, tensor_elems })
}

fn bound(n: i64) -> Option<usize> {
    usize::try_from(n).ok()
}

/// Reads the export's header (versions and extras) and builds the table from the index
/// the build script made of where each operator's schemas are in the text. The schemas
/// themselves are decoded by [`versions`] when first looked up: reading all of them was
/// most of a small model's `onnx check`.
pub(super) fn registry(
    text: &'static str,
    header: &str,
    spans: &[(&'static str, &'static str, usize, usize)],
    typesets: &'static [&'static [&'static str]],
) -> Result<Registry, String> {
    let export: Export<'_> = serde_json::from_str(header).map_err(|e| e.to_string())?;
    if export.format != "onnx-opschema/1" {
        return Err(format!("unknown format '{}'", export.format));
    }
    let mut by_op: HashMap<&'static str, HashMap<&'static str, Vec<&'static str>>> = HashMap::default();
    for &(dom, op, start, end) in spans {
        let raw = text.get(start..end).ok_or("the schema index does not fit the export")?;
        by_op.entry(dom).or_default().entry(op).or_default().push(raw);
    }
    let table = |ops: HashMap<&'static str, Vec<&'static str>>| -> OpTable {
        ops.into_iter().map(|(op, raw)| (op, Versions { raw, decoded: OnceLock::new() })).collect()
    };
    let default_ops = table(by_op.remove("").unwrap_or_default());
    let domain_ops = by_op.into_iter().map(|(dom, ops)| (dom, table(ops))).collect();
    let mut domain_versions: Vec<(String, i64)> = export.domains.into_iter().collect();
    domain_versions.sort();
    let mut extras = export.extras;
    let experimental_ops = std::mem::take(&mut extras.checker_experimental_ops).into_iter().collect();
    let internal_attribute_prefix = std::mem::take(&mut extras.internal_attribute_prefix);
    Ok(Registry {
        default_ops,
        domain_ops,
        // Typesets are shared by many schemas; leaked once so constraints can borrow them.
        typesets,
        extras,
        domain_versions,
        ir_version: export.ir_version,
        experimental_ops,
        internal_attribute_prefix,
    })
}

/// Decodes every version of one operator, oldest first.
pub(super) fn versions(
    raw: &[&'static str],
    typesets: &'static [&'static [&'static str]],
    extras: &Extras,
) -> Result<Vec<OpSchema>, String> {
    let mut versions = raw.iter().map(|r| schema(r, typesets, extras)).collect::<Result<Vec<_>, _>>()?;
    versions.sort_by_key(|s| s.since_version);
    Ok(versions)
}

fn schema(raw: &str, typesets: &'static [&'static [&'static str]], extras: &Extras) -> Result<OpSchema, String> {
    let raw: RawSchema = serde_json::from_str(raw).map_err(|e| e.to_string())?;
    let matches =
        |op: &str, dom: &str, since: i64, raw: &RawSchema| raw.op == op && raw.dom == dom && raw.since == since;
    let mut type_constraints = Vec::new();
    for (param, index) in &raw.tc {
        let index = index.as_u64().and_then(|i| usize::try_from(i).ok());
        let allowed = index.and_then(|i| typesets.get(i)).ok_or(format!("{}: bad typeset index", raw.op))?;
        let tensor_elems = super::tensor_elem_bits(allowed.iter().copied());
        type_constraints.push(TypeConstraint { param: param.clone(), allowed, tensor_elems });
    }
    type_constraints.sort_by(|a, b| a.param.cmp(&b.param));
    let mut attributes = Vec::new();
    for (name, code, required, default) in &raw.attr {
        let ty = attribute_type(code).ok_or(format!("{}: attribute '{name}' has unknown type '{code}'", raw.op))?;
        attributes.push(AttributeSchema {
            name: name.clone(),
            ty,
            required: *required != 0,
            default: default.clone().filter(|v| !v.is_null()),
        });
    }
    let mut function_bodies: Vec<(i64, String)> = raw
        .bodies
        .iter()
        .map(|(v, body)| v.parse::<i64>().map(|v| (v, body.clone())).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    function_bodies.sort();
    let allowed_output_counts =
        extras.allowed_output_counts.iter().find(|c| matches(&c.op, &c.dom, c.since, &raw)).map(|c| c.counts.clone());
    let allows_unchecked_attributes =
        extras.allow_unchecked_attributes.iter().any(|k| matches(&k.op, &k.dom, k.since, &raw));
    Ok(OpSchema {
        op: raw.op.clone(),
        domain: raw.dom.clone(),
        since_version: raw.since,
        inputs: raw.inputs.into_iter().map(|f| formal(f, &type_constraints)).collect::<Result<_, _>>()?,
        outputs: raw.outputs.into_iter().map(|f| formal(f, &type_constraints)).collect::<Result<_, _>>()?,
        min_inputs: bound(raw.arity[0]).unwrap_or(0),
        max_inputs: bound(raw.arity[1]),
        min_outputs: bound(raw.arity[2]).unwrap_or(0),
        max_outputs: bound(raw.arity[3]),
        allowed_output_counts,
        type_constraints,
        attributes,
        allows_unchecked_attributes,
        deprecated: raw.dep != 0,
        experimental: raw.exp != 0,
        non_deterministic: raw.nd != 0,
        has_inference: raw.si != 0,
        has_data_propagation: raw.dp != 0,
        function_bodies,
        context_dependent_bodies: raw.cfn,
        from_onnxruntime: raw.ort != 0,
    })
}
