//! Indexes the operator schema export at build time (`core/schemas/onnx_schemas.json`):
//! where each schema's JSON lies in the file, under its domain and operator. Reading that
//! index from the JSON at run time scanned the whole text twice, most of a small model's
//! `onnx check`; now a program starts with the index compiled in and decodes a schema's
//! JSON only when its operator is looked up.
//! The typesets (the type lists constraints name) become static lists; the small rest of
//! the export (versions, extras) stays JSON.

use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::value::RawValue;

const EXPORT: &str = "schemas/onnx_schemas.json";

#[derive(Deserialize)]
struct Export<'a> {
    #[serde(borrow)]
    schemas: Vec<&'a RawValue>,
    typesets: Vec<Vec<String>>,
}

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    op: &'a str,
    #[serde(borrow)]
    dom: &'a str,
}

fn main() {
    println!("cargo::rerun-if-changed={EXPORT}");
    let text = std::fs::read_to_string(EXPORT).unwrap_or_else(|e| panic!("cannot read {EXPORT}: {e}"));
    let export: Export<'_> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{EXPORT} is malformed: {e}"));
    let mut index = String::from(
        "/// Each schema of the export: its domain, its operator and the byte range of its JSON.\n\
         pub(super) static SCHEMA_SPANS: &[(&str, &str, usize, usize)] = &[\n",
    );
    for (i, raw) in export.schemas.iter().enumerate() {
        let head: Head<'_> = serde_json::from_str(raw.get()).unwrap_or_else(|e| panic!("{EXPORT}: schema {i}: {e}"));
        // `raw` borrows from `text`: its offset is where its JSON starts in the file.
        let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
        let end = start + raw.get().len();
        let _ = writeln!(index, "    ({:?}, {:?}, {start}, {end}),", head.dom, head.op);
    }
    index.push_str("];\n");
    // The typesets (lists of types constraints name by index), as static lists.
    index.push_str("/// The typesets of the export, which type constraints name by index.\n");
    index.push_str("pub(super) static TYPESETS: &[&[&str]] = &[\n");
    for set in &export.typesets {
        let _ = writeln!(index, "    &{set:?},");
    }
    index.push_str("];\n");
    // The rest of the export (format, versions, extras), as JSON read on first use.
    let mut rest: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{EXPORT} is malformed: {e}"));
    rest.remove("schemas");
    rest.remove("typesets");
    let header = serde_json::Value::Object(rest).to_string();
    let _ = writeln!(
        index,
        "/// The export without its schemas and typesets (format, domains, extras).\n\
         pub(super) static EXPORT_HEADER: &str = {header:?};"
    );
    let out = std::env::var("OUT_DIR").unwrap_or_else(|e| panic!("OUT_DIR: {e}"));
    std::fs::write(std::path::Path::new(&out).join("schema_index.rs"), index)
        .unwrap_or_else(|e| panic!("cannot write the schema index: {e}"));
}
