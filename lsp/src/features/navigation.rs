//! Go to definition, find references and document highlights, all read off the index.

use onnx_core::diagnostic::Span;

use crate::index::{Occurrence, Target};
use crate::lsp::*;
use crate::snapshot::Snapshot;

fn target_at(s: &Snapshot, position: Position) -> Option<&Occurrence> {
    s.index().at(s.offset(position))
}

pub fn definition(s: &Snapshot, uri: &Uri, position: Position) -> Option<GotoDefinitionResponse> {
    let occurrence = target_at(s, position)?;
    let span = s.index().definition(&occurrence.target)?;
    Some(GotoDefinitionResponse::Scalar(Location { uri: uri.clone(), range: s.range(span) }))
}

/// The name under the cursor when it is something with occurrences (not an operator or an
/// attribute name, which are looked up in schemas), with its definition.
fn linked_name(s: &Snapshot, position: Position) -> Option<(&Occurrence, Option<Span>)> {
    let occurrence = target_at(s, position)?;
    if matches!(occurrence.target, Target::Op(_) | Target::Attribute(..)) {
        return None;
    }
    Some((occurrence, s.index().definition(&occurrence.target)))
}

pub fn references(s: &Snapshot, uri: &Uri, position: Position, include_declaration: bool) -> Option<Vec<Location>> {
    let (occurrence, definition) = linked_name(s, position)?;
    Some(
        s.index()
            .occurrences_of(&occurrence.target)
            .filter(|o| include_declaration || Some(o.span) != definition)
            .map(|o| Location { uri: uri.clone(), range: s.range(o.span) })
            .collect(),
    )
}

pub fn highlights(s: &Snapshot, position: Position) -> Option<Vec<DocumentHighlight>> {
    let (occurrence, definition) = linked_name(s, position)?;
    Some(
        s.index()
            .occurrences_of(&occurrence.target)
            .map(|o| DocumentHighlight {
                range: s.range(o.span),
                kind: Some(if Some(o.span) == definition {
                    DocumentHighlightKind::WRITE
                } else {
                    DocumentHighlightKind::READ
                }),
            })
            .collect(),
    )
}
