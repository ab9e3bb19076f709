//! The opset imports in force while checking a graph or a function body.

use crate::ir::{OpsetImport, Str, same_bytes, schema_domain};

/// Domain → imported version. `""` and `"ai.onnx"` name the same domain; a later duplicate
/// import wins, as in onnx.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Opsets {
    entries: Vec<(String, i64)>,
}

impl Opsets {
    pub fn from_imports(imports: &[OpsetImport]) -> Opsets {
        let mut opsets = Opsets::default();
        for import in imports {
            let domain = import.domain.as_ref().map_or_else(String::new, Str::escaped);
            opsets.insert(&domain, import.version.unwrap_or(0));
        }
        opsets
    }

    pub fn insert(&mut self, domain: &str, version: i64) {
        let domain = schema_domain(domain);
        match self.entries.iter_mut().find(|(d, _)| same_bytes(d.as_bytes(), domain.as_bytes())) {
            Some(entry) => entry.1 = version,
            None => self.entries.push((domain.to_owned(), version)),
        }
    }

    /// The imported version of a domain (`""` and `ai.onnx` alike).
    pub fn version(&self, domain: &str) -> Option<i64> {
        let domain = schema_domain(domain);
        self.entries.iter().find(|(d, _)| same_bytes(d.as_bytes(), domain.as_bytes())).map(|&(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, i64)> {
        self.entries.iter().map(|(d, v)| (d.as_str(), *v))
    }
}
