//! Tensors: an initializer's declaration, a tensor attribute's value, and the fields of a
//! tensor around its values (storage, external data, annotations), or the whole tensor
//! embedded as protobuf when the text cannot say all of it.

use super::escape::{embed, name, string, width};
use super::notes::{Notes, with_notes};
use super::stream::stream_marker;
use super::values::{Payload, typed_values};
use super::{Out, Printer, Unsupported, unsupported};
use crate::ir::tensor_data;
use crate::ir::*;
use crate::lower::to_proto::embedded;
use crate::print::is_identifier;

impl Printer<'_, '_> {
    pub(super) fn initializer(&self, t: &Tensor, indent: usize) -> String {
        let mut notes = Notes::default();
        let n = match &t.name {
            Some(n) => n.clone(),
            None => {
                notes.raw("tensor_name: unset".into());
                Str::default()
            }
        };
        let (ty, payload) = self.tensor_or_embedded(t, &mut notes, indent);
        let head = format!("{ty} {} =", name(&n));
        // The payload can be a hundred megabytes: put the head in front of it in place
        // rather than copying it into a new string.
        let item = match payload {
            Some(payload) => {
                // The declaration starts at `indent`, after its annotation lines if any.
                let mut values = payload.at(indent + width(&head) + 1, indent);
                values.insert_str(0, &format!("{head} "));
                values
            }
            None => head,
        };
        with_notes(&notes, item, indent)
    }

    /// A tensor's type and payload text, or, when the text cannot say all of its fields, a
    /// `tensor_proto` annotation holding it whole and a placeholder type (its element type
    /// where that is known) without payload.
    fn tensor_or_embedded(&self, t: &Tensor, notes: &mut Notes, indent: usize) -> (String, Option<Payload>) {
        let mut own = Notes::default();
        match self.tensor_parts(t, &mut own, indent) {
            Ok(parts) => {
                notes.0.extend(own.0);
                parts
            }
            Err(_) => {
                notes.0.retain(|n| n != "tensor_name: unset");
                notes.raw(format!("tensor_proto: {}", embed(&embedded::tensor(t))));
                let placeholder = t
                    .data_type
                    .and_then(DataType::from_code)
                    .filter(|&dt| dt != DataType::Undefined)
                    .map_or("float", DataType::name);
                (placeholder.to_owned(), None)
            }
        }
    }

