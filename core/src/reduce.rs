//! `onnx reduce`: the smallest run of a model's nodes on which a check still fails.
//!
//! The main graph's nodes, in order, are cut to a range `start..end`: the cut's inputs are
//! the values its nodes read from before it (the caller gives them the values the whole
//! model's run made there), its outputs the values it gives to after it. The range is found
//! by bisection (the smallest end, then the largest start), then narrowed one node at a
//! time from either end while the check still fails, as `polygraphy debug reduce` does.

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
/// (the values a run of the whole model made there). The cut's inputs, in order, come back.
pub fn cut(
    model: &Model,
    order: &[NodeId],
    start: usize,
    end: usize,
    types: &dyn Fn(&Str) -> Option<Type>,
) -> Result<(Model, Vec<Str>), String> {
    let (inputs, outputs) = boundary(model, order, start, end);
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

/// What [`reduce`] found: the range and how many checks it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduced {
    pub start: usize,
    pub end: usize,
    pub checks: usize,
}

/// The smallest range of `0..count` on which `fails` holds, given that it holds on the
/// whole: bisection for the end (the first nodes up to it fail), then for the start, then
/// one node at a time off either end while it still fails. An error from `fails` ends it.
pub fn reduce(count: usize, fails: &mut dyn FnMut(usize, usize) -> Result<bool, String>) -> Result<Reduced, String> {
    let mut checks = 0;
    let mut check = |start: usize, end: usize, checks: &mut usize| {
        *checks += 1;
        fails(start, end)
    };
    // The smallest end whose prefix fails (the whole, `count`, does).
    let (mut low, mut high) = (1.min(count), count);
    while low < high {
        let middle = low + (high - low) / 2;
        if check(0, middle, &mut checks)? {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    let end = high;
    // The largest start whose range up to `end` fails (0 does).
    let (mut low, mut high) = (0, end.saturating_sub(1));
    while low < high {
        let middle = low + (high - low).div_ceil(2);
        if check(middle, end, &mut checks)? {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    let (mut start, mut end) = (low, end);
    // A check that does not fail monotonically can still lose a node at either end.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A check that fails when the range holds every one of `needed`.
    fn reduce_to(count: usize, needed: &[usize]) -> Reduced {
        let mut fails = |s: usize, e: usize| Ok(needed.iter().all(|&k| (s..e).contains(&k)));
        reduce(count, &mut fails).expect("no error")
    }

    #[test]
    fn one_failing_node_is_found_in_logarithmic_checks() {
        for count in [1, 2, 7, 100, 1000] {
            for k in [0, count / 3, count - 1] {
                let r = reduce_to(count, &[k]);
                assert_eq!((r.start, r.end), (k, k + 1), "{count} nodes, node {k}");
                // Two bisections and the two last tries at the ends, at most.
                let log = usize::BITS - count.leading_zeros();
                assert!(r.checks <= 2 * log as usize + 2, "{count}: {} checks", r.checks);
            }
        }
    }

    #[test]
    fn a_failure_needing_two_nodes_keeps_both() {
        let r = reduce_to(50, &[10, 30]);
        assert_eq!((r.start, r.end), (10, 31));
    }
}
