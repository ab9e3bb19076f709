//! The `onnx` style: exactly what `onnx.printer.to_text` of onnx 1.23.2 prints, quirks
//! included (trailing space after graph headers, `{` at column 0 after a nested graph's
//! locals, a double space before initializer values, attributes after the inputs when one
//! holds a graph, `...` for tensors it cannot show). Checked byte for byte against golden
//! files onnx printed for the whole corpus.

use std::fmt::Write as _;

use super::bulk;
use super::number::{f32_text, push_f32, push_f64, push_int};
use super::{is_identifier, quote};
use crate::ir::*;

/// Whether the onnx text surely loses something of this model, without printing it: a
/// tensor keeps its values in `raw_data`, which the text writes as a list that reads back
/// into the typed fields. (A model without such a tensor may still lose something; only
/// reading the text back tells.)
pub fn surely_lossy(m: &Model) -> bool {
    m.tensors.iter().any(|(_, t)| t.raw_data.is_some())
}

/// Prints a model as `onnx.printer.to_text(model)` does.
pub fn model(m: &Model) -> String {
    let mut p = Printer { m, out: super::output_for(m) };
    p.model();
    p.out
}

/// Prints a model's main graph alone, as `onnx.printer.to_text(model.graph)` does.
pub fn main_graph(m: &Model) -> String {
    let mut p = Printer { m, out: super::output_for(m) };
    match m.graph {
        Some(g) => p.graph(g, 3),
        None => p.graph_body(&Graph::default(), 3),
    }
    p.out
}

/// Prints one of a model's functions alone, as `onnx.printer.to_text(function)` does.
pub fn function(m: &Model, id: FunctionId) -> String {
    let mut p = Printer { m, out: String::new() };
    p.function(id);
    p.out
}

struct Printer<'m> {
    m: &'m Model,
    out: String,
}

fn text(s: &Str) -> String {
    s.as_str().map_or_else(|| String::from_utf8_lossy(s.as_bytes()).into_owned(), str::to_owned)
}

fn opt_text(s: &Option<Str>) -> String {
    s.as_ref().map_or_else(String::new, text)
}

