//! Semantic tokens: the lexer's tokens, with names coloured by what the index says they are
//! (a value, an input, an initializer, an operator, a local function, an attribute, a
//! dimension parameter), so a value and an operator of the same spelling look different.

use onnx_core::resolve::DefSite;
use onnx_syntax::lexer::{TokenKind, WordClass, classify_word};

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
    SemanticTokens { result_id: None, data: tokens(s, 0, s.text.len()) }
}

/// The tokens of the lines `range` touches (`semanticTokens/range`): what an editor asks for
/// the part of a big document on screen. Lexing starts at the first of those lines (a
/// comment ends with its line; only a string broken over lines could be read differently
/// from there, and is not coloured anyway).
pub fn range(s: &Snapshot, range: Range) -> SemanticTokens {
    let start = s.lines.line_start(range.start.line.min(s.lines.line_count().saturating_sub(1))) as usize;
    let end = s.lines.line_start(range.end.line.saturating_add(1)) as usize;
    SemanticTokens { result_id: None, data: tokens(s, start, end.max(start)) }
}

/// Tensor literals of more numbers than this get no token per number. A token costs the
/// server about 250 bytes on its way out (20 in the list, 20 in the copy kept for deltas, five
/// JSON values in the framework's answer, the JSON text): `semanticTokens/full` on a 50 MB
/// tensor of millions of numbers took gigabytes (1.3 GB for 4.9 million floats, 1.5 GB for
/// 20 MB of small integers), and the text of a real model of 10 MB, whose weights are lists
/// of a few hundred numbers, sent 13 MB of tokens, for colours nobody reads one by one. Such
/// a list keeps the colours of the editor's own grammar (VS Code's grammar colours numbers);
/// its comments are still tokens. Shapes and attribute lists (`[…]`) are not tensor
/// literals, and a scalar or a short tensor stays below this.
pub const LONG_LIST: usize = 16;

/// The tokens starting in `from..to` (a line start, and a line start or the end), encoded
/// relative to one another, the first relative to the document's start.
fn tokens(s: &Snapshot, from: usize, to: usize) -> Vec<SemanticToken> {
    let mut data = Vec::new();
    let mut previous = Position::default();
    let occurrences = &s.index().occurrences;
    let first = occurrences.partition_point(|o| (o.span.start as usize) < from);
    let mut occurrences = occurrences[first..].iter().peekable();
    let text = s.text.get(from..).unwrap_or("");
    let mut lexer = onnx_syntax::lexer::tokens(text);
    // Whether the numbers read now are those of a long list (until its `}`).
    let mut in_long_list = starts_in_long_list(&s.text, from);
    while let Some(token) = lexer.next() {
        if token.start as usize >= to.saturating_sub(from) {
            break;
        }
        match token.kind {
            TokenKind::LBrace => in_long_list = opens_long_list(text, lexer.clone()),
            TokenKind::RBrace => in_long_list = false,
            _ => {}
        }
        let token =
            onnx_syntax::lexer::Token { start: token.start + from as u32, end: token.end + from as u32, ..token };
        if in_long_list && is_number(token.kind, token.text(&s.text)) {
            continue;
        }
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
    data
}

fn is_number(kind: TokenKind, text: &str) -> bool {
    match kind {
        TokenKind::Int | TokenKind::Float | TokenKind::SignedFloatWord => true,
        TokenKind::Ident => classify_word(text) == WordClass::FloatWord,
        _ => false,
    }
}

/// Whether the `{` just read opens a list of more than [`LONG_LIST`] numbers: `ahead` (a
/// copy of the lexer, over `text`) is read until the list ends, something that is not part
/// of a number list comes (a graph's body), or the list is found long. Each `{` reads
/// ahead at most to the next token that is not in a number list, so the tokens of a text
/// are read at most twice.
fn opens_long_list(text: &str, ahead: onnx_syntax::lexer::Tokens<'_>) -> bool {
    let mut numbers = 0;
    for token in ahead {
        match token.kind {
            TokenKind::Whitespace | TokenKind::Comment | TokenKind::DocComment | TokenKind::Comma => {}
            kind if is_number(kind, token.text(text)) => {
                numbers += 1;
                if numbers > LONG_LIST {
                    return true;
                }
            }
            _ => return false,
        }
    }
    false
}

/// Whether `from` (where a range's lexing starts) lies inside a long list: the `{` before it,
/// with no `}` in between, opens one. The braces are found as bytes, so that a range in the
/// middle of a tensor of millions of values need not lex it from the start; a brace inside
/// a comment can mislead this (the numbers of the range are then coloured one by one, or
/// not, unlike in the full answer), which no printed model has.
fn starts_in_long_list(text: &str, from: usize) -> bool {
    let before = text.as_bytes().get(..from).unwrap_or_default();
    match memchr::memrchr2(b'{', b'}', before) {
        Some(open) if before[open] == b'{' => {
            let list = text.get(open + 1..).unwrap_or("");
            opens_long_list(list, onnx_syntax::lexer::tokens(list))
        }
        _ => false,
    }
}

/// `semanticTokens/full/delta`: the one edit that turns the tokens sent before into `new`
/// (the run between their common start and their common end), so that a one-character edit
/// of a big document sends a few numbers instead of all of them again. Tokens are compared
/// as the protocol's integers, five per token.
pub fn delta(old: &[SemanticToken], new: &[SemanticToken]) -> SemanticTokensEdit {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..].iter().rev().zip(new[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    let replaced = &new[prefix..new.len() - suffix];
    SemanticTokensEdit {
        start: (prefix * 5) as u32,
        delete_count: ((old.len() - suffix - prefix) * 5) as u32,
        data: (!replaced.is_empty()).then(|| replaced.to_vec()),
    }
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
