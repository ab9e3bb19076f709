//! The ai.onnx.ml operators: here LabelEncoder, Binarizer, ArrayFeatureExtractor and
//! TreeEnsemble (the ones onnx's backend tests exercise); the classifiers' and regressors'
//! shared scoring in `scores`, linear models and SVMs in `linear`, the older tree ensembles
//! in `trees`, feature preparation in `features`, and the operators of maps in `maps`.

mod features;
mod linear;
mod maps;
mod scores;
mod trees;

use std::collections::HashMap;

use onnx_core::ir::AttributeValue;

use super::{Ctx, Kernel, count, input, one};
use crate::error::{KernelError, bad_attribute, bad_input, unsupported};
use crate::kernels::common::numeric_like;
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "LabelEncoder" => label_encoder,
        "Binarizer" => binarizer,
        "ArrayFeatureExtractor" => array_feature_extractor,
        "TreeEnsemble" => tree_ensemble,
        "TreeEnsembleClassifier" => trees::tree_ensemble_classifier,
        "TreeEnsembleRegressor" => trees::tree_ensemble_regressor,
        "LinearClassifier" => linear::linear_classifier,
        "LinearRegressor" => linear::linear_regressor,
        "SVMClassifier" => linear::svm_classifier,
        "SVMRegressor" => linear::svm_regressor,
        "Normalizer" => features::normalizer,
        "Scaler" => features::scaler,
        "Imputer" => features::imputer,
        "OneHotEncoder" => features::one_hot_encoder,
        "CategoryMapper" => features::category_mapper,
        "FeatureVectorizer" => features::feature_vectorizer,
        "ZipMap" => maps::zip_map,
        "DictVectorizer" => maps::dict_vectorizer,
        "CastMap" => maps::cast_map,
        _ => return None,
    };
    Some(k)
}

/// A key as LabelEncoder compares them: strings by bytes, integers exactly, floats by
/// value with NaN equal to NaN.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    Bytes(Vec<u8>),
    Int(i64),
    Float(u64),
}

fn keys_of(data: &Data) -> Result<Vec<Key>, KernelError> {
    Ok(match data {
        Data::Str(v) => v.iter().map(|s| Key::Bytes(s.clone())).collect(),
        Data::F32(_) | Data::F64(_) | Data::F16(_) | Data::Bf16(_) => Tensor::new(vec![data.len()], data.clone())
            .to_f64s()?
            .into_iter()
            .map(|f| Key::Float(if f.is_nan() { f64::NAN.to_bits() } else { (f + 0.0).to_bits() }))
            .collect(),
        _ => Tensor::new(vec![data.len()], data.clone()).to_i64s()?.into_iter().map(Key::Int).collect(),
    })
}

/// A list attribute (`NAME_strings`, `NAME_int64s`, `NAME_floats`) or tensor attribute
/// (`NAME_tensor`) as data.
fn listed(ctx: &Ctx<'_>, name: &str) -> Result<Option<Data>, KernelError> {
    if let Some(t) = ctx.tensor(&format!("{name}_tensor"))? {
        return Ok(Some((*t.data).clone()));
    }
    let attr = |suffix: &str| ctx.node.attribute(&format!("{name}_{suffix}")).and_then(|a| a.value());
    Ok(match (attr("strings"), attr("int64s"), attr("floats")) {
        (Some(AttributeValue::Strings(v)), ..) => Some(Data::Str(v.iter().map(|s| s.as_bytes().to_vec()).collect())),
        (_, Some(AttributeValue::Ints(v)), _) => Some(Data::I64(v.to_vec().into())),
        (_, _, Some(AttributeValue::Floats(v))) => Some(Data::F32(v.to_vec().into())),
        _ => None,
    })
}

