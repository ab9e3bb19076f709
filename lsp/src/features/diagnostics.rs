//! Diagnostics of a snapshot in protocol form: code, severity, message, and the secondary
//! labels ("first defined here") as related information.

use onnx_core::analysis::span_of;
use onnx_core::diagnostic::{Anchor, Severity};

use crate::lsp::*;
use crate::snapshot::Snapshot;

pub fn to_lsp(s: &Snapshot, uri: &Uri) -> Vec<Diagnostic> {
    s.diagnostics
        .iter()
        .map(|d| {
            let related: Vec<DiagnosticRelatedInformation> = d
                .related
                .iter()
                .filter_map(|(anchor, label)| match anchor {
                    Anchor::Text(span) => Some(DiagnosticRelatedInformation {
                        location: Location { uri: uri.clone(), range: s.range(*span) },
                        message: label.clone(),
                    }),
                    _ => None,
                })
                .collect();
            Diagnostic {
                range: s.range(span_of(d.anchor)),
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
        })
        .collect()
}
