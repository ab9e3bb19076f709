//! TreeEnsembleClassifier and TreeEnsembleRegressor (ai.onnx.ml 1 and 3): the tree
//! ensembles skl2onnx, onnxmltools and the gradient-boosting converters write. Nodes are
//! named by (tree id, node id); each row walks every tree from its root to a leaf and the
//! leaves' weights are aggregated per target or class. Thresholds and sums are float32
//! unless the input is double, and the binary layouts follow onnxruntime.

use std::collections::{BTreeSet, HashMap};

use super::super::{Ctx, input};
use super::scores::{Labels, SecondClass, first_max, post_transform, transform_rows, two_columns};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::value::{Data, Tensor, Value};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Leq,
    Lt,
    Gte,
    Gt,
    Eq,
    Neq,
    Leaf,
}

struct TreeNode {
    feature: usize,
    threshold: f64,
    mode: Mode,
    true_next: usize,
    false_next: usize,
    missing_true: bool,
    /// (target or class, weight) of a leaf, in the order the attributes list them.
    weights: Vec<(usize, f64)>,
}

struct Forest {
    nodes: Vec<TreeNode>,
    roots: Vec<usize>,
    /// Rounds a value to the threshold type: float32 unless the input is double.
    double: bool,
}

impl Forest {
    fn round(&self, v: f64) -> f64 {
        if self.double { v } else { f64::from(v as f32) }
    }

    /// The nodes and leaf weights of the attributes; `prefix` is `target` or `class`, and
    /// `outputs` the number of targets or classes a weight may name.
    fn of(ctx: &Ctx<'_>, prefix: &str, outputs: usize, double: bool) -> Result<Forest, KernelError> {
        let ints = |name: &str| ctx.ints(name).unwrap_or_default();
        let reals = |name: &str| -> Result<Vec<f64>, KernelError> {
            match ctx.tensor(&format!("{name}_as_tensor"))? {
                Some(t) if !t.shape.is_empty() => t.to_f64s(),
                _ => Ok(ctx.floats(name).unwrap_or_default().iter().map(|&v| f64::from(v)).collect()),
            }
        };
        let (trees, ids, features) = (ints("nodes_treeids"), ints("nodes_nodeids"), ints("nodes_featureids"));
        let (trues, falses, missing) =
            (ints("nodes_truenodeids"), ints("nodes_falsenodeids"), ints("nodes_missing_value_tracks_true"));
        let modes = ctx.strings("nodes_modes").unwrap_or_default();
        let values = reals("nodes_values")?;
        let n = trees.len();
        if [ids.len(), features.len(), modes.len(), values.len(), trues.len(), falses.len()].iter().any(|&l| l != n) {
            return Err(bad_attribute!("the nodes_* attributes differ in length"));
        }
        let mut index: HashMap<(i64, i64), usize> = HashMap::new();
        for (i, key) in trees.iter().copied().zip(ids.iter().copied()).enumerate() {
            if index.insert(key, i).is_some() {
                return Err(bad_attribute!("node ({}, {}) is listed twice", key.0, key.1));
            }
        }
        let find = |tree: i64, id: i64| {
            index.get(&(tree, id)).copied().ok_or_else(|| bad_attribute!("tree {tree} has no node {id}"))
        };
        let mut nodes = Vec::with_capacity(n);
        for i in 0..n {
            let mode = match modes[i].as_slice() {
                b"BRANCH_LEQ" => Mode::Leq,
                b"BRANCH_LT" => Mode::Lt,
                b"BRANCH_GTE" => Mode::Gte,
                b"BRANCH_GT" => Mode::Gt,
                b"BRANCH_EQ" => Mode::Eq,
                b"BRANCH_NEQ" => Mode::Neq,
                b"LEAF" => Mode::Leaf,
                other => return Err(bad_attribute!("node mode '{}' is unknown", String::from_utf8_lossy(other))),
            };
            let (true_next, false_next, feature) = if mode == Mode::Leaf {
                (i, i, 0)
            } else {
                let feature = usize::try_from(features[i])
                    .map_err(|_| bad_attribute!("feature id {} is negative", features[i]))?;
                (find(trees[i], trues[i])?, find(trees[i], falses[i])?, feature)
            };
            let threshold = if double { values[i] } else { f64::from(values[i] as f32) };
            let missing_true = missing.get(i).is_some_and(|&m| m != 0);
            nodes.push(TreeNode { feature, threshold, mode, true_next, false_next, missing_true, weights: Vec::new() });
        }
        let (w_trees, w_nodes, w_ids) =
            (ints(&format!("{prefix}_treeids")), ints(&format!("{prefix}_nodeids")), ints(&format!("{prefix}_ids")));
        let weights = reals(&format!("{prefix}_weights"))?;
        if [w_nodes.len(), w_ids.len(), weights.len()].iter().any(|&l| l != w_trees.len()) {
            return Err(bad_attribute!("the {prefix}_* attributes differ in length"));
        }
        for k in 0..w_trees.len() {
            let at = find(w_trees[k], w_nodes[k])?;
            let target = usize::try_from(w_ids[k]).ok().filter(|&t| t < outputs);
            let target = target.ok_or_else(|| bad_attribute!("{prefix} id {} is not below {outputs}", w_ids[k]))?;
            let w = if double { weights[k] } else { f64::from(weights[k] as f32) };
            nodes[at].weights.push((target, w));
        }
        let roots = (0..n).filter(|&i| i == 0 || trees[i] != trees[i - 1]).collect();
        Ok(Forest { nodes, roots, double })
    }

