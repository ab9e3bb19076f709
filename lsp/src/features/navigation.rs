//! Go to definition, find references and document highlights, all read off the index.

use crate::index::{Occurrence, Target};
use crate::lsp::*;
use crate::snapshot::Snapshot;

fn target_at(s: &Snapshot, position: Position) -> Option<&Occurrence> {
    s.index.at(s.offset(position))
}

pub fn definition(s: &Snapshot, uri: &Uri, position: Position) -> Option<GotoDefinitionResponse> {
    let occurrence = target_at(s, position)?;
    let span = s.index.definition(&occurrence.target)?;
    Some(GotoDefinitionResponse::Scalar(Location { uri: uri.clone(), range: s.range(span) }))
}

pub fn references(s: &Snapshot, uri: &Uri, position: Position, include_declaration: bool) -> Option<Vec<Location>> {
    let occurrence = target_at(s, position)?;
    if matches!(occurrence.target, Target::Op(_) | Target::Attribute(..)) {
        return None;
    }
    let definition = s.index.definition(&occurrence.target);
    Some(
        s.index
            .occurrences_of(&occurrence.target)
            .filter(|o| include_declaration || Some(o.span) != definition)
            .map(|o| Location { uri: uri.clone(), range: s.range(o.span) })
            .collect(),
    )
}

pub fn highlights(s: &Snapshot, position: Position) -> Option<Vec<DocumentHighlight>> {
    let occurrence = target_at(s, position)?;
    if matches!(occurrence.target, Target::Op(_) | Target::Attribute(..)) {
        return None;
    }
    let definition = s.index.definition(&occurrence.target);
    Some(
        s.index
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
