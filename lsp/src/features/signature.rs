//! Signature help inside a node's inputs: the operator's formal inputs, with the one the
//! cursor is on highlighted (a variadic formal takes every position from its own on).

use onnx_core::schema::{FormalOption, registry};
use onnx_syntax::lexer::TokenKind;

use super::completion::scope_at;
use super::cursor::{dotted_domain, open_brackets, tokens_before};
use crate::lsp::*;
use crate::ops;
use crate::snapshot::Snapshot;

pub fn signature_help(s: &Snapshot, position: Position) -> Option<SignatureHelp> {
    let offset = s.offset(position);
    let mut tokens = tokens_before(&s.text, offset);
    // `tokens_before` drops the word being typed; commas and brackets are what count here.
    tokens.retain(|t| t.end <= offset);
    let stack = open_brackets(&tokens);
    let &open = stack.last()?;
    if tokens[open].kind != TokenKind::LParen || !stack.iter().any(|&i| tokens[i].kind == TokenKind::LBrace) {
        return None;
    }
    // The operator name: just before `(`, or before the `<…>` of attributes.
    let mut name_at = open.checked_sub(1)?;
    if tokens[name_at].kind == TokenKind::RAngle {
        let mut depth = 0;
        loop {
            match tokens[name_at].kind {
                TokenKind::RAngle => depth += 1,
                TokenKind::LAngle => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            name_at = name_at.checked_sub(1)?;
        }
        name_at = name_at.checked_sub(1)?;
    }
    if tokens[name_at].kind != TokenKind::Ident {
        return None;
    }
    let op = tokens[name_at].text(&s.text);
    let domain = if name_at >= 2 && tokens[name_at - 1].kind == TokenKind::Dot {
        dotted_domain(&tokens, &s.text, name_at - 1)
    } else {
        String::new()
    };
    let domain = ops::schema_domain(&domain);
    let version = ops::imported_version(&s.analysis.model, scope_at(s, offset), domain)?;
    let schema = registry().lookup(domain, op, version)?;
    let argument = tokens[open + 1..].iter().filter(|t| t.kind == TokenKind::Comma).count();

    let mut label = format!("{}(", schema.op);
    let mut parameters = Vec::new();
    for (i, formal) in schema.inputs.iter().enumerate() {
        if i > 0 {
            label.push_str(", ");
        }
        let start = label.encode_utf16().count() as u32;
        label.push_str(&ops::formal_label(formal));
        let end = label.encode_utf16().count() as u32;
        parameters.push(ParameterInformation {
            label: ParameterLabel::LabelOffsets([start, end]),
            documentation: Some(Documentation::String(format!("allowed: {}", schema.allowed_types(formal).join(", ")))),
        });
    }
    label.push(')');
    let active = match schema.inputs.iter().position(|f| f.option == FormalOption::Variadic) {
        Some(v) if argument >= v => v,
        _ => argument,
    };
    Some(SignatureHelp {
        signatures: vec![SignatureInformation {
            label,
            documentation: Some(Documentation::String(format!(
                "{} · {} since version {}",
                ops::signature(schema),
                ops::domain_label(&schema.domain),
                schema.since_version
            ))),
            parameters: Some(parameters),
            active_parameter: Some(active as u32),
        }],
        active_signature: Some(0),
        active_parameter: Some(active as u32),
    })
}