impl Printer<'_> {
    fn push(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn indent(&mut self, n: usize) {
        for _ in 0..n {
            self.out.push(' ');
        }
    }

    /// A name quoted only when it is not an identifier.
    fn id(&mut self, name: &str) {
        if is_identifier(name.as_bytes()) {
            self.out.push_str(name);
        } else {
            quote(&mut self.out, name);
        }
    }

    fn model(&mut self) {
        let m = self.m;
        let mut entries = vec![format!("ir_version: {}", m.ir_version.unwrap_or(0))];
        entries.push(format!("opset_import: [{}]", opset_entries(&m.opset_import).join(", ")));
        for (key, value) in
            [("producer_name", &m.producer_name), ("producer_version", &m.producer_version), ("domain", &m.domain)]
        {
            if let Some(v) = value {
                let mut s = format!("{key}: ");
                quote(&mut s, &text(v));
                entries.push(s);
            }
        }
        if let Some(v) = m.model_version {
            entries.push(format!("model_version: {v}"));
        }
        if let Some(v) = &m.doc_string {
            let mut s = "doc_string: ".to_owned();
            quote(&mut s, &text(v));
            entries.push(s);
        }
        if !m.metadata_props.is_empty() {
            entries.push(format!("metadata_props: [{}]", pairs(&m.metadata_props)));
        }
        self.push("<\n");
        let body: Vec<String> = entries.iter().map(|e| format!("   {e}")).collect();
        self.push(&body.join(",\n"));
        self.push("\n>\n");
        match m.graph {
            Some(g) => self.graph(g, 3),
            None => self.graph_body(&Graph::default(), 3),
        }
        for &f in &m.functions {
            self.push("\n");
            self.function(f);
        }
    }

    fn graph(&mut self, id: GraphId, indent: usize) {
        let g = &self.m.graphs[id];
        self.graph_body(g, indent);
    }

    fn graph_body(&mut self, g: &Graph, indent: usize) {
        self.id(&opt_text(&g.name));
        self.push(" (");
        self.value_infos(&g.inputs);
        self.push(") => (");
        self.value_infos(&g.outputs);
        self.push(") ");
        if !g.initializers.is_empty() || !g.value_info.is_empty() {
            self.push("\n");
            self.indent(indent);
            self.push("<");
            let mut first = true;
            for &t in &g.initializers {
                if !first {
                    self.push(", ");
                }
                first = false;
                self.tensor(&self.m.tensors[t], true);
            }
            for v in &g.value_info {
                if !first {
                    self.push(", ");
                }
                first = false;
                self.value_info(v);
            }
            self.push(">\n");
        }
        self.push("{\n");
        for &n in &g.nodes {
            self.node(n, indent);
        }
        self.indent(indent.saturating_sub(3));
        self.push("}");
    }

    fn value_infos(&mut self, list: &[ValueInfo]) {
        for (i, v) in list.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.value_info(v);
        }
    }

    fn value_info(&mut self, v: &ValueInfo) {
        if let Some(ty) = &v.ty {
            self.ty(ty);
        }
        self.push(" ");
        self.id(&opt_text(&v.name));
    }

    fn ty(&mut self, t: &Type) {
        match &t.value {
            None => {}
            Some(TypeValue::Tensor(t)) => self.tensor_type(t),
            Some(TypeValue::SparseTensor(t)) => {
                self.push("sparse_tensor(");
                self.tensor_type(t);
                self.push(")");
            }
            Some(TypeValue::Sequence(e)) => {
                self.push("seq(");
                if let Some(e) = e {
                    self.ty(e);
                }
                self.push(")");
            }
            Some(TypeValue::Optional(e)) => {
                self.push("optional(");
                if let Some(e) = e {
                    self.ty(e);
                }
                self.push(")");
            }
            Some(TypeValue::Map { key_type, value_type }) => {
                self.push("map(");
                self.push(&elem_name(key_type.unwrap_or(0)));
                self.push(", ");
                if let Some(v) = value_type {
                    self.ty(v);
                }
                self.push(")");
            }
            Some(TypeValue::Opaque { domain, name }) => {
                self.push("opaque(");
                let domain = domain.as_deref().map_or_else(String::new, text);
                if !domain.is_empty() {
                    self.push(&domain);
                    self.push(",");
                }
                self.push(&name.as_deref().map_or_else(String::new, text));
                self.push(")");
            }
        }
    }

    fn tensor_type(&mut self, t: &TensorType) {
        self.push(&elem_name(t.elem_type.unwrap_or(0)));
        match &t.shape {
            None => self.push("[]"),
            Some(shape) if shape.dims.is_empty() => {}
            Some(shape) => {
                self.push("[");
                for (i, d) in shape.dims.iter().enumerate() {
                    if i > 0 {
                        self.push(",");
                    }
                    match &d.value {
                        Some(DimValue::Value(v)) => {
                            let _ = write!(self.out, "{v}");
                        }
                        Some(DimValue::Param(p)) => self.id(&text(p)),
                        None => self.push("?"),
                    }
                }
                self.push("]");
            }
        }
    }

    fn node(&mut self, id: NodeId, indent: usize) {
        let n = &self.m.nodes[id];
        self.indent(indent);
        if let Some(name) = &n.name {
            self.push("[");
            self.id(&text(name));
            self.push("] ");
        }
        self.names(&n.outputs);
        self.push(" = ");
        let domain = opt_text(&n.domain);
        if !domain.is_empty() {
            self.push(&domain);
            self.push(".");
        }
        self.push(&opt_text(&n.op_type));
        let overload = opt_text(&n.overload().cloned());
        if !overload.is_empty() {
            self.push(":");
            self.push(&overload);
        }
        let holds_graph = n.attributes.iter().any(|a| a.g.is_some() || !a.graphs.is_empty());
        if !holds_graph && !n.attributes.is_empty() {
            self.push(" <");
            self.attributes(&n.attributes, indent);
            self.push(">");
        }
        self.push(" (");
        self.names(&n.inputs);
        self.push(")");
        if holds_graph {
            self.push(" <");
            self.attributes(&n.attributes, indent);
            self.push(">");
        }
        self.push("\n");
    }

    fn names(&mut self, names: &[Str]) {
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.id(&text(name));
        }
    }

    fn attributes(&mut self, attrs: &[Attribute], indent: usize) {
        for (i, a) in attrs.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.attribute(a, indent);
        }
    }

    fn attribute(&mut self, a: &Attribute, indent: usize) {
        let ty = a.ty.and_then(AttributeType::from_code).unwrap_or(AttributeType::Undefined);
        self.push(&opt_text(&a.name));
        self.push(": ");
        self.push(ty.name());
        self.push(" = ");
        if let Some(r) = &a.ref_attr_name {
            self.push("@");
            self.push(&text(r));
            return;
        }
        match ty {
            AttributeType::Float => self.push(&f32_text(a.f.unwrap_or(0.0))),
            AttributeType::Int => {
                let _ = write!(self.out, "{}", a.i.unwrap_or(0));
            }
            AttributeType::String => quote(&mut self.out, &opt_text(&a.s)),
            AttributeType::Tensor => {
                if let Some(t) = a.t {
                    self.tensor(&self.m.tensors[t], false);
                }
            }
            AttributeType::Graph => {
                if let Some(g) = a.g {
                    self.graph(g, indent + 3);
                }
            }
            AttributeType::TypeProto => {
                if let Some(t) = &a.tp {
                    self.ty(t);
                }
            }
            AttributeType::Floats => {
                let items: Vec<String> = a.floats.iter().map(|f| f32_text(*f)).collect();
                let _ = write!(self.out, "[{}]", items.join(", "));
            }
            AttributeType::Ints => {
                let items: Vec<String> = a.ints.iter().map(i64::to_string).collect();
                let _ = write!(self.out, "[{}]", items.join(", "));
            }
            AttributeType::Strings => {
                self.push("[");
                for (i, s) in a.strings.iter().enumerate() {
                    if i > 0 {
                        self.push(", ");
                    }
                    quote(&mut self.out, &text(s));
                }
                self.push("]");
            }
            AttributeType::Tensors => {
                self.push("[");
                for (i, &t) in a.tensors.iter().enumerate() {
                    if i > 0 {
                        self.push(", ");
                    }
                    self.tensor(&self.m.tensors[t], false);
                }
                self.push("]");
            }
            AttributeType::Graphs => {
                self.push("[");
                for (i, &g) in a.graphs.iter().enumerate() {
                    if i > 0 {
                        self.push(", ");
                    }
                    self.graph(g, indent + 3);
                }
                self.push("]");
            }
            AttributeType::TypeProtos => {
                self.push("[");
                for (i, t) in a.type_protos.iter().enumerate() {
                    if i > 0 {
                        self.push(", ");
                    }
                    self.ty(t);
                }
                self.push("]");
            }
            AttributeType::SparseTensor | AttributeType::SparseTensors | AttributeType::Undefined => {}
        }
    }

    /// `elem[dims] name = {values}` for initializers (`is_initializer`), without ` = ` in
    /// attributes.
    fn tensor(&mut self, t: &Tensor, is_initializer: bool) {
        let code = t.data_type.unwrap_or(0);
        self.push(&elem_name(code));
        if !t.dims.is_empty() {
            let dims: Vec<String> = t.dims.iter().map(i64::to_string).collect();
            let _ = write!(self.out, "[{}]", dims.join(","));
        }
        let name = opt_text(&t.name);
        if !name.is_empty() {
            self.push(" ");
            self.id(&name);
        }
        if is_initializer {
            self.push(" = ");
        }
        if t.is_external() {
            self.push(&format!("[{}]", pairs(&t.external_data)));
            return;
        }
        match DataType::from_code(code) {
            Some(DataType::String) => {
                if t.raw_data.is_some() {
                    self.push("...");
                    return;
                }
                self.push("{");
                for (i, s) in t.string_data.iter().enumerate() {
                    if i > 0 {
                        self.push(", ");
                    }
                    quote(&mut self.out, &text(s));
                }
                self.push("}");
            }
            Some(dt) => {
                if !write_values(&mut self.out, t, dt) {
                    self.push("...");
                }
            }
            None => self.push("..."),
        }
    }

    fn function(&mut self, id: FunctionId) {
        let f = &self.m.function_store[id];
        self.push("<\n  domain: ");
        quote(&mut self.out, &opt_text(&f.domain));
        self.push(",\n");
        let overload = opt_text(&f.overload);
        if !overload.is_empty() {
            self.push("  overload: ");
            quote(&mut self.out, &overload);
            self.push(",\n");
        }
        // Joined without a space here, unlike the model header: onnx's quirk.
        let opsets = opset_entries(&f.opset_import).join(",");
        let _ = write!(self.out, "  opset_import: [{opsets}]\n>\n");
        self.id(&opt_text(&f.name));
        self.push(" ");
        if !f.attributes.is_empty() {
            let names: Vec<String> = f.attributes.iter().map(text).collect();
            let _ = write!(self.out, "<{}>", names.join(","));
        }
        self.push("(");
        self.names(&f.inputs);
        self.push(") => (");
        self.names(&f.outputs);
        self.push(")\n{\n");
        for &n in &f.nodes {
            self.node(n, 3);
        }
        self.push("}");
    }
}

