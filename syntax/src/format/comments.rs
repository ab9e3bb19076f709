//! The comments of a source, in order, each with how it sits in its line: the formatter
//! hands them out by position as it walks the tree, so every comment is printed exactly once.

use crate::lexer::{Token, TokenKind};

/// A `#` or `##` comment (annotations `#@` are part of the tree, not comments).
#[derive(Debug)]
pub struct Comment {
    pub start: u32,
    /// The comment's text, trailing whitespace removed.
    pub text: String,
    /// Code precedes it on its line: it stays at the end of that line.
    pub trailing: bool,
    /// An empty line separates it from what comes before.
    pub blank_before: bool,
}

/// Comments handed out in source order.
#[derive(Debug)]
pub struct Comments {
    list: Vec<Comment>,
    next: usize,
}

impl Comments {
    pub fn collect(source: &str, tokens: &[Token]) -> Comments {
        let mut list = Vec::new();
        let mut code_on_line = false;
        let mut newlines_before = 0usize;
        for token in tokens {
            match token.kind {
                TokenKind::Whitespace => {
                    let breaks = token.text(source).bytes().filter(|&b| b == b'\n').count();
                    if breaks > 0 {
                        code_on_line = false;
                    }
                    newlines_before += breaks;
                }
                TokenKind::Comment | TokenKind::DocComment => {
                    list.push(Comment {
                        start: token.start,
                        text: token.text(source).trim_end().to_owned(),
                        trailing: code_on_line,
                        blank_before: newlines_before >= 2,
                    });
                    newlines_before = 0;
                }
                _ => {
                    code_on_line = true;
                    newlines_before = 0;
                }
            }
        }
        Comments { list, next: 0 }
    }

    /// The comments that start before `position` and were not handed out yet.
    pub fn before(&mut self, position: u32) -> &[Comment] {
        let from = self.next;
        while self.next < self.list.len() && self.list[self.next].start < position {
            self.next += 1;
        }
        &self.list[from..self.next]
    }

    /// Whether comments start before `position` that were not handed out yet.
    pub fn any_before(&self, position: u32) -> bool {
        self.list.get(self.next).is_some_and(|c| c.start < position)
    }
}

/// Whether an empty line precedes `position` (only whitespace between them).
pub fn blank_line_before(source: &str, position: u32) -> bool {
    let before = &source.as_bytes()[..position as usize];
    let gap = before.iter().rev().take_while(|b| b.is_ascii_whitespace()).filter(|&&b| b == b'\n').count();
    gap >= 2
}
