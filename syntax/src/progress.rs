//! How far reading a text has come, for a progress bar that another thread draws: the reader
//! stores where it is (a byte offset into the text) at cheap points, the bar reads it.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// The stages of reading a text model, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Splitting the text into tokens and scanning number lists.
    Scanning,
    Parsing,
    /// Turning the tree into the model (numbers converted).
    Lowering,
    /// Name resolution, the checker's rules, inference: no position within the text.
    Checking,
    /// `onnx fmt` laying the tree out: no position within the text either.
    Formatting,
}

impl Stage {
    const ALL: [Stage; 5] = [Stage::Scanning, Stage::Parsing, Stage::Lowering, Stage::Checking, Stage::Formatting];

    /// What a progress bar says while this stage runs.
    pub fn describe(self) -> &'static str {
        match self {
            Stage::Scanning => "scanning",
            Stage::Parsing => "parsing",
            Stage::Lowering => "building the model",
            Stage::Checking => "checking",
            Stage::Formatting => "laying out",
        }
    }

    /// Whether the stage records positions in the text (the others run over the model).
    pub fn has_position(self) -> bool {
        matches!(self, Stage::Scanning | Stage::Parsing | Stage::Lowering)
    }
}

/// The current stage and the byte offset reached in it. Relaxed atomics: a bar that reads a
/// stage with the previous stage's offset for one frame is no harm.
#[derive(Debug, Default)]
pub struct Progress {
    stage: AtomicU8,
    at: AtomicUsize,
}

impl Progress {
    /// Enters `stage`, at the start of the text.
    pub fn enter(&self, stage: Stage) {
        self.at.store(0, Ordering::Relaxed);
        self.stage.store(stage as u8, Ordering::Relaxed);
    }

    /// Records the byte offset reached in the current stage.
    pub fn reached(&self, at: usize) {
        self.at.store(at, Ordering::Relaxed);
    }

    pub fn get(&self) -> (Stage, usize) {
        let stage = Stage::ALL.get(usize::from(self.stage.load(Ordering::Relaxed))).copied();
        (stage.unwrap_or(Stage::Scanning), self.at.load(Ordering::Relaxed))
    }
}

/// How many tokens pass between two records of the position (a store per token would cost
/// more than the bar is worth).
pub(crate) const TOKENS_PER_RECORD: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_and_positions_read_back() {
        let p = Progress::default();
        assert_eq!(p.get(), (Stage::Scanning, 0));
        p.reached(10);
        p.enter(Stage::Lowering);
        assert_eq!(p.get(), (Stage::Lowering, 0));
        p.reached(42);
        assert_eq!(p.get(), (Stage::Lowering, 42));
    }

    #[test]
    fn parsing_records_how_far_it_came() {
        let nodes: String = (0..2000).map(|i| format!("  v{} = Relu (v{i})\n", i + 1)).collect();
        let source = format!("g (float v0) => (float v2000) {{\n{nodes}}}\n");
        let p = Progress::default();
        let parse = crate::parse_model_with_progress(&source, &p);
        assert!(parse.errors.is_empty());
        let (stage, at) = p.get();
        assert_eq!(stage, Stage::Parsing);
        // Recorded every 4,096 tokens: somewhere in the last stretch of the text.
        assert!(at > source.len() / 2 && at < source.len(), "{at} of {}", source.len());
    }
}
