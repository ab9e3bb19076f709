//! onnx-lsp: the language server of the ONNX text format.
//!
//! * [`server`]: the protocol glue (tower-lsp-server), the only module that names the
//!   framework;
//! * [`workspace`]: open documents and their edits;
//! * [`snapshot`]: one analysed version (core's text analysis, checker and inference);
//! * [`index`]: every name in the text and what it refers to;
//! * [`features`]: one module per LSP feature, plain functions of a snapshot;
//! * [`line_index`]: byte offsets ⇄ UTF-8/UTF-16 positions;
//! * [`reaper`]: frees replaced analyses on a thread of the lowest priority.

pub mod analyser;
pub mod delivery;
pub mod features;
pub mod index;
pub mod line_index;
pub mod ops;
pub mod reaper;
pub mod server;
pub mod snapshot;
pub mod trace;
pub mod transport;
pub mod workspace;

pub use server::{lsp, service};
pub use transport::serve_stdio;