/// `"domain" : version` for each import.
fn opset_entries(imports: &[OpsetImport]) -> Vec<String> {
    imports
        .iter()
        .map(|o| {
            let mut s = String::new();
            quote(&mut s, &opt_text(&o.domain));
            format!("{s} : {}", o.version.unwrap_or(0))
        })
        .collect()
}

fn pairs(list: &[StringPair]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|p| {
            let mut s = String::new();
            quote(&mut s, &opt_text(&p.key));
            s.push_str(": ");
            quote(&mut s, &opt_text(&p.value));
            s
        })
        .collect();
    items.join(", ")
}

fn elem_name(code: i32) -> String {
    DataType::from_code(code).map_or_else(|| "undefined".to_owned(), |t| t.name().to_owned())
}

/// Writes ` {v,v,…}`, the values onnx shows for a tensor; false (nothing written) where
/// onnx prints `...`. Values go straight into `out`: big tensors allocate nothing per value.
fn write_values(out: &mut String, t: &Tensor, dt: DataType) -> bool {
    use DataType as D;
    if matches!(
        dt,
        D::Int2
            | D::Uint2
            | D::Int4
            | D::Uint4
            | D::Float4e2m1
            | D::Float6e2m3
            | D::Float6e3m2
            | D::Complex64
            | D::Complex128
    ) {
        return false;
    }
    if let Some(raw) = &t.raw_data {
        let Some(count) = t.element_count().and_then(|c| usize::try_from(c).ok()) else { return false };
        let Ok(width) = usize::try_from(dt.bits() / 8) else { return false };
        if width == 0 || Some(raw.len()) != count.checked_mul(width) {
            return false;
        }
        // One loop per element type, so the hot loop has no per-value dispatch.
        fn each<const N: usize>(out: &mut String, raw: &[u8], write: impl Fn(&mut Vec<u8>, [u8; N]) + Sync) {
            let (values, _) = raw.as_chunks::<N>();
            bulk::join(out, values.len(), ",", |out, i| write(out, values[i]));
        }
        out.push_str(" {");
        match dt {
            D::Float => each(out, raw, |o, b| push_f32(o, f32::from_le_bytes(b))),
            D::Double => each(out, raw, |o, b| push_f64(o, f64::from_le_bytes(b))),
            D::Int8 => each(out, raw, |o, b| push_int(o, &i8::from_le_bytes(b))),
            D::Int16 => each(out, raw, |o, b| push_int(o, &i16::from_le_bytes(b))),
            D::Int32 => each(out, raw, |o, b| push_int(o, &i32::from_le_bytes(b))),
            D::Int64 => each(out, raw, |o, b| push_int(o, &i64::from_le_bytes(b))),
            // Unsigned and bit-pattern types: the unsigned value.
            _ => match width {
                1 => each(out, raw, |o, b| push_int(o, &u8::from_le_bytes(b))),
                2 => each(out, raw, |o, b| push_int(o, &u16::from_le_bytes(b))),
                4 => each(out, raw, |o, b| push_int(o, &u32::from_le_bytes(b))),
                _ => each(out, raw, |o, b| push_int(o, &u64::from_le_bytes(b))),
            },
        }
        out.push('}');
        return true;
    }
    let field = dt.typed_field();
    if matches!(field, TypedField::StringData | TypedField::None) {
        return false;
    }
    out.push_str(" {");
    match field {
        TypedField::FloatData => bulk::join(out, t.float_data.len(), ",", |o, i| push_f32(o, t.float_data[i])),
        TypedField::DoubleData => bulk::join(out, t.double_data.len(), ",", |o, i| push_f64(o, t.double_data[i])),
        TypedField::Int32Data => bulk::join(out, t.int32_data.len(), ",", |o, i| push_int(o, &t.int32_data[i])),
        TypedField::Int64Data => bulk::join(out, t.int64_data.len(), ",", |o, i| push_int(o, &t.int64_data[i])),
        TypedField::Uint64Data => bulk::join(out, t.uint64_data.len(), ",", |o, i| push_int(o, &t.uint64_data[i])),
        TypedField::StringData | TypedField::None => {}
    }
    out.push('}');
    true
}
