//! Diagnostics of a snapshot in protocol form: code, severity, message, and the secondary
//! labels ("first defined here") as related information.

use onnx_core::analysis::span_of;
use onnx_core::diagnostic::{self as core, Anchor, Severity, Span};
use onnx_syntax::incremental::Edit;

use crate::line_index::{Encoding, LineIndex};
use crate::lsp::*;
use crate::snapshot::Snapshot;

/// Where diagnostics go: a text, its lines and encoding, its document.
#[derive(Debug)]
pub struct Placing<'a> {
    pub text: &'a str,
    pub lines: &'a LineIndex,
    pub encoding: Encoding,
    pub uri: &'a Uri,
}

impl Placing<'_> {
    fn range(&self, span: Span) -> Range {
        self.lines.range(self.text, span, self.encoding)
    }
}

pub fn to_lsp(s: &Snapshot, uri: &Uri) -> Vec<Diagnostic> {
    let place = Placing { text: &s.text, lines: &s.lines, encoding: s.encoding, uri };
    s.diagnostics.iter().map(|d| one(&place, d)).collect()
}

/// What a big document shows as soon as its new version is parsed: the new syntax
/// diagnostics, and the previous version's semantic ones moved through the edit (those
/// the edit touched are left out), so that the list neither waits for the whole analysis
/// nor empties and fills again while it runs.
pub fn syntax_first(place: &Placing, found: &[core::Diagnostic], base: Option<&Snapshot>) -> Vec<Diagnostic> {
    let mut shown: Vec<Diagnostic> = found.iter().map(|d| one(place, d)).collect();
    let Some(base) = base else { return shown };
    let edit = Edit::between(&base.text, place.text);
    let moved = |span: Span| -> Option<Span> {
        let touched = span.start <= edit.old_end && edit.start <= span.end;
        (!touched).then(|| Span { start: edit.moved(span.start), end: edit.moved(span.end) })
    };
    for d in base.diagnostics.iter().filter(|d| !base.syntax_diagnostics.contains(d)) {
        let Anchor::Text(span) = d.anchor else { continue };
        let Some(span) = moved(span) else { continue };
        let mut d = d.clone();
        d.anchor = Anchor::Text(span);
        d.related.retain_mut(|(anchor, _)| match *anchor {
            Anchor::Text(s) => moved(s).map(|s| *anchor = Anchor::Text(s)).is_some(),
            _ => true,
        });
        shown.push(one(place, &d));
    }
    shown
}

fn one(place: &Placing, d: &core::Diagnostic) -> Diagnostic {
    let related: Vec<DiagnosticRelatedInformation> = d
        .related
        .iter()
        .filter_map(|(anchor, label)| match anchor {
            Anchor::Text(span) => Some(DiagnosticRelatedInformation {
                location: Location { uri: place.uri.clone(), range: place.range(*span) },
                message: label.clone(),
            }),
            _ => None,
        })
        .collect();
    Diagnostic {
        range: place.range(span_of(d.anchor)),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("onnx".into()),
        message: d.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        ..Diagnostic::default()
    }
}
