//! `onnx reduce`: the smallest run of a model's nodes on which a check still fails.
//!
//! The main graph's nodes, in order, are cut to a range `start..end`: the cut's inputs are
//! the values its nodes read from before it (the caller gives them the values the whole
//! model's run made there), its outputs the values it gives to after it. The range is found
//! by bisection (the smallest end; then, among the nodes that prefix keeps, the largest
//! start), then narrowed one node at a time from either end while the check still fails,
//! as `polygraphy debug reduce` reduces outputs, then inputs.

use std::collections::HashSet;

use crate::ir::{Model, NodeId, Str, Type, ValueInfo};

/// The values a range of the main graph's nodes reads from before it, and gives to the
/// nodes after it or to the graph's outputs (the last node's outputs when it gives nothing
/// on).
pub fn boundary(model: &Model, order: &[NodeId], start: usize, end: usize) -> (Vec<Str>, Vec<Str>) {
    let inside = &order[start.min(order.len())..end.min(order.len())];
    let made: HashSet<&Str> = inside.iter().flat_map(|&n| model.nodes[n].outputs.iter()).collect();
    let graph_inputs: HashSet<&Str> = model.main_graph().map_or_else(HashSet::new, |g| {
        let initialized: HashSet<&Str> =
            g.initializers.iter().filter_map(|&t| model.tensors[t].name.as_ref()).collect();
        g.inputs.iter().filter_map(|v| v.name.as_ref()).filter(|n| !initialized.contains(n)).collect()
    });
    let made_before: HashSet<&Str> =
        order[..start.min(order.len())].iter().flat_map(|&n| model.nodes[n].outputs.iter()).collect();
    let mut inputs: Vec<Str> = Vec::new();
    for &n in inside {
        let reads = model.nodes[n].inputs.iter().cloned().chain(crate::ir::names_read_inside(model, n));
        for name in reads {
            let from_before = made_before.contains(&name) || graph_inputs.contains(&name);
            if !name.is_empty() && !made.contains(&name) && from_before && !inputs.contains(&name) {
                inputs.push(name);
            }
        }
    }
    let read_after: HashSet<Str> = order[end.min(order.len())..]
        .iter()
        .flat_map(|&n| model.nodes[n].inputs.iter().cloned().chain(crate::ir::names_read_inside(model, n)))
        .chain(model.main_graph().into_iter().flat_map(|g| g.outputs.iter().filter_map(|v| v.name.clone())))
        .collect();
    let mut outputs: Vec<Str> = Vec::new();
    for &n in inside {
        for out in model.nodes[n].outputs.iter() {
            if !out.is_empty() && read_after.contains(out) && !outputs.contains(out) {
                outputs.push(out.clone());
            }
        }
    }
    if outputs.is_empty()
        && let Some(&last) = inside.last()
    {
        outputs.extend(model.nodes[last].outputs.iter().filter(|o| !o.is_empty()).cloned());
    }
    (inputs, outputs)
}

/// The model cut to `order[start..end]` (see [`boundary`]), its new inputs typed by `types`
/// (the values a run of the whole model made there); with `last_only`, its outputs are the
/// last node's alone, so it keeps only what that node needs. The cut's inputs, in order,
/// come back.
pub fn cut(
    model: &Model,
    order: &[NodeId],
    (start, end): (usize, usize),
    last_only: bool,
    types: &dyn Fn(&Str) -> Option<Type>,
) -> Result<(Model, Vec<Str>), String> {
    let (inputs, mut outputs) = boundary(model, order, start, end);
    if last_only && let Some(&last) = order.get(end.wrapping_sub(1)) {
        outputs = model.nodes[last].outputs.iter().filter(|o| !o.is_empty()).cloned().collect();
    }
    let mut cut = model.clone();
    if let Some(g) = cut.graph {
        // The run's types first: what the cut's ends are, whatever inference would say.
        let described: HashSet<Str> = cut.graphs[g].value_info.iter().filter_map(|v| v.name.clone()).collect();
        let known: Vec<ValueInfo> = inputs
            .iter()
            .chain(&outputs)
            .filter(|name| !described.contains(*name))
            .filter_map(|name| {
                Some(ValueInfo { name: Some(name.clone()), ty: Some(types(name)?), ..Default::default() })
            })
            .collect();
        cut.graphs[g].value_info.extend(known);
    }
    crate::extract::extract(&mut cut, &inputs, &outputs).map_err(|e| e.to_string())?;
    Ok((cut, inputs))
}

/// What [`reduce`] found: the range (of the list [`reduce`]'s `narrow` gave, if it gave
/// one) and how many checks it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduced {
    pub start: usize,
    pub end: usize,
    pub checks: usize,
}

