//! The evaluator: runs a model of the core's IR on input values and returns its outputs,
//! and any intermediate value on request.
//!
//! A crate of its own, beside `onnx-core` rather than in it, so that the language server,
//! which never runs models, does not build or link kernels (nor, later, the GEMM, FFT and
//! image crates they need); the CLI and the terminal browser depend on it.
//!
//! Layout, the data layer first (it imports nothing from the kernels): [`value`] holds
//! run-time values (tensors of concrete shape behind an `Arc`, sequences, optionals);
//! [`cast`] converts between element types; [`broadcast`] the one broadcasting helper.
//! Then [`kernels`], one module per family of operators, each naming its kernels, the way
//! inference's rules are laid out, with [`kernels::common`] for what families share;
//! [`registry`] the kernels under the core's operator keys; [`error`] the kinds of failure
//! a kernel reports; [`plan`] checks a model once before it runs (every node has a kernel,
//! else every missing one is listed), converts its constants, and numbers its values;
//! [`run`] executes a plan: nodes in order, control flow through subgraphs, values dropped
//! after their last use, limits and a cancellation flag checked between nodes and loop
//! iterations.
//!
//! Status: 1,874 of onnx's 1,884 backend node tests pass; `tests/node_tests.rs` runs them all
//! and keeps the list of those that do not pass, with the reason, true (JPEG pixels, JPEG
//! 2000, the random generators). Model-local functions run (their bodies, called by the
//! runner in a value space of their own), and so do schema function bodies of operators
//! without a kernel.

pub mod broadcast;
pub mod buf;
pub mod cast;
pub mod coded;
pub mod compare;
pub mod error;
pub mod fold;
pub mod gemm;
pub mod inputs;
pub mod int8;
pub mod invoke;
pub mod kernels;
pub mod math;
pub mod memory;
pub mod npy;
pub mod number;
pub mod peak;
pub mod plan;
pub mod registry;
pub mod run;
pub mod shares;
pub mod simd;
pub mod stored;
pub mod value;
pub mod view;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

pub use error::{ErrorKind, KernelError};
pub use plan::{InitializerBytes, Plan, PlanError, PlanOptions, Unsupported};
pub use run::{Captured, EvalError, RunResult};
pub use value::{Data, Tensor, Value};

/// Bounds a run keeps to, so that a hostile or mistaken model ends with an error instead of
/// exhausting memory or time.
#[derive(Clone, Debug)]
pub struct Limits {
    /// The most elements one tensor created from a size in the model may hold.
    pub max_tensor_elements: usize,
    /// The most iterations of one Loop.
    pub max_loop_iterations: u64,
    /// How deep subgraphs may nest while running.
    pub max_depth: usize,
    /// The most bytes the run's values may hold at once, all together ([`memory`]): by
    /// default half of the machine's memory.
    pub max_memory: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_tensor_elements: 1 << 30,
            max_loop_iterations: 1 << 24,
            max_depth: 64,
            max_memory: memory::default_budget(),
        }
    }
}

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub limits: Limits,
    /// Set from another thread to stop the run between nodes (and loop iterations).
    pub cancel: Option<Arc<AtomicBool>>,
    /// Keep every value of the main graph, not only the outputs.
    pub capture_all: bool,
    /// Keep these values of the main graph (by name), besides the outputs; with
    /// `capture_all` every value is kept anyway.
    pub capture_names: Vec<String>,
    /// With `capture_all`: the most bytes of values kept; once reached, later values are
    /// not kept (`RunResult::capture_full` says so). `None`: no bound.
    pub capture_limit: Option<usize>,
    /// Measure each node's time.
    pub timing: bool,
    /// Set to the number of main-graph nodes done after each one, for a progress display
    /// on another thread (the total is the main graph's node count).
    pub progress: Option<Arc<AtomicUsize>>,
    /// Shown each value a main-graph node makes, as it is made.
    pub observe: Option<Observer>,
}

/// What [`RunOptions::observe`] calls: a value's name and the value.
#[derive(Clone)]
pub struct Observer(pub Arc<SeeValue>);

/// A function shown a value and its name.
pub type SeeValue = dyn Fn(&onnx_core::ir::Str, &Value) + Send + Sync;

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observer")
    }
}
