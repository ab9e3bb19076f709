//! Sizes that several inputs of one node must share: onnx's inference names each such size
//! once (`Dim K`, `Dim num_rois`) and unifies every axis and count that holds it
//! (`unifyInputDim`, `unifyDim`, `unifyInputShape`); the first known value sets it and a
//! later known value that differs fails the node ("Dimension mismatch in unification",
//! `checkDimEquality` in `onnx/defs/shape_inference.h`). `SharedSize` does the same here,
//! remembering where the first value came from so the error names both places.

use super::{Violations, known_dim};
use crate::diagnostic::Anchor;
use crate::ir::Dimension;

/// One named size and the first place that fixed it.
pub(super) struct SharedSize {
    what: String,
    first: Option<(i64, String)>,
}

impl SharedSize {
    /// `what` names the size for the message ("the inner dimension K").
    pub(super) fn new(what: impl Into<String>) -> Self {
        Self { what: what.into(), first: None }
    }

    /// Axis `axis` of input `i`, when its shape and that dimension are known. False when
    /// it contradicts the size (the error is reported).
    pub(super) fn input(
        &mut self,
        v: &mut Violations<'_, '_>,
        i: usize,
        dims: Option<&[Dimension]>,
        axis: usize,
    ) -> bool {
        let Some(value) = dims.and_then(|d| d.get(axis)).and_then(known_dim) else { return true };
        self.value(v, value, format!("dimension {axis} of input {i}"), Anchor::NodeInput(v.n, i))
    }

    /// A value the node itself fixes (an attribute's length, a constant's count, a known
    /// constant such as the 4 coordinates of a box); `from` says where, `at` where to report.
    pub(super) fn value(&mut self, v: &mut Violations<'_, '_>, value: i64, from: String, at: Anchor) -> bool {
        match &self.first {
            None => {
                self.first = Some((value, from));
                true
            }
            Some((known, _)) if *known == value => true,
            Some((known, source)) => {
                let op = v.op;
                let what = &self.what;
                let message = format!("{from} of {op} is {value}, but {source} is {known}: both are {what}");
                v.error("incompatible-shapes", at, message);
                false
            }
        }
    }

    /// The size, once some place has fixed it.
    pub(super) fn known(&self) -> Option<i64> {
        self.first.as_ref().map(|(value, _)| *value)
    }
}

/// Each (input, axis) of `places` in turn holds one size, `what`; the first contradiction is
/// reported. False when one was.
pub(super) fn agree<'d>(
    v: &mut Violations<'_, '_>,
    what: impl Into<String>,
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    places: &[(usize, usize)],
) -> bool {
    let mut size = SharedSize::new(what);
    places.iter().all(|&(i, axis)| size.input(v, i, dims(i), axis))
}

/// Axis `axis` of input `i`, when known, is `value`; `why` says what the value stands for.
pub(super) fn fixed(
    v: &mut Violations<'_, '_>,
    i: usize,
    dims: Option<&[Dimension]>,
    axis: usize,
    value: i64,
    why: &str,
) -> bool {
    let Some(found) = dims.and_then(|d| d.get(axis)).and_then(known_dim) else { return true };
    if found == value {
        return true;
    }
    let op = v.op;
    let message = format!("dimension {axis} of input {i} of {op} is {found}; it must be {value} ({why})");
    v.error("incompatible-shapes", Anchor::NodeInput(v.n, i), message);
    false
}