    /// The leaf a row reaches from `root`.
    fn leaf(&self, root: usize, row: &[f64]) -> Result<&TreeNode, KernelError> {
        let mut at = root;
        for _ in 0..=self.nodes.len() {
            let node = &self.nodes[at];
            if node.mode == Mode::Leaf {
                return Ok(node);
            }
            let v = *row
                .get(node.feature)
                .ok_or_else(|| bad_input!("feature {} is past the row's {}", node.feature, row.len()))?;
            let t = node.threshold;
            let hit = match node.mode {
                Mode::Leq => v <= t,
                Mode::Lt => v < t,
                Mode::Gte => v >= t,
                Mode::Gt => v > t,
                Mode::Eq => v == t,
                Mode::Neq => v != t,
                Mode::Leaf => unreachable!("returned above"),
            } || (node.missing_true && v.is_nan());
            at = if hit { node.true_next } else { node.false_next };
        }
        Err(bad_attribute!("a tree has a cycle"))
    }
}

/// The input as rows of values in the threshold type.
fn rows_of(inputs: &[Option<&Value>]) -> Result<(Vec<f64>, usize, usize, bool), KernelError> {
    let x = input(inputs, 0)?;
    let (rows, features) = match x.shape[..] {
        [f] => (1, f),
        [n, f] => (n, f),
        _ => return Err(bad_input!("X of shape {:?} is neither 1-D nor 2-D", x.shape)),
    };
    let double = matches!(&*x.data, Data::F64(_));
    let mut values = x.to_f64s()?;
    if !double {
        values.iter_mut().for_each(|v| *v = f64::from(*v as f32));
    }
    Ok((values, rows, features, double))
}

fn base_values(ctx: &Ctx<'_>) -> Result<Vec<f64>, KernelError> {
    match ctx.tensor("base_values_as_tensor")? {
        Some(t) if !t.shape.is_empty() => t.to_f64s(),
        _ => Ok(ctx.floats("base_values").unwrap_or_default().iter().map(|&v| f64::from(v)).collect()),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Average,
    Min,
    Max,
}

/// TreeEnsembleRegressor: per row, `n_targets` values aggregated over the trees' leaves
/// (sum, average, minimum or maximum), plus `base_values`.
pub fn tree_ensemble_regressor(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, rows, features, double) = rows_of(inputs)?;
    let targets = usize::try_from(ctx.int("n_targets").unwrap_or(1))
        .ok()
        .filter(|&n| n > 0)
        .ok_or(bad_attribute!("n_targets must be positive"))?;
    let forest = Forest::of(ctx, "target", targets, double)?;
    let aggregate = match ctx.string("aggregate_function").unwrap_or("SUM") {
        "SUM" => Aggregate::Sum,
        "AVERAGE" => Aggregate::Average,
        "MIN" => Aggregate::Min,
        "MAX" => Aggregate::Max,
        other => return Err(bad_attribute!("aggregate_function '{other}' is not SUM, AVERAGE, MIN or MAX")),
    };
    let post = post_transform(ctx)?;
    let base = base_values(ctx)?;
    let trees = forest.roots.len() as f64;
    let mut out = Vec::with_capacity(rows * targets);
    for row in x.chunks(features.max(1)).take(rows) {
        let (mut sums, mut has) = (vec![0.0f64; targets], vec![false; targets]);
        for &root in &forest.roots {
            let leaf = forest.leaf(root, row)?;
            // One target: each leaf gives its first weight, whatever target it names.
            let weights: &[(usize, f64)] =
                if targets == 1 { &leaf.weights[..leaf.weights.len().min(1)] } else { &leaf.weights };
            let weights = if targets == 1 && weights.is_empty() { &[(0, 0.0)][..] } else { weights };
            for &(t, w) in weights {
                let t = if targets == 1 { 0 } else { t };
                sums[t] = match aggregate {
                    _ if !has[t] => w,
                    Aggregate::Sum | Aggregate::Average => forest.round(sums[t] + w),
                    Aggregate::Min => sums[t].min(w),
                    Aggregate::Max => sums[t].max(w),
                };
                has[t] = true;
            }
        }
        for t in 0..targets {
            let origin = match (targets, base.len()) {
                (1, 1) => base[0],
                (_, l) if l == targets => base[t],
                _ => 0.0,
            };
            let value = match aggregate {
                _ if !has[t] => 0.0,
                Aggregate::Average => forest.round(forest.round(sums[t] / trees) + origin),
                _ => forest.round(sums[t] + origin),
            };
            out.push(value as f32);
        }
    }
    transform_rows(&mut out, targets, post);
    Ok(vec![Value::Tensor(Tensor::new(vec![rows, targets], Data::F32(out.into())))])
}