/// Why [`reduce`] gave up.
#[derive(Debug, PartialEq, Eq)]
pub enum ReduceError {
    /// The check does not fail on the whole: there is nothing to reduce.
    NothingFails,
    /// The check could not be carried out.
    Check(String),
}

/// The smallest range of `0..count` on which `fails` holds. First the smallest end whose
/// prefix fails, by bisection (the whole is checked only if no prefix failed). Then
/// `narrow(end, prune)` replaces the list by the nodes that prefix keeps, with `prune` only
/// those its last node needs (as polygraphy marks one output), and gives the new length;
/// then that last node is tried alone, and if it does not fail, the largest start whose range
/// to the end fails is found by bisection. When no such range failed, the pruned list is
/// checked whole, and if it passes (the failure needs more than
/// the last node's inputs) the start is found again in the unpruned one. Last, single items
/// come off either end while it still fails (a check that does not fail monotonically can
/// still lose some).
pub fn reduce(
    count: usize,
    fails: &mut dyn FnMut(usize, usize) -> Result<bool, String>,
    narrow: &mut dyn FnMut(usize, bool) -> Result<usize, String>,
) -> Result<Reduced, ReduceError> {
    let mut checks = 0;
    let mut check = |start: usize, end: usize, checks: &mut usize| {
        *checks += 1;
        fails(start, end).map_err(ReduceError::Check)
    };
    let (mut low, mut high) = (1.min(count), count);
    let mut failed_once = false;
    while low < high {
        let middle = low + (high - low) / 2;
        if check(0, middle, &mut checks)? {
            high = middle;
            failed_once = true;
        } else {
            low = middle + 1;
        }
    }
    if !failed_once && !check(0, count, &mut checks)? {
        return Err(ReduceError::NothingFails);
    }
    let prefix = high;
    let mut end = narrow(prefix, true).map_err(ReduceError::Check)?;
    // Most failures are one node's: the last of the failing prefix, tried alone first.
    let mut start = end.saturating_sub(1);
    if end > 1 && !check(start, end, &mut checks)? {
        let failed;
        (start, failed) = largest_start(end - 1, end, &mut |s, e| check(s, e, &mut checks))?;
        if !failed && !check(0, end, &mut checks)? {
            end = narrow(prefix, false).map_err(ReduceError::Check)?;
            start = largest_start(end, end, &mut |s, e| check(s, e, &mut checks))?.0;
        }
    }
    loop {
        if end - start > 1 && check(start + 1, end, &mut checks)? {
            start += 1;
        } else if end - start > 1 && check(start, end - 1, &mut checks)? {
            end -= 1;
        } else {
            break;
        }
    }
    Ok(Reduced { start, end, checks })
}

/// The largest start below `below` whose range to `end` fails, by bisection from 0 (taken to
/// fail), and whether any range checked failed.
fn largest_start(
    below: usize,
    end: usize,
    check: &mut dyn FnMut(usize, usize) -> Result<bool, ReduceError>,
) -> Result<(usize, bool), ReduceError> {
    let (mut low, mut high) = (0, below.saturating_sub(1));
    let mut failed = false;
    while low < high {
        let middle = low + (high - low).div_ceil(2);
        if check(middle, end)? {
            low = middle;
            failed = true;
        } else {
            high = middle - 1;
        }
    }
    Ok((low, failed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A check that fails when the range holds every one of `needed`.
    fn reduce_to(count: usize, needed: &[usize]) -> Reduced {
        let mut fails = |s: usize, e: usize| Ok(needed.iter().all(|&k| (s..e).contains(&k)));
        reduce(count, &mut fails, &mut |end, _| Ok(end)).expect("no error")
    }

    #[test]
    fn one_failing_node_is_found_in_logarithmic_checks() {
        for count in [1, 2, 7, 100, 1000] {
            for k in [0, count / 3, count - 1] {
                let r = reduce_to(count, &[k]);
                assert_eq!((r.start, r.end), (k, k + 1), "{count} nodes, node {k}");
                // Two bisections, the whole when no prefix failed (the last node), the last
                // node alone, the pruned list when no start failed (the first).
                let log = usize::BITS - count.leading_zeros();
                assert!(r.checks <= 2 * log as usize + 3, "{count}: {} checks", r.checks);
                if k > 0 {
                    assert!(r.checks <= log as usize + 1, "{count}, node {k}: {} checks", r.checks);
                }
            }
        }
    }

    #[test]
    fn a_check_failing_nowhere_is_said() {
        let mut fails = |_: usize, _: usize| Ok(false);
        assert_eq!(reduce(10, &mut fails, &mut |end, _| Ok(end)), Err(ReduceError::NothingFails));
    }

    #[test]
    fn a_failure_needing_two_nodes_keeps_both() {
        let r = reduce_to(50, &[10, 30]);
        assert_eq!((r.start, r.end), (10, 31));
    }
}
