//! Diagnostics for people (rustc-style: the source line, carets, labels) or for tools (JSON).

use std::io::IsTerminal;

use codespan_reporting::diagnostic::{Diagnostic as Report, Label, Severity as ReportSeverity};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor};
use onnx_core::analysis::span_of;
use onnx_core::diagnostic::{Diagnostic, Severity};
use onnx_core::proto_path::ProtoPaths;

/// Prints diagnostics of one text file to stderr.
pub fn emit(path: &str, source: &str, diagnostics: &[Diagnostic], json: bool) {
    if json {
        eprintln!("{}", to_json(path, source, diagnostics));
        return;
    }
    render_text(path, source, diagnostics);
}

/// Diagnostics as the product of a command (`onnx check`): JSON on stdout, or rustc-style
/// reports on stderr.
pub fn emit_text(path: &str, source: &str, diagnostics: &[Diagnostic], json: bool) {
    if json {
        println!("{}", to_json(path, source, diagnostics));
    } else {
        render_text(path, source, diagnostics);
    }
}

/// Diagnostics of a binary model: each names the protobuf field path it points at.
pub fn emit_binary(path: &str, diagnostics: &[Diagnostic], paths: &ProtoPaths, json: bool) {
    if json {
        let items: Vec<serde_json::Value> = diagnostics
            .iter()
            .map(|d| {
                serde_json::json!({
                    "file": path,
                    "code": d.code,
                    "severity": d.severity,
                    "message": d.message,
                    "proto_path": paths.path(d.anchor),
                    "related": d.related.iter().map(|(a, m)| {
                        serde_json::json!({"proto_path": paths.path(*a), "message": m})
                    }).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(items));
        return;
    }
    for d in diagnostics {
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let place = paths.path(d.anchor);
        let place = if place.is_empty() { path.to_owned() } else { format!("{path}: {place}") };
        eprintln!("{severity}[{}]: {}\n  --> {place}", d.code, d.message);
        for (anchor, message) in &d.related {
            eprintln!("  note: {message}: {}", paths.path(*anchor));
        }
    }
}

fn render_text(path: &str, source: &str, diagnostics: &[Diagnostic]) {
    let file = SimpleFile::new(path, source);
    let choice =
        if std::io::stderr().is_terminal() { termcolor::ColorChoice::Auto } else { termcolor::ColorChoice::Never };
    let mut out = termcolor::StandardStream::stderr(choice);
    let config = term::Config::default();
    for d in diagnostics {
        let span = span_of(d.anchor);
        let severity = match d.severity {
            Severity::Error => ReportSeverity::Error,
            Severity::Warning => ReportSeverity::Warning,
        };
        let mut labels = vec![Label::primary((), clamp(span.start, source)..clamp(span.end, source))];
        for (anchor, message) in &d.related {
            let s = span_of(*anchor);
            labels.push(Label::secondary((), clamp(s.start, source)..clamp(s.end, source)).with_message(message));
        }
        let report = Report::new(severity).with_code(d.code).with_message(&d.message).with_labels(labels);
        // A failure to write to stderr leaves nothing better to do.
        let _ = term::emit_to_write_style(&mut out, &config, &file, &report);
    }
}

fn clamp(offset: u32, source: &str) -> usize {
    (offset as usize).min(source.len())
}

/// One-based line and column (in characters) of a byte offset.
fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(source.len());
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    let before = &source[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Diagnostics as a JSON array: file, code, severity, message, byte range, line and column.
pub fn to_json(path: &str, source: &str, diagnostics: &[Diagnostic]) -> String {
    let items: Vec<serde_json::Value> = diagnostics
        .iter()
        .map(|d| {
            let span = span_of(d.anchor);
            let (line, column) = line_column(source, span.start as usize);
            serde_json::json!({
                "file": path,
                "code": d.code,
                "severity": d.severity,
                "message": d.message,
                "start": span.start,
                "end": span.end,
                "line": line,
                "column": column,
                "related": d.related.iter().map(|(a, m)| {
                    let s = span_of(*a);
                    serde_json::json!({"start": s.start, "end": s.end, "message": m})
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}
