//! onnx-core: the IR every front end shares, and the operations on it.
//!
//! * [`analysis`]: text → diagnostics, model, source map, in one call;
//! * [`ir`]: the model in memory (arenas, typed ids, lossless fields);
//! * [`lower`]: protobuf ⇄ IR;
//! * [`binary`]: reading `.onnx` files (memory-mapped, zero-copy) and writing them atomically;
//! * [`external`]: tensors stored in side files, read and written under strict path rules;
//! * [`diagnostic`], [`source_map`]: what the text front end reports, and where things are;
//! * [`print`]: IR → text;
//! * [`resolve`]: name resolution (def/use tables, SSA and scoping diagnostics);
//! * [`summary`]: the facts `onnx info` and the browser show about a model.

pub mod analysis;
pub mod binary;
pub mod check;
pub mod diagnostic;
pub mod external;
pub mod infer;
pub mod ir;
pub mod lower;
pub mod print;
pub mod proto_path;
pub mod resolve;
pub mod schema;
pub mod source_map;
pub mod summary;
mod write;

pub use write::{FileState, WriteError, WriteOptions, overwritten, remove_unfinished, write_atomically, write_file};