fn label_encoder(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let keys = listed(ctx, "keys")?.ok_or(bad_attribute!("LabelEncoder has no keys"))?;
    let values = listed(ctx, "values")?.ok_or(bad_attribute!("LabelEncoder has no values"))?;
    if keys.len() != values.len() {
        return Err(bad_attribute!("{} keys for {} values", keys.len(), values.len()));
    }
    let default = match ctx.tensor("default_tensor")? {
        // The value of every unknown key: one, no more and no fewer.
        Some(t) if t.len() != 1 => return Err(bad_attribute!("default_tensor holds {} values, not one", t.len())),
        Some(t) => (*t.data).clone(),
        None => match &values {
            Data::Str(_) => Data::Str(vec![ctx.string("default_string").unwrap_or("_Unused").as_bytes().to_vec()]),
            Data::I64(_) => Data::I64(vec![ctx.int("default_int64").unwrap_or(-1)].into()),
            _ => Data::F32(vec![ctx.float("default_float").unwrap_or(-0.0)].into()),
        },
    };
    let mut table: HashMap<Key, usize> = HashMap::new();
    for (i, k) in keys_of(&keys)?.into_iter().enumerate() {
        table.entry(k).or_insert(i);
    }
    let mut joined = values.clone();
    joined.extend_from(&Tensor::new(vec![1], default).data).map_err(|e| bad_attribute!("default: {e}"))?;
    let fallback = values.len();
    let picked: Vec<usize> = keys_of(&x.data)?.iter().map(|k| table.get(k).copied().unwrap_or(fallback)).collect();
    one(Tensor::new(x.shape.clone(), joined.pick(picked.into_iter())))
}

fn binarizer(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let threshold = f64::from(ctx.float("threshold").unwrap_or(0.0));
    let out = x.to_f64s()?.into_iter().map(|v| if v > threshold { 1.0 } else { 0.0 }).collect();
    one(numeric_like(x.data_type(), x.shape.clone(), out)?)
}

/// ArrayFeatureExtractor: the elements of X's last axis at the given indices (a 1-D X
/// reads as one row).
fn array_feature_extractor(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, y) = (input(inputs, 0)?, input(inputs, 1)?.to_i64s()?);
    let last = *x.shape.last().ok_or(bad_input!("X is a scalar"))?;
    let indices: Vec<usize> = y
        .iter()
        .map(|&i| {
            usize::try_from(i).ok().filter(|&i| i < last).ok_or(bad_input!("index {i} is out of range for {last}"))
        })
        .collect::<Result<_, _>>()?;
    let rows = x.len() / last.max(1);
    // Every row reads every index: many indices into many rows make a large result.
    ctx.check_grown(count(&[rows, indices.len()])?, x.len().max(y.len()))?;
    let picked = (0..rows).flat_map(|r| indices.iter().map(move |&i| r * last + i));
    let mut shape = if x.rank() == 1 { vec![1] } else { x.shape[..x.rank() - 1].to_vec() };
    shape.push(indices.len());
    one(Tensor::new(shape, x.data.pick(picked)))
}

/// A tensor attribute's values as f64 (empty when absent).
fn tensor_values(ctx: &Ctx<'_>, name: &str) -> Result<Vec<f64>, KernelError> {
    ctx.tensor(name)?.map_or(Ok(Vec::new()), |t| t.to_f64s())
}

