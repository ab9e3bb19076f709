//! `#@` annotations: the `key: value` entries of one item, collected as it is printed and
//! written on a line before it.

use super::escape::annotation_text;
use crate::ir::*;

/// Collects `key: value` annotation entries for one item.
#[derive(Default)]
pub(super) struct Notes(pub(super) Vec<String>);

impl Notes {
    pub(super) fn text(&mut self, key: &str, value: Option<&Str>) {
        if let Some(v) = value {
            self.0.push(format!("{key}: {}", annotation_text(v)));
        }
    }

    pub(super) fn pairs(&mut self, key: &str, list: &[StringPair]) {
        if !list.is_empty() {
            self.0.push(format!("{key}: {}", annotation_pairs(list)));
        }
    }

    pub(super) fn raw(&mut self, entry: String) {
        self.0.push(entry);
    }

    /// The annotation line(s) at `indent`, or nothing.
    pub(super) fn lines(&self, indent: usize) -> String {
        if self.0.is_empty() { String::new() } else { format!("{}#@ {}\n", " ".repeat(indent), self.0.join(", ")) }
    }
}

/// `["key": "value", …]`; a key or value that is not set is the word `unset`.
fn annotation_pairs(list: &[StringPair]) -> String {
    let side = |s: &Option<Str>| s.as_ref().map_or_else(|| "unset".to_owned(), annotation_text);
    let items: Vec<String> = list.iter().map(|p| format!("{}: {}", side(&p.key), side(&p.value))).collect();
    format!("[{}]", items.join(", "))
}

/// The indices of the opset imports whose domain, and whose version, are not set, as the
/// annotation entries that say so (the header writes `""` and `0` for them, as onnx's
/// parser would read).
pub(super) fn unset_opset_notes(list: &[OpsetImport], notes: &mut Notes) {
    let indices = |unset: &dyn Fn(&OpsetImport) -> bool| -> Vec<String> {
        list.iter().enumerate().filter(|(_, o)| unset(o)).map(|(i, _)| i.to_string()).collect()
    };
    let domains = indices(&|o| o.domain.is_none());
    if !domains.is_empty() {
        notes.raw(format!("opset_unset_domain: [{}]", domains.join(", ")));
    }
    let versions = indices(&|o| o.version.is_none());
    if !versions.is_empty() {
        notes.raw(format!("opset_unset_version: [{}]", versions.join(", ")));
    }
}

/// An item with its annotation line before it: such an item starts with its indentation.
pub(super) fn with_notes(notes: &Notes, mut item: String, indent: usize) -> String {
    if !notes.0.is_empty() {
        item.insert_str(0, &format!("{}{}", notes.lines(indent), " ".repeat(indent)));
    }
    item
}
