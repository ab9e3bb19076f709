//! The tokens before the cursor, read the way completion and signature help need them:
//! while typing, the text rarely parses, but its tokens and brackets still say where the
//! cursor is.

use onnx_syntax::lexer::{Token, TokenKind, tokens};

/// Significant tokens before `offset`, the word being typed excluded; only the text before
/// the cursor is lexed.
pub fn tokens_before(text: &str, offset: u32) -> Vec<Token> {
    tokens_and_enclosing(text, offset).0
}

/// [`tokens_before`], and the token the cursor is strictly inside (a comment or a string,
/// where only an attribute's value or a quoted name may be completed).
pub fn tokens_and_enclosing(text: &str, offset: u32) -> (Vec<Token>, Option<Token>) {
    let mut significant = Vec::new();
    let mut last = None;
    for t in tokens(text).take_while(|t| t.start < offset) {
        if !t.kind.is_trivia() {
            significant.push(t);
        }
        last = Some(t);
    }
    // The word under the cursor is what completion replaces, not context.
    if significant.last().is_some_and(|t| t.end >= offset && t.kind == TokenKind::Ident) {
        significant.pop();
    }
    // A comment or an unclosed string that ends at the cursor (the end of the text) still
    // holds it.
    let open_ended =
        |t: &Token| matches!(t.kind, TokenKind::Comment | TokenKind::DocComment | TokenKind::UnterminatedString);
    let enclosing = last.filter(|t| t.end > offset || (t.end == offset && open_ended(t)));
    (significant, enclosing)
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