/// TreeEnsemble (opset 5): each row walked down every tree from its root to a leaf, the
/// leaves' weights gathered per target by sum, average, minimum or maximum.
fn tree_ensemble(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let [rows, features] = x.shape[..] else { return Err(bad_input!("X of shape {:?} is not 2-D", x.shape)) };
    let ints = |name: &str| ctx.ints(name).map(<[i64]>::to_vec).ok_or(bad_attribute!("attribute {name} is missing"));
    let (features_of, true_ids, false_ids) =
        (ints("nodes_featureids")?, ints("nodes_truenodeids")?, ints("nodes_falsenodeids")?);
    let (true_leaf, false_leaf) = (ints("nodes_trueleafs")?, ints("nodes_falseleafs")?);
    let (targets_of, roots) = (ints("leaf_targetids")?, ints("tree_roots")?);
    let missing_true = ctx.ints("nodes_missing_value_tracks_true").map(<[i64]>::to_vec).unwrap_or_default();
    let (splits, modes, weights) =
        (tensor_values(ctx, "nodes_splits")?, tensor_values(ctx, "nodes_modes")?, tensor_values(ctx, "leaf_weights")?);
    let members = tensor_values(ctx, "membership_values")?;
    let nodes = splits.len();
    if [features_of.len(), true_ids.len(), false_ids.len(), true_leaf.len(), false_leaf.len(), modes.len()]
        .iter()
        .any(|&l| l != nodes)
        || targets_of.len() != weights.len()
    {
        return Err(bad_attribute!("the nodes_* (or leaf_*) attributes differ in length"));
    }
    let n_targets =
        usize::try_from(ctx.int("n_targets").unwrap_or(1)).map_err(|_| bad_attribute!("n_targets is negative"))?;
    // Each membership node's set, in node order (sets are separated by NaN).
    let mut sets: HashMap<usize, Vec<f64>> = HashMap::new();
    let mut chunks = members.split(|v| v.is_nan());
    for (i, _) in modes.iter().enumerate().filter(|(_, m)| **m == 6.0) {
        sets.insert(i, chunks.next().unwrap_or_default().to_vec());
    }
    let aggregate = ctx.int("aggregate_function").unwrap_or(1);
    if ctx.int("post_transform").unwrap_or(0) != 0 {
        return Err(unsupported!("post_transform other than NONE is not supported yet"));
    }
    let index = |v: i64, len: usize, what: &str| {
        usize::try_from(v).ok().filter(|&i| i < len).ok_or(bad_attribute!("{what} {v} is out of range"))
    };
    let values = x.to_f64s()?;
    let start = match aggregate {
        0 | 1 => 0.0,
        2 => f64::MAX,
        3 => f64::MIN,
        other => return Err(bad_attribute!("aggregate_function {other} is not 0 to 3")),
    };
    // One value per row and target: n_targets comes from the model, and an empty X may
    // declare any number of rows.
    let total = count(&[rows, n_targets.max(1)])?;
    ctx.check_grown(total, x.len())?;
    let mut out = vec![start; rows * n_targets];
    for r in 0..rows {
        let row = &values[r * features..(r + 1) * features];
        for &root in &roots {
            let root = index(root, nodes, "tree root")?;
            // A root whose two branches are the same leaf is that leaf (by its own index).
            let mut at = if true_leaf[root] != 0 && false_leaf[root] != 0 && true_ids[root] == false_ids[root] {
                Err(root)
            } else {
                Ok(root)
            };
            let mut steps = 0;
            let leaf = loop {
                let node = match at {
                    Err(leaf) => break leaf,
                    Ok(node) => node,
                };
                steps += 1;
                if steps > nodes + 1 {
                    return Err(bad_attribute!("a tree has a cycle"));
                }
                let v = row[index(features_of[node], features, "feature")?];
                let split = splits[node];
                let hit = match modes[node] as i64 {
                    0 => v <= split,
                    1 => v < split,
                    2 => v >= split,
                    3 => v > split,
                    4 => v == split,
                    5 => v != split,
                    6 => sets.get(&node).is_some_and(|s| s.contains(&v)),
                    m => return Err(bad_attribute!("node mode {m} is not 0 to 6")),
                } || (v.is_nan() && missing_true.get(node).is_some_and(|&t| t != 0));
                let (next, is_leaf) =
                    if hit { (true_ids[node], true_leaf[node]) } else { (false_ids[node], false_leaf[node]) };
                at = if is_leaf != 0 {
                    Err(index(next, weights.len(), "leaf")?)
                } else {
                    Ok(index(next, nodes, "node")?)
                };
            };
            let t = index(targets_of[leaf], n_targets, "target")?;
            let slot = &mut out[r * n_targets + t];
            let w = weights[leaf];
            *slot = match aggregate {
                0 => *slot + w / roots.len() as f64,
                1 => *slot + w,
                2 => slot.min(w),
                _ => slot.max(w),
            };
        }
    }
    one(numeric_like(x.data_type(), vec![rows, n_targets], out)?)
}
