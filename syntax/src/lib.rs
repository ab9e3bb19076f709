//! onnx-syntax: the ONNX text language as written by people.
//!
//! * [`lexer`]: logos lexer that keeps trivia (whitespace, comments) as tokens.

pub mod lexer;
