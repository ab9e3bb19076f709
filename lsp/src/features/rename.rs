//! Rename values, model-local functions, graph names and dimension parameters. A rename
//! that would change what the model means is refused with a message that says why: the new
//! name is already defined where the renamed value is visible, or another function has it.

use std::collections::HashMap;

use onnx_core::ir::Str;
use onnx_core::print::is_identifier;
use onnx_syntax::lexer::{WordClass, classify_word};

use crate::index::{Occurrence, Target};
use crate::lsp::*;
use crate::snapshot::Snapshot;

fn renamable(s: &Snapshot, position: Position) -> Option<&Occurrence> {
    let occurrence = s.index().at(s.offset(position))?;
    match occurrence.target {
        Target::Value(_) | Target::Function(_) | Target::Graph(_) | Target::DimParam(_) => Some(occurrence),
        _ => None,
    }
}

pub fn prepare(s: &Snapshot, position: Position) -> Option<PrepareRenameResponse> {
    let occurrence = renamable(s, position)?;
    Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: s.range(occurrence.span),
        placeholder: onnx_syntax::lexer::unquote(s.slice(occurrence.span)),
    })
}

pub fn rename(s: &Snapshot, uri: &Uri, position: Position, new_name: &str) -> Result<Option<WorkspaceEdit>, String> {
    let Some(occurrence) = renamable(s, position) else {
        return Ok(None);
    };
    if new_name.is_empty() {
        return Err("a name cannot be empty".into());
    }
    check_conflicts(s, &occurrence.target, new_name)?;
    let spelled = spell(new_name, matches!(occurrence.target, Target::DimParam(_)))?;
    let edits: Vec<TextEdit> = s
        .index()
        .occurrences_of(&occurrence.target)
        .map(|o| TextEdit { range: s.range(o.span), new_text: spelled.clone() })
        .collect();
    Ok(Some(WorkspaceEdit { changes: Some(HashMap::from([(uri.clone(), edits)])), ..WorkspaceEdit::default() }))
}

/// How a name is written: as is when it reads as a name, quoted otherwise. Dimension
/// parameters cannot be quoted in the text format.
pub(super) fn spell(name: &str, is_dim: bool) -> Result<String, String> {
    let plain = is_identifier(name.as_bytes()) && classify_word(name) == WordClass::Plain;
    if plain {
        return Ok(name.to_owned());
    }
    if is_dim {
        return Err(format!("'{name}' cannot name a dimension: use letters, digits and '_'"));
    }
    let mut quoted = String::new();
    onnx_core::print::quote(&mut quoted, name);
    Ok(quoted)
}

fn check_conflicts(s: &Snapshot, target: &Target, new_name: &str) -> Result<(), String> {
    let model = &s.analysis.model;
    let new = Str::from(new_name);
    match target {
        Target::Value(site) => {
            // The renamed value is visible in its scope and every scope nested in it; a
            // definition of the new name in any of those, or in the scopes around it,
            // would capture or shadow it.
            let Some(home) = s.scopes().scope_of(*site) else { return Ok(()) };
            let around = s.scopes().scope_chain(home);
            for (other, (name, span)) in &s.index().defs {
                if *name != new || other == site {
                    continue;
                }
                let Some(scope) = s.scopes().scope_of(*other) else { continue };
                let inside = s.scopes().scope_chain(scope).contains(&home);
                if inside || around.contains(&scope) {
                    return Err(format!("'{new_name}' is already defined on line {}", s.line_number(span.start)));
                }
            }
            Ok(())
        }
        Target::Function(f) => {
            let domain = &model.function_store[*f].domain;
            let taken = model.functions.iter().any(|g| {
                g != f
                    && model.function_store[*g].domain == *domain
                    && model.function_store[*g].name.as_ref() == Some(&new)
            });
            if taken { Err(format!("a function named '{new_name}' already exists in this domain")) } else { Ok(()) }
        }
        Target::DimParam(_) => {
            let taken = s.index().occurrences.iter().any(|o| o.target == Target::DimParam(new_name.to_owned()));
            if taken {
                Err(format!("the dimension '{new_name}' already exists; renaming would merge them"))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}
