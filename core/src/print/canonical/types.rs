//! Types: a value's declaration (`type name`), tensor, sequence, map, optional and opaque
//! types, and the denotations that go into annotations.

use std::fmt::Write as _;

use super::escape::{annotation_text, embed, name, plain_name, utf8};
use super::notes::{Notes, with_notes};
use super::{Out, Printer, Unsupported, unsupported};
use crate::ir::*;
use crate::lower::to_proto::embedded;
use crate::print::is_identifier;

impl Printer<'_, '_> {
    /// `type name`, with any annotation line before it (then the item starts with the
    /// indentation and holds a line break).
    pub(super) fn value_info(&self, v: &ValueInfo, indent: usize) -> String {
        let mut notes = Notes::default();
        let n = match &v.name {
            Some(n) => n.clone(),
            None => {
                notes.raw("name: unset".into());
                Str::default()
            }
        };
        notes.text("doc_string", v.doc_string.as_ref());
        notes.pairs("metadata_props", &v.metadata_props);
        let decl = match &v.ty {
            Some(ty) => {
                let mut type_notes = Notes::default();
                type_notes.text("denotation", ty.denotation.as_deref());
                let plain = dim_denotations(ty, &mut type_notes);
                match self.ty(&plain) {
                    Ok(text) => {
                        notes.0.extend(type_notes.0);
                        format!("{text} {}", name(&n))
                    }
                    // A type the text cannot write goes whole into the annotation; the
                    // declaration itself is then untyped.
                    Err(_) => {
                        notes.raw(format!("type: {}", embed(&embedded::ty(ty))));
                        plain_name(&n)
                    }
                }
            }
            None => plain_name(&n),
        };
        with_notes(&notes, decl, indent)
    }

    pub(super) fn ty(&self, t: &Type) -> Out<String> {
        Ok(match &t.value {
            None => return unsupported("a type with no case set"),
            Some(TypeValue::Tensor(t)) => self.tensor_type(t)?,
            Some(TypeValue::SparseTensor(t)) => format!("sparse_tensor({})", self.tensor_type(t)?),
            Some(TypeValue::Sequence(Some(e))) => format!("seq({})", self.nested(e)?),
            Some(TypeValue::Optional(Some(e))) => format!("optional({})", self.nested(e)?),
            Some(TypeValue::Map { key_type: Some(k), value_type: Some(v) }) => {
                format!("map({}, {})", elem(*k)?, self.nested(v)?)
            }
            Some(TypeValue::Sequence(None) | TypeValue::Optional(None) | TypeValue::Map { .. }) => {
                return unsupported("a sequence, optional or map type without its element type");
            }
            Some(TypeValue::Opaque { domain, name: n }) => match (domain, n) {
                (None, None) => "opaque()".into(),
                (None, Some(n)) => format!("opaque({})", dotted(n)?),
                (Some(d), Some(n)) if is_identifier(n.as_bytes()) => {
                    format!("opaque({}, {})", dotted(d)?, utf8(n, "name")?)
                }
                _ => return unsupported("this opaque type"),
            },
        })
    }

    fn nested(&self, t: &Type) -> Out<String> {
        if t.denotation.is_some() {
            return unsupported("a denotation on a nested type");
        }
        self.ty(t)
    }

    fn tensor_type(&self, t: &TensorType) -> Out<String> {
        let mut s = elem(t.elem_type.ok_or_else(|| Unsupported("a tensor type without element type".into()))?)?;
        match &t.shape {
            None => s.push_str("[]"),
            Some(shape) if shape.dims.is_empty() => {}
            Some(shape) => {
                let mut dims = Vec::new();
                for d in &shape.dims {
                    if d.denotation.is_some() {
                        return unsupported("a dimension denotation");
                    }
                    dims.push(match &d.value {
                        Some(DimValue::Value(v)) => v.to_string(),
                        Some(DimValue::Param(p)) => name(p),
                        None => "?".into(),
                    });
                }
                let _ = write!(s, "[{}]", dims.join(", "));
            }
        }
        Ok(s)
    }
}

/// The type without the denotations of its dimensions, which go into a `dim_denotation`
/// annotation (`unset` for dims without one).
fn dim_denotations(ty: &Type, notes: &mut Notes) -> Type {
    let mut ty = ty.clone();
    if let Some(TypeValue::Tensor(t) | TypeValue::SparseTensor(t)) = &mut ty.value
        && let Some(shape) = &mut t.shape
        && shape.dims.iter().any(|d| d.denotation.is_some())
    {
        let items: Vec<String> = shape
            .dims
            .iter_mut()
            .map(|d| d.denotation.take().map_or_else(|| "unset".to_owned(), |d| annotation_text(&d)))
            .collect();
        notes.raw(format!("dim_denotation: [{}]", items.join(", ")));
    }
    ty
}

fn elem(code: i32) -> Out<String> {
    match DataType::from_code(code) {
        Some(t) if t != DataType::Undefined => Ok(t.name().to_owned()),
        _ => unsupported(format!("element type {code}")),
    }
}

fn dotted(s: &Str) -> Out<String> {
    let text = utf8(s, "opaque name")?;
    if text.split('.').all(|seg| is_identifier(seg.as_bytes())) {
        Ok(text)
    } else {
        unsupported("this opaque type name")
    }
}
