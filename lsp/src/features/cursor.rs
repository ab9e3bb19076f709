//! The tokens before the cursor, read the way completion and signature help need them:
//! while typing, the text rarely parses, but its tokens and brackets still say where the
//! cursor is.

use onnx_syntax::lexer::{Token, TokenKind, lex};

/// Significant tokens before `offset`, the word being typed excluded.
pub fn tokens_before(text: &str, offset: u32) -> Vec<Token> {
    let mut tokens: Vec<Token> = lex(text).into_iter().filter(|t| t.start < offset && !t.kind.is_trivia()).collect();
    // The word under the cursor is what completion replaces, not context.
    if tokens.last().is_some_and(|t| t.end >= offset && t.kind == TokenKind::Ident) {
        tokens.pop();
    }
    tokens
}

/// Indexes (into `tokens`) of the brackets still open at the end, outermost first.
pub fn open_brackets(tokens: &[Token]) -> Vec<usize> {
    let mut stack = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace | TokenKind::LAngle => stack.push(i),
            TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace | TokenKind::RAngle => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack
}

/// `ai.onnx.ml .` → `ai.onnx.ml`: the dotted words before the dot at `dot`.
pub fn dotted_domain(tokens: &[Token], text: &str, dot: usize) -> String {
    let mut parts = Vec::new();
    let mut i = dot;
    while i >= 1 && tokens[i].kind == TokenKind::Dot && tokens[i - 1].kind == TokenKind::Ident {
        parts.push(tokens[i - 1].text(text));
        if i < 2 {
            break;
        }
        i -= 2;
    }
    parts.reverse();
    parts.join(".")
}
