//! DFT, STFT and MelWeightMatrix: what onnx's inference functions fail them for
//! (`onnx/defs/math/defs.cc`) beyond the signal's rank: a one-sided transform's last axis
//! (1 for real input, 2 for complex input to the inverse), the DFT axis, and the scalars
//! among their constant inputs (axis, lengths, bin counts), with STFT's window of rank 1 and
//! as long as its frame. Like onnx, only constant inputs (initializers, `Constant` outputs)
//! are judged, and only once the shapes they depend on are known.

use super::{Judge, Violations, int};
use crate::diagnostic::Anchor;
use crate::infer::types::known_dim;
use crate::infer::types::normalize_axis;
use crate::ir::Dimension;

/// The signal operators' rules, under their keys ([`super::DEFAULT_DOMAIN`]).
/// MelWeightMatrix, a generator, has its rule in its own family, which calls
/// [`signal_rules`].
pub(super) const VALIDATORS: super::Registrations = &[("DFT", 1, signal), ("STFT", 1, signal)];

/// DFT and STFT: a signal of rank 2 or more (a signal with its complex axis), then
/// [`signal_rules`].
fn signal(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, op, since: since_version, .. } = *judge;
    let constant_input = judge.constant;
    let constant_rank = |i: usize| judge.constant_rank(i);
    let dims = |i: usize| judge.dims(i);
    let what = if op == "STFT" { "the signal" } else { "the input" };
    v.rank_within(0, dims(0), 2, usize::MAX, what);
    let known = Inputs { dims: &dims, constant: &constant_input, constant_rank: &constant_rank };
    signal_rules(node, op, since_version, known, v);
}

/// What is known of a node's inputs: their dims, their small integer values when constant,
/// and the rank of a constant one.
pub(super) struct Inputs<'a, D, C, R> {
    pub dims: &'a D,
    pub constant: &'a C,
    pub constant_rank: &'a R,
}

/// Checks DFT, STFT or MelWeightMatrix node `node` (whose schema is `since_version`).
pub(super) fn signal_rules<'d, D, C, R>(
    node: &crate::ir::Node,
    op: &str,
    since_version: i64,
    known: Inputs<'_, D, C, R>,
    v: &mut Violations<'_, '_>,
) where
    D: Fn(usize) -> Option<&'d [Dimension]>,
    C: Fn(usize) -> Option<Vec<i64>>,
    R: Fn(usize) -> Option<usize>,
{
    match op {
        "DFT" => dft(node, since_version, &known, v),
        "STFT" => stft(node, &known, v),
        "MelWeightMatrix" => {
            // Judged once both are constants of known shape.
            let both = (known.constant)(0).is_some() && (known.constant)(1).is_some();
            if both && scalar(&known, 0, "num_mel_bins", v) {
                scalar(&known, 1, "dft_length", v);
            }
        }
        _ => {}
    }
}

/// Constant input `i` (named `what`) is a scalar; says so and returns `false` otherwise.
fn scalar<D, C, R: Fn(usize) -> Option<usize>>(
    known: &Inputs<'_, D, C, R>,
    i: usize,
    what: &str,
    v: &mut Violations<'_, '_>,
) -> bool {
    match (known.constant_rank)(i) {
        Some(rank) if rank != 0 => {
            let op = v.op;
            let message = format!("{what} of {op} (input {i}) must be a scalar, it has rank {rank}");
            v.error("input-rank", Anchor::NodeInput(v.n, i), message);
            false
        }
        _ => true,
    }
}

