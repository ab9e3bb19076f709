//! Diagnostics for people (rustc-style: the source line, carets, labels) or for tools (JSON).

use std::io::Write as _;

use codespan_reporting::diagnostic::{Diagnostic as Report, Label, Severity as ReportSeverity};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor};
use onnx_core::analysis::span_of;
use onnx_core::diagnostic::{Diagnostic, Severity};
use onnx_core::ir::Model;
use onnx_core::proto_path::ProtoPaths;
use onnx_core::source_map::{LineStarts, line_column};

/// Reports the diagnostics of one text file: rustc-style on stderr, or into the command's
/// JSON object under `--json` ([`crate::json`]).
pub fn emit(path: &str, source: &str, diagnostics: &[Diagnostic]) {
    if crate::json::active() {
        crate::json::add_diagnostics(to_json(path, source, diagnostics));
        return;
    }
    render_text(path, source, diagnostics);
}

/// Diagnostics of a binary model: each names the protobuf field path it points at.
pub fn emit_binary(path: &str, model: &Model, diagnostics: &[Diagnostic], paths: &ProtoPaths) {
    if crate::json::active() {
        let items: Vec<serde_json::Value> = diagnostics
            .iter()
            .map(|d| {
                let item = serde_json::json!({
                    "file": path,
                    "code": d.code,
                    "severity": d.severity,
                    "message": d.message,
                    "proto_path": paths.path(d.anchor),
                    "related": d.related.iter().map(|(a, m)| {
                        serde_json::json!({"proto_path": paths.path(*a), "message": m})
                    }).collect::<Vec<_>>(),
                });
                with_folded(item, d)
            })
            .collect();
        crate::json::add_diagnostics(items);
        return;
    }
    for d in diagnostics.iter().take(MAX_SHOWN) {
        let place = paths.described(model, d.anchor);
        let place = if place.is_empty() { path.to_owned() } else { format!("{path}: {place}") };
        write_severity(d.severity);
        errln!("[{}]: {}\n  --> {place}", d.code, d.message);
        for (anchor, message) in &d.related {
            errln!("  note: {message}: {}", paths.described(model, *anchor));
        }
    }
    not_shown(diagnostics.len());
}

/// At most this many reports are shown (a broken list of a million values can start a
/// cascade); `--json` gives them all.
const MAX_SHOWN: usize = 50;

/// Source lines longer than this (a tensor printed on one line) are shown as an excerpt
/// around the place, not whole.
const MAX_LINE: usize = 240;

fn render_text(path: &str, source: &str, diagnostics: &[Diagnostic]) {
    // Shown with control characters replaced (the same byte length, so spans stay valid).
    let shown = crate::printable::printable_source(source);
    let source = shown.as_ref();
    let path = crate::printable::printable(path);
    let file = SimpleFile::new(path.as_ref(), source);
    let choice =
        if crate::settings::colored() { termcolor::ColorChoice::Always } else { termcolor::ColorChoice::Never };
    let mut out = termcolor::StandardStream::stderr(choice);
    let config = term::Config::default();
    for d in diagnostics.iter().take(MAX_SHOWN) {
        let span = span_of(d.anchor);
        if on_long_line(source, span.start as usize) {
            render_excerpt(&path, source, d);
            continue;
        }
        let severity = match d.severity {
            Severity::Error => ReportSeverity::Error,
            Severity::Warning => ReportSeverity::Warning,
        };
        let mut labels = vec![Label::primary((), clamp(span.start, source)..clamp(span.end, source))];
        for (anchor, message) in &d.related {
            let s = span_of(*anchor);
            let message = crate::printable::printable(message).into_owned();
            labels.push(Label::secondary((), clamp(s.start, source)..clamp(s.end, source)).with_message(message));
        }
        let message = crate::printable::printable(&d.message);
        let report = Report::new(severity).with_code(d.code).with_message(message).with_labels(labels);
        // A failure to write to stderr leaves nothing better to do.
        let _ = term::emit_to_write_style(&mut out, &config, &file, &report);
    }
    not_shown(diagnostics.len());
}

