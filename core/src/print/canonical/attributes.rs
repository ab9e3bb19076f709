//! A node's attributes: `name: type = value`, a graph or graphs printed into a buffer of
//! their own, and any attribute the readable form cannot hold embedded whole as protobuf.

use super::escape::{embed, name, string, width};
use super::nan::f32_exact;
use super::notes::{Notes, with_notes};
use super::{OP_PLACEHOLDER, Out, Printer, Unsupported, unsupported};
use crate::ir::*;
use crate::lower::to_proto::embedded;

impl Printer<'_, '_> {
    pub(super) fn attribute_with_graphs(&mut self, a: &Attribute, indent: usize) -> String {
        if a.g.is_none() && a.graphs.is_empty() {
            return self.attribute(a, indent);
        }
        // Print the graph(s) into a fresh buffer at this indentation.
        let saved = std::mem::take(&mut self.out);
        self.capturing += 1;
        let result = self.attribute_graph_value(a, indent);
        self.capturing -= 1;
        let text = std::mem::replace(&mut self.out, saved);
        match result {
            Ok(()) => text,
            Err(_) => self.embedded_attribute(a, indent),
        }
    }

    /// An attribute the text cannot write naturally (sparse values, fields that disagree with
    /// the type, no name), embedded whole as protobuf; the value after `=` is only a
    /// placeholder, and so is the name when it has none.
    pub(super) fn embedded_attribute(&self, a: &Attribute, indent: usize) -> String {
        let placeholder = Str::from(OP_PLACEHOLDER);
        let n = a.name.as_ref().unwrap_or(&placeholder);
        let mut notes = Notes::default();
        notes.raw(format!("proto: {}", embed(&embedded::attribute(self.m, a))));
        with_notes(&notes, format!("{} = \"<embedded>\"", name(n)), indent)
    }

    fn attribute_graph_value(&mut self, a: &Attribute, indent: usize) -> Out {
        let (head, notes) = self.attribute_head(a)?;
        self.out.push_str(&notes.lines(indent));
        if !notes.0.is_empty() {
            self.out.push_str(&" ".repeat(indent));
        }
        self.out.push_str(&head);
        self.out.push_str(" = ");
        match a.attribute_type() {
            Some(AttributeType::Graph) if a.graphs.is_empty() && a.ref_attr_name.is_none() => {
                let g = a.g.ok_or_else(|| Unsupported("a graph attribute without its graph".into()))?;
                self.graph(g, indent, false);
                Ok(())
            }
            Some(AttributeType::Graphs) if a.g.is_none() && a.ref_attr_name.is_none() => {
                self.out.push('[');
                for (i, &g) in a.graphs.iter().enumerate() {
                    self.out.push('\n');
                    self.out.push_str(&" ".repeat(indent + 2));
                    self.graph(g, indent + 2, false);
                    if i + 1 < a.graphs.len() {
                        self.out.push(',');
                    }
                }
                self.out.push('\n');
                self.out.push_str(&" ".repeat(indent));
                self.out.push(']');
                Ok(())
            }
            _ => unsupported("an attribute whose fields disagree with its type"),
        }
    }

    /// `name: type` and the attribute's annotations.
    fn attribute_head(&self, a: &Attribute) -> Out<(String, Notes)> {
        let n = a.name.as_ref().ok_or_else(|| Unsupported("an attribute without a name".into()))?;
        let mut notes = Notes::default();
        notes.text("doc_string", a.doc_string.as_ref());
        let ty = a.attribute_type().ok_or_else(|| Unsupported("an attribute without a known type".into()))?;
        let head = if ty == AttributeType::Undefined {
            if a.ref_attr_name.is_none() {
                return unsupported("an attribute of undefined type");
            }
            name(n)
        } else {
            format!("{}: {}", name(n), ty.name())
        };
        Ok((head, notes))
    }

    pub(super) fn attribute(&self, a: &Attribute, indent: usize) -> String {
        self.natural_attribute(a, indent).unwrap_or_else(|_| self.embedded_attribute(a, indent))
    }

