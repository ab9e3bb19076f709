//! A node against a schema: defaults restated across a version, and the judgement of the
//! converted node against the target version (attributes, inputs, outputs, types).

use super::Site;
use crate::ir::{Attribute, AttributeType, AttributeValue, Str, TypeValue};
use crate::schema::{OpSchema, registry};

/// Writes out, on a node that leaves it unset, an attribute whose default differs between
/// the version it leaves and the one it reaches, with the default it had.
pub(super) fn restate_defaults(site: &mut Site, leaving: &OpSchema, reaching: &OpSchema) {
    for a in &leaving.attributes {
        let Some(default) = &a.default else { continue };
        let Some(other) = reaching.attribute(&a.name) else { continue };
        if other.default.as_ref() == Some(default) || site.node().attribute(&a.name).is_some() {
            continue;
        }
        if let Some(attribute) = attribute_of(&a.name, a.ty, default) {
            site.set(attribute);
        }
    }
}

/// An attribute holding a schema's default value.
fn attribute_of(name: &str, ty: AttributeType, value: &serde_json::Value) -> Option<Attribute> {
    let mut a = Attribute { name: Some(Str::from(name)), ty: Some(ty as i32), ..Attribute::default() };
    match ty {
        AttributeType::Int => a.i = Some(value.as_i64()?),
        AttributeType::Float => a.f = Some(value.as_f64()? as f32),
        AttributeType::String => a.s = Some(Str::from(value.as_str()?)),
        AttributeType::Ints => {
            a.ints = value.as_array()?.iter().map(serde_json::Value::as_i64).collect::<Option<_>>()?
        }
        AttributeType::Floats => {
            a.floats = value.as_array()?.iter().map(|v| v.as_f64().map(|f| f as f32)).collect::<Option<_>>()?
        }
        _ => return None,
    }
    Some(a)
}

/// Whether an attribute holds the value an operator assumes when it is absent: its
/// schema's default, or for `dilations` and `strides` all ones.
fn holds_default(a: &Attribute, default: Option<&serde_json::Value>) -> bool {
    let name = a.name.as_ref().and_then(Str::as_str).unwrap_or("");
    match (a.value(), default) {
        (Some(AttributeValue::Ints(v)), _) if matches!(name, "dilations" | "strides") => v.iter().all(|&x| x == 1),
        (Some(AttributeValue::Int(v)), Some(d)) => d.as_i64() == Some(v),
        (Some(AttributeValue::Float(v)), Some(d)) => {
            d.as_f64().is_some_and(|d| (f64::from(v) - d).abs() <= 1e-6 * d.abs().max(1.0))
        }
        (Some(AttributeValue::String(v)), Some(d)) => d.as_str().is_some_and(|d| v == d),
        (Some(AttributeValue::Ints(v)), Some(d)) => {
            d.as_array().is_some_and(|d| d.iter().map(serde_json::Value::as_i64).eq(v.iter().map(|&x| Some(x))))
        }
        _ => false,
    }
}

/// The node against the target version's schema: what it cannot express there is refused,
/// an attribute it does not know but that holds the old default is dropped, a required one
/// the node leaves unset is written with the old default.
pub(super) fn judge(site: &mut Site, source: &OpSchema, target: &OpSchema) -> Result<(), String> {
    let reg = registry();
    let op = site.op().to_owned();
    let version = format!("{op}-{}", target.since_version);
    let mut reasons = Vec::new();
    // The default an attribute had in any version of the operator before (the source's
    // first, as the node was written against it).
    let old_default = |name: &str| -> Option<serde_json::Value> {
        source.attribute(name).and_then(|a| a.default.clone()).or_else(|| {
            reg.versions("", &op).iter().rev().find_map(|s| s.attribute(name).and_then(|a| a.default.clone()))
        })
    };
    if !target.allows_unchecked_attributes {
        let unknown: Vec<Attribute> = site
            .node()
            .attributes
            .iter()
            .filter(|a| a.name.as_ref().and_then(Str::as_str).is_some_and(|n| target.attribute(n).is_none()))
            .cloned()
            .collect();
        for a in unknown {
            let name = a.name.as_ref().and_then(Str::as_str).unwrap_or("").to_owned();
            if a.ref_attr_name.is_none() && holds_default(&a, old_default(&name).as_ref()) {
                site.take(&name);
            } else {
                reasons.push(format!("its attribute {name} has no equivalent in {version}"));
            }
        }
    }
    for a in target.attributes.iter().filter(|a| a.required) {
        if site.node().attribute(&a.name).is_some() {
            continue;
        }
        match old_default(&a.name).and_then(|d| attribute_of(&a.name, a.ty, &d)) {
            Some(attribute) => site.set(attribute),
            None => reasons.push(format!("{version} requires attribute {} and the node has none", a.name)),
        }
    }
    site.trim_inputs();
    let given = site.node().inputs.len();
    if target.max_inputs.is_some_and(|max| given > max) {
        let extra: Vec<String> = site.node().inputs[target.max_inputs.unwrap_or(0)..]
            .iter()
            .filter(|n| !n.is_empty())
            .map(|n| format!("'{n}'"))
            .collect();
        reasons.push(format!("{version} has no place for its input(s) {}", extra.join(", ")));
    }
    if given < target.min_inputs {
        reasons.push(format!("{version} needs {} input(s) and the node gives {given}", target.min_inputs));
    }
    // Outputs past what the target has room for go if nothing reads them.
    if let Some(max) = target.max_outputs {
        while site.node().outputs.len() > max
            && site.node().outputs.last().is_some_and(|o| o.is_empty() || !site.is_read(o))
        {
            site.node_mut().outputs.pop();
        }
        if site.node().outputs.len() > max {
            reasons
                .push(format!("{version} has {max} output(s) and the node's {} are read", site.node().outputs.len()));
        }
    }
    reasons.extend(type_reasons(site, target, &version));
    if reasons.is_empty() { Ok(()) } else { Err(reasons.join("; ")) }
}

/// The node's values whose inferred types the target's constraints reject.
fn type_reasons(site: &Site, target: &OpSchema, version: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    let node = site.node();
    let sides = [("input", &node.inputs[..], &target.inputs), ("output", &node.outputs[..], &target.outputs)];
    for (side, names, formals) in sides {
        for (i, name) in names.iter().enumerate() {
            let Some(ty) = site.types.get(name).filter(|_| !name.is_empty()) else { continue };
            let Some(formal) =
                formals.get(i).or_else(|| formals.last().filter(|f| f.option == crate::schema::FormalOption::Variadic))
            else {
                continue;
            };
            let allowed = match ty.value.as_ref() {
                Some(TypeValue::Tensor(t)) => match t.elem_type.filter(|&e| e > 0 && e < 64) {
                    Some(e) => formal.tensor_elems & (1 << e) != 0,
                    None => true,
                },
                _ => match crate::infer::constraint_spelling(ty) {
                    Some(spelled) => target.allowed_types(formal).contains(&spelled.as_str()),
                    None => true,
                },
            };
            if !allowed {
                let spelled = crate::infer::constraint_spelling(ty).unwrap_or_default();
                reasons.push(format!("its {side} '{name}' is {spelled}, which {version} does not take"));
            }
        }
    }
    reasons
}
