//! onnx-core: the IR every front end shares, and the operations on it.
//!
//! * [`pipeline`]: the stages composed and scheduled: check a model, check a text;
//! * [`analysis`]: text → syntax tree, model, source map, name resolution, placed diagnostics;
//! * [`check`]: the checker's rules; [`schema`]: onnx's operator schemas; [`infer`]: shape
//!   and type inference;
//! * [`facts`]: scopes, producers, consumers, declared and inferred types of values;
//! * [`ir`]: the model in memory (arenas, typed ids, lossless fields);
//! * [`lower`]: protobuf ⇄ IR;
//! * [`binary`]: reading `.onnx` files (memory-mapped, zero-copy) and writing them atomically;
//! * [`external`]: tensors stored in side files, read and written under strict path rules;
//! * [`diagnostic`], [`source_map`]: what the text front end reports, and where things are;
//! * [`print`]: IR → text;
//! * [`resolve`]: name resolution (def/use tables, SSA and scoping diagnostics);
//! * [`proto_path`]: IR anchors as protobuf field paths (`graph.node[3].input[1]`);
//! * `write`: files written atomically, with their links, modes and owners kept;
//! * [`signals`]: a mapped file truncated under us, or a write past `ulimit -f`, is an error,
//!   not a death by signal;
//! * [`summary`]: the facts `onnx info` and the browser show about a model.

pub mod analysis;
pub mod binary;
pub mod check;
pub mod cost;
pub mod diagnostic;
pub mod diff;
pub mod external;
pub mod extract;
pub mod facts;
pub mod infer;
pub mod ir;
pub mod lower;
pub mod opset;
pub mod order;
pub mod pipeline;
pub mod print;
pub mod proto_path;
pub mod reduce;
pub mod resolve;
pub mod schema;
pub mod set_dims;
pub mod signals;
pub mod simplify;
pub mod source_map;
pub mod summary;
mod write;

pub use write::{FileState, WriteError, WriteOptions, overwritten, remove_unfinished, write_atomically, write_file};