    fn natural_attribute(&self, a: &Attribute, indent: usize) -> Out<String> {
        let (head, notes) = self.attribute_head(a)?;
        let ty = a.attribute_type().unwrap_or(AttributeType::Undefined);
        // Exactly the fields the type selects must be set, or the text would lose some.
        let set = [
            ("f", a.f.is_some()),
            ("i", a.i.is_some()),
            ("s", a.s.is_some()),
            ("t", a.t.is_some()),
            ("g", a.g.is_some()),
            ("sparse_tensor", a.sparse_tensor.is_some()),
            ("tp", a.tp.is_some()),
            ("floats", !a.floats.is_empty()),
            ("ints", !a.ints.is_empty()),
            ("strings", !a.strings.is_empty()),
            ("tensors", !a.tensors.is_empty()),
            ("graphs", !a.graphs.is_empty()),
            ("sparse_tensors", !a.sparse_tensors.is_empty()),
            ("type_protos", !a.type_protos.is_empty()),
        ];
        let own = match ty {
            AttributeType::Float => "f",
            AttributeType::Int => "i",
            AttributeType::String => "s",
            AttributeType::Tensor => "t",
            AttributeType::Graph => "g",
            AttributeType::SparseTensor => "sparse_tensor",
            AttributeType::TypeProto => "tp",
            AttributeType::Floats => "floats",
            AttributeType::Ints => "ints",
            AttributeType::Strings => "strings",
            AttributeType::Tensors => "tensors",
            AttributeType::Graphs => "graphs",
            AttributeType::SparseTensors => "sparse_tensors",
            AttributeType::TypeProtos => "type_protos",
            AttributeType::Undefined => "",
        };
        if set.iter().any(|(field, on)| *on && *field != own) {
            return unsupported("an attribute whose fields disagree with its type");
        }
        let value = if let Some(r) = &a.ref_attr_name {
            if set.iter().any(|(_, on)| *on) {
                return unsupported("an attribute with both a reference and a value");
            }
            format!("@{}", name(r))
        } else {
            match ty {
                AttributeType::Float => {
                    f32_exact(a.f.ok_or_else(|| Unsupported("a float attribute without value".into()))?)?
                }
                AttributeType::Int => {
                    a.i.ok_or_else(|| Unsupported("an int attribute without value".into()))?.to_string()
                }
                AttributeType::String => {
                    string(a.s.as_ref().ok_or_else(|| Unsupported("a string attribute without value".into()))?)
                }
                AttributeType::Tensor => {
                    let t = a.t.ok_or_else(|| Unsupported("a tensor attribute without value".into()))?;
                    // `name: tensor = ` before it on the attribute's line.
                    self.tensor_value(&self.m.tensors[t], indent, width(&head) + 3)?
                }
                AttributeType::TypeProto => {
                    self.ty(a.tp.as_ref().ok_or_else(|| Unsupported("a type attribute without value".into()))?)?
                }
                AttributeType::Floats => {
                    format!("[{}]", a.floats.iter().map(|&f| f32_exact(f)).collect::<Out<Vec<_>>>()?.join(", "))
                }
                AttributeType::Ints => {
                    format!("[{}]", a.ints.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
                }
                AttributeType::Strings => format!("[{}]", a.strings.iter().map(string).collect::<Vec<_>>().join(", ")),
                AttributeType::Tensors => format!(
                    "[{}]",
                    a.tensors
                        .iter()
                        // Where in the list each starts is the formatter's to say (a node
                        // holding a tensor list is laid out by it).
                        .map(|&t| self.tensor_value(&self.m.tensors[t], indent, 0))
                        .collect::<Out<Vec<_>>>()?
                        .join(", ")
                ),
                AttributeType::TypeProtos => {
                    format!("[{}]", a.type_protos.iter().map(|t| self.ty(t)).collect::<Out<Vec<_>>>()?.join(", "))
                }
                AttributeType::SparseTensor | AttributeType::SparseTensors => {
                    return unsupported("sparse tensor attributes");
                }
                AttributeType::Graph | AttributeType::Graphs | AttributeType::Undefined => {
                    return unsupported("this attribute");
                }
            }
        };
        let separator = if value.starts_with('\n') { " =" } else { " = " };
        Ok(with_notes(&notes, format!("{head}{separator}{value}"), indent))
    }
}