/// The line that says how many reports past [`MAX_SHOWN`] were left out.
fn not_shown(count: usize) {
    if count > MAX_SHOWN {
        let hidden = count - MAX_SHOWN;
        errln!(
            "… and {hidden} more diagnostic{} not shown (`--json` lists them all)",
            if hidden == 1 { "" } else { "s" }
        );
    }
}

/// The line holding `offset`, as a byte range.
fn line_range(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let start = source[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = source[offset..].find('\n').map_or(source.len(), |i| offset + i);
    (start, end)
}

fn on_long_line(source: &str, offset: usize) -> bool {
    let (start, end) = line_range(source, offset);
    end - start > MAX_LINE
}

/// A report whose line is too long to show whole: the part of the line around the place,
/// with a caret under it (related places are named by line and column).
fn render_excerpt(path: &str, source: &str, d: &Diagnostic) {
    let span = span_of(d.anchor);
    let at = (span.start as usize).min(source.len());
    let (line_start, line_end) = line_range(source, at);
    let (line, column) = line_column(source, at);
    let boundary_before = |mut i: usize| {
        while !source.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let from = boundary_before(at.saturating_sub(60).max(line_start));
    let to = boundary_before((at + 60).min(line_end));
    let lead = if from > line_start { "…" } else { "" };
    let tail = if to < line_end { "…" } else { "" };
    let caret_column = lead.chars().count() + source[from..at].chars().count();
    let width = source[at..boundary_before((span.end as usize).clamp(at, to))].chars().count().max(1);
    let number = line.to_string();
    let pad = " ".repeat(number.len());
    write_severity(d.severity);
    let mut text = format!("[{}]: {}\n{pad}--> {path}:{line}:{column}\n{pad} |\n", d.code, d.message);
    text += &format!("{number} | {lead}{}{tail}\n", &source[from..to]);
    text += &format!("{pad} | {}{}\n", " ".repeat(caret_column), "^".repeat(width));
    for (anchor, message) in &d.related {
        let (l, c) = line_column(source, span_of(*anchor).start as usize);
        text += &format!("{pad} = note: {message} ({path}:{l}:{c})\n");
    }
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The severity word that starts a report line, in bold red or yellow when reports are
/// coloured (written apart from the line, whose control characters are escaped).
fn write_severity(severity: Severity) {
    use termcolor::{Color, ColorSpec, WriteColor};
    let choice =
        if crate::settings::colored() { termcolor::ColorChoice::Always } else { termcolor::ColorChoice::Never };
    let mut err = termcolor::StandardStream::stderr(choice);
    let color = if severity == Severity::Error { Color::Red } else { Color::Yellow };
    let _ = err.set_color(ColorSpec::new().set_fg(Some(color)).set_bold(true));
    let _ = write!(err, "{}", severity_word(severity));
    let _ = err.reset();
}

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn clamp(offset: u32, source: &str) -> usize {
    (offset as usize).min(source.len())
}

/// A JSON diagnostic, with `folded` (how many more of its code it stands for) when the
/// checker folded findings into it.
fn with_folded(mut item: serde_json::Value, d: &Diagnostic) -> serde_json::Value {
    if d.folded > 0 {
        item["folded"] = serde_json::json!(d.folded);
    }
    item
}

/// Diagnostics as a JSON array: file, code, severity, message, byte range, line and column.
fn to_json(path: &str, source: &str, diagnostics: &[Diagnostic]) -> Vec<serde_json::Value> {
    let lines = LineStarts::new(source);
    diagnostics
        .iter()
        .map(|d| {
            let span = span_of(d.anchor);
            let (line, column) = lines.line_column(source, span.start as usize);
            let item = serde_json::json!({
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
            });
            with_folded(item, d)
        })
        .collect()
}
