//! onnx-syntax: the ONNX text language as written by people.
//!
//! * [`lexer`]: logos lexer that keeps trivia (whitespace, comments) as tokens;
//! * [`parser`]: LALRPOP parser with recovery; never fails, returns a tree and errors;
//! * [`ast`]: the syntax tree, with byte ranges;
//! * [`format`]: the formatter (syntax tree plus comments → laid-out text);
//! * [`numbers`]: the fast path for `{…}` lists of numbers;

pub mod ast;
pub mod format;
pub mod incremental;
pub mod lexer;
pub mod numbers;
pub mod parser;
pub mod progress;

pub use parser::{Parse, SyntaxError, parse_function, parse_model, parse_model_with_progress};