    /// A tensor's type and payload, with its extra fields as annotations.
    fn tensor_parts(&self, t: &Tensor, notes: &mut Notes, indent: usize) -> Out<(String, Option<Payload>)> {
        let code = t.data_type.ok_or_else(|| Unsupported("a tensor without data type".into()))?;
        let dt = DataType::from_code(code).ok_or_else(|| Unsupported(format!("data type {code}")))?;
        if dt == DataType::Undefined {
            return unsupported("a tensor of undefined type");
        }
        let ty = if t.dims.is_empty() {
            dt.name().to_owned()
        } else {
            format!("{}[{}]", dt.name(), t.dims.iter().map(i64::to_string).collect::<Vec<_>>().join(", "))
        };
        notes.text("tensor_doc_string", t.doc_string.as_ref());
        notes.pairs("tensor_metadata_props", &t.metadata_props);
        match &t.segment {
            None => {}
            Some(Segment { begin: Some(b), end: Some(e) }) => notes.raw(format!("segment: [{b}, {e}]")),
            Some(_) => return unsupported("a tensor segment without begin or end"),
        }
        let typed_fields = [
            !t.float_data.is_empty(),
            !t.int32_data.is_empty(),
            !t.string_data.is_empty(),
            !t.int64_data.is_empty(),
            !t.double_data.is_empty(),
            !t.uint64_data.is_empty(),
        ]
        .iter()
        .filter(|&&b| b)
        .count();
        if t.is_external() || !t.external_data.is_empty() {
            if !t.is_external() || typed_fields > 0 || t.raw_data.is_some() {
                return unsupported("external data references mixed with other data");
            }
            // On a reference, where the values go once its bytes are read in.
            if t.typed_once_embedded {
                notes.raw("storage: typed".into());
            }
            // On a reference, the data_location the tensor gets back once its bytes are read in.
            match t.data_location_once_embedded {
                None => {}
                Some(0) => notes.raw("data_location: default".into()),
                Some(other) => notes.raw(format!("data_location: {other}")),
            }
            return Ok((ty, Some(Payload::Text(format!("[{}]", external_pairs(&t.external_data)?)))));
        }
        // Set but not external: PyTorch's dynamo exporter writes DEFAULT (0) explicitly.
        match t.data_location {
            None => {}
            Some(0) => notes.raw("data_location: default".into()),
            Some(other) => notes.raw(format!("data_location: {other}")),
        }
        if let Some(raw) = &t.raw_data {
            if typed_fields > 0 {
                return unsupported("a tensor with both raw_data and typed values");
            }
            if self.streams(t, dt) {
                notes.raw("storage: raw".into());
                return Ok((ty, Some(Payload::Text(stream_marker(t, indent)))));
            }
            if let Some(typed) = tensor_data::raw_to_typed(t)
                && let Some(values) = typed_values(&typed, dt, indent)
            {
                notes.raw("storage: raw".into());
                return Ok((ty, Some(values)));
            }
            notes.raw(format!("raw_data: {}", onnx_syntax::lexer::escape_bytes(raw)));
            return Ok((ty, None));
        }
        if typed_fields == 0 {
            return Ok((ty, None));
        }
        if self.streams(t, dt) {
            return Ok((ty, Some(Payload::Text(stream_marker(t, indent)))));
        }
        match typed_values(t, dt, indent) {
            Some(values) => Ok((ty, Some(values))),
            None => {
                unsupported("tensor values that do not read back exactly (wrong field, NaN payloads, packed types)")
            }
        }
    }

    /// A tensor attribute value: `float[2] name {1, 2}`, annotations on a line before it.
    /// `before`: the columns taken before it on its line after `indent` when it has no
    /// annotation (then it starts a line of its own at `indent`).
    pub(super) fn tensor_value(&self, t: &Tensor, indent: usize, before: usize) -> Out<String> {
        let mut notes = Notes::default();
        let (ty, payload) = self.tensor_parts(t, &mut notes, indent)?;
        let mut text = ty;
        let mut named = false;
        match &t.name {
            None => notes.raw("tensor_name: unset".into()),
            Some(n) if n.is_empty() => {}
            Some(n) if n.as_str().is_some_and(|text| is_identifier(text.as_bytes())) => {
                text.push(' ');
                text.push_str(&name(n));
                named = true;
            }
            // onnx's parser takes only an identifier here: any other name goes into the
            // annotation, so that onnx still reads the file.
            Some(n) => notes.text("tensor_name", Some(n)),
        }
        match payload {
            // `float[2] […]` would read as a type followed by a list: `=` makes it a tensor
            // whose data is external (a `Constant`'s value in an outline).
            Some(Payload::Text(p)) if !named && p.starts_with('[') => {
                text.push_str(" = ");
                text.push_str(&p);
            }
            Some(p) => {
                let before = if notes.0.is_empty() { before } else { 0 };
                text.push(' ');
                let p = p.at(indent + before + width(&text), indent);
                text.push_str(&p);
            }
            // A bare `float[2]` would read as a type; empty braces keep it a tensor.
            None if !named => text.push_str(" {}"),
            None => {}
        }
        if notes.0.is_empty() {
            return Ok(text);
        }
        // The annotation lines and the tensor start at the attribute's indentation, where the
        // tensor's closing brace is (the formatter's layout).
        Ok(format!("\n{}{}{text}", notes.lines(indent), " ".repeat(indent)))
    }
}

fn external_pairs(list: &[StringPair]) -> Out<String> {
    let mut items = Vec::new();
    for p in list {
        let (Some(k), Some(v)) = (&p.key, &p.value) else {
            return unsupported("an external data entry without key or value");
        };
        items.push(format!("{}: {}", string(k), string(v)));
    }
    if items.is_empty() {
        return unsupported("an external tensor without entries");
    }
    Ok(items.join(", "))
}