/// TreeEnsembleClassifier: per row, a summed score per class and the label of the best;
/// two classes scored by one class id form a binary model with onnxruntime's layouts.
pub fn tree_ensemble_classifier(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, rows, features, double) = rows_of(inputs)?;
    let labels = Labels::of(ctx);
    let classes = labels.len();
    if classes == 0 {
        return Err(bad_attribute!("TreeEnsembleClassifier has no class labels"));
    }
    let forest = Forest::of(ctx, "class", classes, double)?;
    let post = post_transform(ctx)?;
    let base = base_values(ctx)?;
    let class_ids: BTreeSet<usize> = forest.nodes.iter().flat_map(|n| n.weights.iter().map(|w| w.0)).collect();
    let binary = classes == 2 && class_ids.len() == 1;
    let all_positive = forest.nodes.iter().flat_map(|n| &n.weights).all(|w| w.1 >= 0.0);
    let columns = if classes == 2 { 2 } else { classes };
    let (mut scores, mut picked) = (Vec::with_capacity(rows * columns), Vec::with_capacity(rows));
    for row in x.chunks(features.max(1)).take(rows) {
        let (mut s, mut has) = (vec![0.0f64; classes], vec![false; classes]);
        for &root in &forest.roots {
            for &(c, w) in &forest.leaf(root, row)?.weights {
                s[c] = forest.round(s[c] + w);
                has[c] = true;
            }
        }
        if classes != 2 {
            for (k, &b) in base.iter().enumerate().take(classes) {
                s[k] = if has[k] { forest.round(s[k] + b) } else { b };
                has[k] = true;
            }
            let ranked: Vec<f32> =
                s.iter().zip(&has).map(|(&v, &h)| if h { v as f32 } else { f32::NEG_INFINITY }).collect();
            if !has.iter().any(|&h| h) {
                return Err(bad_attribute!("no tree gave this row a class score"));
            }
            picked.push(first_max(&ranked));
            let mut row_scores: Vec<f32> = s.iter().map(|&v| v as f32).collect();
            transform_rows(&mut row_scores, classes, post);
            scores.extend(row_scores);
            continue;
        }
        let mut one_slot = false;
        let mut second = None;
        match base.len() {
            2 if has[1] => {
                s[1] = forest.round(base[1] + s[0]);
                s[0] = -s[1];
            }
            2 => {
                s[1] = forest.round(s[1] + base[1]);
                s[0] = forest.round(s[0] + base[0]);
            }
            1 => {
                s[0] = forest.round(s[0] + base[0]);
                one_slot = !has[1];
            }
            _ => {
                second = Some(SecondClass::Negated);
                one_slot = !has[1];
            }
        }
        let p = if !one_slot && has[1] {
            s[1]
        } else if has[0] {
            s[0]
        } else {
            0.0
        };
        let positive = if binary && all_positive { p > 0.5 } else { p > 0.0 };
        if binary {
            second = Some(if all_positive { SecondClass::Complement } else { SecondClass::Negated });
        }
        picked.push(usize::from(positive));
        if one_slot {
            match second {
                Some(how) => scores.extend(two_columns(&[s[0] as f32], how, post)),
                None => {
                    let mut first = [s[0] as f32];
                    transform_rows(&mut first, 1, post);
                    scores.extend([first[0], 0.0]);
                }
            }
        } else {
            let mut pair = [s[0] as f32, s[1] as f32];
            transform_rows(&mut pair, 2, post);
            scores.extend(pair);
        }
    }
    let label = match (&labels, binary || classes != 2) {
        // Two classes both scored: onnxruntime gives 1 or 0 itself, not the int labels.
        (Labels::Ints(_), false) => labels.literal(&picked.iter().map(|&p| p as i64).collect::<Vec<_>>()),
        _ => labels.pick(&picked)?,
    };
    Ok(vec![Value::Tensor(label), Value::Tensor(Tensor::new(vec![rows, columns], Data::F32(scores.into())))])
}
