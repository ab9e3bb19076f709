//! Semantic tokens: the lexer's tokens, with names coloured by what the index says they are
//! (a value, an input, an initializer, an operator, a local function, an attribute, a
//! dimension parameter), so a value and an operator of the same spelling look different.

use onnx_core::resolve::DefSite;
use onnx_syntax::lexer::{TokenKind, WordClass, classify_word, lex};

use crate::index::Target;
use crate::lsp::*;
use crate::snapshot::Snapshot;

/// Token types, in legend order (the index is what the protocol sends).
const TYPES: &[SemanticTokenType] = &[
    SemanticTokenType::NAMESPACE,      // 0 graph names
    SemanticTokenType::FUNCTION,       // 1 local functions
    SemanticTokenType::VARIABLE,       // 2 values
    SemanticTokenType::PARAMETER,      // 3 graph and function inputs
    SemanticTokenType::TYPE,           // 4 element types, type constructors
    SemanticTokenType::NUMBER,         // 5
    SemanticTokenType::STRING,         // 6
    SemanticTokenType::COMMENT,        // 7
    SemanticTokenType::METHOD,         // 8 operators with a schema or custom ones
    SemanticTokenType::PROPERTY,       // 9 attribute names
    SemanticTokenType::TYPE_PARAMETER, // 10 dimension parameters
    SemanticTokenType::DECORATOR,      // 11 `#@` annotations
];

const MODIFIERS: &[SemanticTokenModifier] = &[
    SemanticTokenModifier::DECLARATION, // bit 0
    SemanticTokenModifier::READONLY,    // bit 1: initializers
];

pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend { token_types: TYPES.to_vec(), token_modifiers: MODIFIERS.to_vec() }
}

pub fn full(s: &Snapshot) -> SemanticTokens {
    let mut data = Vec::new();
    let mut previous = Position::default();
    let mut occurrences = s.index().occurrences.iter().peekable();
    for token in lex(&s.text) {
        while occurrences.peek().is_some_and(|o| o.span.start < token.start) {
            occurrences.next();
        }
        let named = occurrences.peek().filter(|o| o.span.start == token.start && o.span.end == token.end);
        let classified = match named {
            Some(o) => Some(of_target(&o.target, o.is_def)),
            None => of_token(token.kind, token.text(&s.text)),
        };
        let Some((kind, modifiers)) = classified else { continue };
        let start = s.lines.position(&s.text, token.start, s.encoding);
        // A comment runs to the line break, which in a CRLF document begins with `\r`: the
        // token ends before it, or it would reach past the line's end.
        let text = token.text(&s.text);
        let end_offset = token.end - (text.len() - text.trim_end_matches('\r').len()) as u32;
        let end = s.lines.position(&s.text, end_offset, s.encoding);
        if end.line != start.line {
            continue; // a string with a line break: clients want one-line tokens
        }
        let delta_line = start.line - previous.line;
        let delta_start = if delta_line == 0 { start.character - previous.character } else { start.character };
        data.push(SemanticToken {
            delta_line,
            delta_start,
            length: end.character - start.character,
            token_type: kind,
            token_modifiers_bitset: modifiers,
        });
        previous = start;
    }
    SemanticTokens { result_id: None, data }
}

fn of_target(target: &Target, is_def: bool) -> (u32, u32) {
    let declaration = u32::from(is_def);
    match target {
        Target::Value(DefSite::GraphInput(..) | DefSite::FunctionInput(..)) => (3, declaration),
        Target::Value(DefSite::Initializer(..) | DefSite::SparseInitializer(..)) => (2, declaration | 2),
        Target::Value(DefSite::NodeOutput(..)) | Target::Undefined(_) => (2, declaration),
        Target::Function(_) => (1, declaration),
        Target::Graph(_) => (0, declaration),
        Target::DimParam(_) => (10, declaration),
        Target::Op(_) => (8, 0),
        Target::Attribute(..) => (9, 0),
    }
}

fn of_token(kind: TokenKind, text: &str) -> Option<(u32, u32)> {
    Some(match kind {
        TokenKind::Comment | TokenKind::DocComment => (7, 0),
        TokenKind::Annotation => (11, 0),
        TokenKind::String | TokenKind::ByteString => (6, 0),
        TokenKind::Int | TokenKind::Float | TokenKind::SignedFloatWord => (5, 0),
        TokenKind::Ident => match classify_word(text) {
            WordClass::PrimType | WordClass::TypeCtor => (4, 0),
            WordClass::FloatWord => (5, 0),
            WordClass::Plain => return None,
        },
        _ => return None,
    })
}