/// DFT: a one-sided transform's last axis, the axis (from version 20 a constant input, a
/// scalar; before, the `axis` attribute, default 1) in `[-rank, rank-2]` but not -1 (the
/// last axis holds the real and imaginary parts), and a constant dft_length (a scalar).
fn dft<'d, D, C, R>(node: &crate::ir::Node, since_version: i64, known: &Inputs<'_, D, C, R>, v: &mut Violations<'_, '_>)
where
    D: Fn(usize) -> Option<&'d [Dimension]>,
    C: Fn(usize) -> Option<Vec<i64>>,
    R: Fn(usize) -> Option<usize>,
{
    let Some(x) = (known.dims)(0).filter(|d| d.len() >= 2) else { return };
    let rank = x.len() as i64;
    if int(node, "onesided").unwrap_or(0) != 0
        && let Some(last) = x.last().and_then(known_dim)
    {
        let inverse = int(node, "inverse").unwrap_or(0) != 0;
        let (wanted, what) =
            if inverse { (2, "complex input, a last axis of 2") } else { (1, "real input, a last axis of 1") };
        if last != wanted {
            let kind = if inverse { "an inverse one-sided DFT" } else { "a one-sided DFT" };
            let message = format!("{kind} takes {what}; the input's last axis is {last}");
            v.error("incompatible-shapes", Anchor::NodeInput(v.n, 0), message);
            return;
        }
    }
    let (axis, at) = if since_version < 20 {
        (Some(int(node, "axis").unwrap_or(1)), v.attribute_anchor(node, "axis"))
    } else if node.has_input(2) {
        // An axis that is not a constant leaves the rest unjudged, as in onnx.
        if (known.constant)(2).is_none() || !scalar(known, 2, "axis", v) {
            return;
        }
        ((known.constant)(2).and_then(|a| a.first().copied()), Anchor::NodeInput(v.n, 2))
    } else {
        (Some(-2), Anchor::Node(v.n))
    };
    if let Some(axis) = axis
        && !(-rank <= axis && axis != -1 && axis < rank - 1)
    {
        let message = format!(
            "the DFT axis is {axis}; for an input of rank {rank} it must be in [{}, {}] and not -1 (the last axis holds the real and imaginary parts)",
            -rank,
            rank - 2
        );
        v.error("invalid-axis", at, message);
        return;
    }
    if node.has_input(1) && (known.constant)(1).is_some() {
        scalar(known, 1, "dft_length", v);
    }
    // An inverse one-sided DFT without dft_length restores 2 × (n - 1) values on its axis.
    if int(node, "onesided").unwrap_or(0) != 0
        && int(node, "inverse").unwrap_or(0) != 0
        && !node.has_input(1)
        && let Some(n) = axis.and_then(|a| normalize_axis(a, x.len())).and_then(|a| known_dim(&x[a]))
    {
        let at = Anchor::Node(v.n);
        let what = "the restored signal's length (2 × (n - 1))";
        if let Some(m) = super::overflow::minus(v, at, what, n, 1) {
            super::overflow::times(v, at, what, 2, m);
        }
    }
}

/// STFT, once the signal's length and the frame step are known: a constant frame_length is
/// a scalar, a window of known shape has rank 1 and, beside a frame_length, its length.
fn stft<'d, D, C, R>(node: &crate::ir::Node, known: &Inputs<'_, D, C, R>, v: &mut Violations<'_, '_>)
where
    D: Fn(usize) -> Option<&'d [Dimension]>,
    C: Fn(usize) -> Option<Vec<i64>>,
    R: Fn(usize) -> Option<usize>,
{
    let Some(signal) = (known.dims)(0).filter(|d| d.len() >= 2) else { return };
    if known_dim(&signal[1]).is_none() || (known.constant)(1).is_none() {
        return;
    }
    let frame_given = node.has_input(3);
    let frame = (known.constant)(3);
    if frame_given && frame.is_none() {
        return;
    }
    if frame.is_some() && !scalar(known, 3, "frame_length", v) {
        return;
    }
    let Some(window) = (known.dims)(2) else { return };
    if window.len() != 1 {
        let message = format!("the window of STFT (input 2) must have rank 1, it has rank {}", window.len());
        v.error("input-rank", Anchor::NodeInput(v.n, 2), message);
        return;
    }
    if let (Some(frame), Some(length)) = (frame.and_then(|f| f.first().copied()), known_dim(&window[0]))
        && frame != length
    {
        let message = format!("the window of STFT has {length} values, but frame_length is {frame}: they must match");
        v.error("incompatible-shapes", Anchor::NodeInput(v.n, 2), message);
    }
}
