//! The ai.onnx.ml operators' conditions: those onnx 1.23.2's inference functions fail a node
//! for (`onnx/defs/traditionalml/{defs,old}.cc`), and those onnxruntime's kernels refuse
//! when the model is loaded (`onnxruntime/core/providers/cpu/ml/`): keys given once, lists
//! of matching lengths, the spellings of `post_transform` and `norm`. Like the default
//! domain's rules, only what is known is judged.

use super::{Judge, Violations};
use crate::diagnostic::Anchor;
use crate::infer::types::{known_dim, tensor_parts};
use crate::ir::{Attribute, DataType, DimValue, Model, Node, Type};

/// The ai.onnx.ml operators' rules, under their keys ([`super::OTHER_DOMAINS`]).
pub(super) const VALIDATORS: super::Registrations = &[
    ("ArrayFeatureExtractor", 1, ml_rules),
    ("ZipMap", 1, ml_rules),
    ("LinearClassifier", 1, ml_rules),
    ("LinearRegressor", 1, ml_rules),
    ("SVMClassifier", 1, ml_rules),
    ("SVMRegressor", 1, ml_rules),
    ("TreeEnsembleRegressor", 1, ml_rules),
    ("TreeEnsemble", 1, ml_rules),
    ("TreeEnsembleClassifier", 1, ml_rules),
    ("Normalizer", 1, ml_rules),
    ("OneHotEncoder", 1, ml_rules),
    ("CategoryMapper", 1, ml_rules),
    ("LabelEncoder", 1, ml_rules),
];

/// `judge.since` is the version of ai.onnx.ml the model imports.
fn ml_rules(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    node_rule_violations(judge.model, judge.node, judge.op, judge.since, judge.lookup, v);
}

/// Checks ai.onnx.ml node `node` (of operator `op`, the model importing version `ml_opset`
/// of the domain) from its input types `lookup`.
fn node_rule_violations<'t>(
    model: &Model,
    node: &Node,
    op: &str,
    ml_opset: i64,
    lookup: impl Fn(usize) -> Option<&'t Type>,
    v: &mut Violations<'_, '_>,
) {
    let dims = |i: usize| lookup(i).and_then(tensor_parts).and_then(|(_, d)| d);
    let elem = |i: usize| lookup(i).and_then(tensor_parts).and_then(|(e, _)| e);
    match op {
        "ArrayFeatureExtractor" => {
            if let (Some(x), Some(indices)) = (dims(0), dims(1))
                && x.len() > 1
            {
                indices_count(indices, v);
            }
        }
        "ZipMap" => {
            exactly_one_list(node, &["classlabels_strings", "classlabels_int64s"], "its keys", v);
            v.rank_within(0, dims(0), 1, 2, "the input");
        }
        "LinearClassifier" => {
            linear_classifier(node, v);
            v.rank_within(0, dims(0), 1, 2, "the input");
            let features = dims(0).and_then(|d| d.last()).and_then(known_dim).and_then(|f| usize::try_from(f).ok());
            coefficients_per_class(node, features, v);
        }
        "LinearRegressor" | "SVMClassifier" | "SVMRegressor" => v.one_of(node, "post_transform"),
        "TreeEnsembleRegressor" => {
            v.one_of(node, "post_transform");
            if ml_opset >= 3 {
                v.rank_within(0, dims(0), 2, 2, "the input");
                for name in ["nodes_values", "nodes_hitrates", "target_weights", "base_values"] {
                    list_or_tensor(node, name, v);
                }
            }
        }
        "TreeEnsemble" => {
            v.rank_within(0, dims(0), 2, 2, "the input");
            tree_ensemble(model, node, elem(0), v);
            // onnxruntime's kernel: a positive count of targets.
            if super::int(node, "n_targets").unwrap_or(0) <= 0 {
                let at = v.attribute_anchor(node, "n_targets");
                v.error("invalid-attribute-value", at, "TreeEnsemble needs a positive n_targets");
            }
        }
        "TreeEnsembleClassifier" => {
            v.one_of(node, "post_transform");
            if ml_opset >= 3 {
                v.rank_within(0, dims(0), 2, 2, "the input");
                for name in ["nodes_values", "nodes_hitrates", "class_weights", "base_values"] {
                    list_or_tensor(node, name, v);
                }
                if !has_values(node, "classlabels_strings") && !has_values(node, "classlabels_int64s") {
                    let message =
                        "TreeEnsembleClassifier needs its class labels: classlabels_int64s or classlabels_strings";
                    v.error("missing-required-attribute", Anchor::Node(v.n), message);
                }
            }
        }
        "Normalizer" => v.one_of(node, "norm"),
        "OneHotEncoder" => exactly_one_given(node, &["cats_int64s", "cats_strings"], "its categories", v),
        "CategoryMapper" => category_mapper(node, v),
        "LabelEncoder" if ml_opset >= 4 => label_encoder_4(model, node, elem(0), v),
        "LabelEncoder" if ml_opset >= 2 => label_encoder_2(node, elem(0), v),
        _ => {}
    }
}

/// Attribute `name` is written with at least one value.
fn has_values(node: &Node, name: &str) -> bool {
    node.attribute(name).is_some_and(|a| !a.ints.is_empty() || !a.strings.is_empty() || !a.floats.is_empty())
}

/// One of the list attributes `names` holds values, and only one (onnxruntime's ZipMap:
/// "Must provide classlabels_strings or classlabels_int64s but not both").
fn exactly_one_list(node: &Node, names: &[&str], what: &str, v: &mut Violations<'_, '_>) {
    let given: Vec<&str> = names.iter().copied().filter(|n| has_values(node, n)).collect();
    one_of_names(node, names, &given, what, v);
}

/// One of the attributes `names` is written (empty or not), and only one (onnx's
/// OneHotEncoder: "Exactly one of 'cats_*' attributes must be provided").
fn exactly_one_given(node: &Node, names: &[&str], what: &str, v: &mut Violations<'_, '_>) {
    let given: Vec<&str> = names.iter().copied().filter(|n| node.attribute(n).is_some()).collect();
    one_of_names(node, names, &given, what, v);
}

fn one_of_names(node: &Node, names: &[&str], given: &[&str], what: &str, v: &mut Violations<'_, '_>) {
    let op = v.op;
    match given {
        [_] => {}
        [] => {
            let message = format!("{op} needs {what}: one of {}", names.join(", "));
            v.error("missing-required-attribute", Anchor::Node(v.n), message);
        }
        [_, second, ..] => {
            let at = v.attribute_anchor(node, second);
            let message =
                format!("{op} takes {what} from one of {}, and it has {}", names.join(", "), given.join(" and "));
            v.error("invalid-attribute-value", at, message);
        }
    }
}

/// `name` and `name_as_tensor` (ai.onnx.ml version 3 on) are not both written.
fn list_or_tensor(node: &Node, name: &str, v: &mut Violations<'_, '_>) {
    let tensor = format!("{name}_as_tensor");
    if node.attribute(name).is_some() && node.attribute(&tensor).is_some() {
        let at = v.attribute_anchor(node, &tensor);
        let op = v.op;
        v.error("invalid-attribute-value", at, format!("{op} has both {name} and {tensor}: give one"));
    }
}

/// A LinearClassifier's coefficients are one row of the input's features per class
/// (intercept). Neither onnx nor onnxruntime checks it: onnxruntime reads the rows it needs
/// and ignores the rest, or reads past the list. A warning (a real onnxmltools export has
/// 12 coefficients for 3 classes of 2 features).
fn coefficients_per_class(node: &Node, features: Option<usize>, v: &mut Violations<'_, '_>) {
    let classes = node.attribute("intercepts").map_or(0, |a| a.floats.len());
    let (Some(features), Some(coefficients)) = (features, node.attribute("coefficients").map(|a| a.floats.len()))
    else {
        return;
    };
    let wanted = classes * features;
    if classes == 0 || coefficients == wanted {
        return;
    }
    let what = if coefficients > wanted { "reads the first ones and ignores the rest" } else { "cannot run it" };
    let message = format!(
        "LinearClassifier has {coefficients} coefficients, but {classes} classes (one per intercept) of {features} input features need {wanted}: onnxruntime {what}"
    );
    let at = v.attribute_anchor(node, "coefficients");
    v.warning("attribute-size", at, message);
}

/// onnxruntime's LinearClassifier: intercepts (one per class) are given; with more than one
/// class, labels are given, at least one per class; `post_transform` is one it knows.
fn linear_classifier(node: &Node, v: &mut Violations<'_, '_>) {
    v.one_of(node, "post_transform");
    let classes = node.attribute("intercepts").map_or(0, |a| a.floats.len());
    if classes == 0 {
        let at = v.attribute_anchor(node, "intercepts");
        v.error("missing-required-attribute", at, "LinearClassifier needs intercepts, one per class");
        return;
    }
    let labels = ["classlabels_strings", "classlabels_ints"]
        .into_iter()
        .find(|n| has_values(node, n))
        .map(|n| (n, node.attribute(n).map_or(0, |a| a.strings.len().max(a.ints.len()))));
    match labels {
        None if classes > 1 => {
            let message = format!(
                "LinearClassifier has {classes} classes (one per intercept) and needs their labels: classlabels_ints or classlabels_strings"
            );
            v.error("missing-required-attribute", Anchor::Node(v.n), message);
        }
        Some((name, count)) if count < classes => {
            let at = v.attribute_anchor(node, name);
            let labels = if count == 1 { "label" } else { "labels" };
            let message = format!("{name} has {count} {labels}, but the intercepts make {classes} classes");
            v.error("attribute-size", at, message);
        }
        _ => {}
    }
}

/// onnx's CategoryMapper: both lists of categories, of the same length.
fn category_mapper(node: &Node, v: &mut Violations<'_, '_>) {
    let (ints, strings) = (node.attribute("cats_int64s"), node.attribute("cats_strings"));
    let (Some(ints), Some(strings)) = (ints, strings) else {
        let missing = if ints.is_none() { "cats_int64s" } else { "cats_strings" };
        let message = format!("CategoryMapper needs {missing}: it maps between cats_int64s and cats_strings");
        v.error("missing-required-attribute", Anchor::Node(v.n), message);
        return;
    };
    if ints.ints.len() != strings.strings.len() {
        let at = v.attribute_anchor(node, "cats_strings");
        let message = format!(
            "CategoryMapper has {} cats_int64s and {} cats_strings: they pair up, so they must be as many",
            ints.ints.len(),
            strings.strings.len()
        );
        v.error("attribute-size", at, message);
    }
}

/// The element type and length of a list attribute, or of a 1-D tensor one, read as onnx
/// reads them: by the field that holds values (ints, floats, strings, then a tensor), so an
/// empty list has no type. `Err` names a tensor that is not 1-D.
fn typed_length(model: &Model, attribute: &Attribute) -> Result<Option<(i32, usize)>, String> {
    Ok(Some(if !attribute.ints.is_empty() {
        (DataType::Int64 as i32, attribute.ints.len())
    } else if !attribute.floats.is_empty() {
        (DataType::Float as i32, attribute.floats.len())
    } else if !attribute.strings.is_empty() {
        (DataType::String as i32, attribute.strings.len())
    } else if let Some(t) = attribute.t {
        let tensor = &model.tensors[t];
        let [length] = tensor.dims[..] else {
            let name = attribute.name.as_ref().map(|n| String::from_utf8_lossy(n.as_bytes()).into_owned());
            return Err(format!("{} must be a 1-D tensor; it has dims {:?}", name.unwrap_or_default(), tensor.dims));
        };
        (tensor.data_type.unwrap_or(0), usize::try_from(length).unwrap_or(0))
    } else {
        return Ok(None);
    }))
}

fn type_name(code: i32) -> String {
    super::type_name(i64::from(code))
}

/// LabelEncoder from ai.onnx.ml version 4: one keys attribute, of the input's element type;
/// one values attribute, as long as the keys; a default tensor of the values' type and of
/// one element.
fn label_encoder_4(model: &Model, node: &Node, input: Option<i32>, v: &mut Violations<'_, '_>) {
    let Some((key_type, keys)) = one_typed(model, node, "keys", v) else { return };
    if let Some(input) = input
        && input != key_type
    {
        let message = format!(
            "the keys of LabelEncoder are {}, its input is {}: they must be of one type",
            type_name(key_type),
            type_name(input)
        );
        v.error("input-type", Anchor::NodeInput(v.n, 0), message);
    }
    let Some((value_type, values)) = one_typed(model, node, "values", v) else { return };
    if values != keys {
        let message =
            format!("LabelEncoder has {keys} keys and {values} values: they pair up, so they must be as many");
        v.error("attribute-size", Anchor::Node(v.n), message);
    }
    let default = node.attribute("default_tensor").and_then(|a| a.t).map(|t| &model.tensors[t]);
    if let Some(default) = default.filter(|t| t.data_type.is_some_and(|d| d != 0)) {
        let at = v.attribute_anchor(node, "default_tensor");
        if default.data_type != Some(value_type) {
            let message = format!(
                "the default_tensor of LabelEncoder is {}, its values {}: they must be of one type",
                type_name(default.data_type.unwrap_or(0)),
                type_name(value_type)
            );
            v.error("invalid-attribute-value", at, message);
        } else if default.dims != [1] {
            let message = format!("the default_tensor of LabelEncoder has dims {:?}; it must be [1]", default.dims);
            v.error("invalid-attribute-value", at, message);
        }
    }
}

/// The one `{prefix}_tensor`, `{prefix}_strings`, `{prefix}_int64s` or `{prefix}_floats`
/// attribute that holds values, with its element type and length; says so when there is
/// none or more than one.
fn one_typed(model: &Model, node: &Node, prefix: &str, v: &mut Violations<'_, '_>) -> Option<(i32, usize)> {
    let names = ["tensor", "strings", "int64s", "floats"].map(|s| format!("{prefix}_{s}"));
    let mut given = Vec::new();
    for name in &names {
        let Some(attribute) = node.attribute(name) else { continue };
        match typed_length(model, attribute) {
            Ok(Some(found)) => given.push((name.as_str(), found)),
            Ok(None) => {}
            Err(message) => {
                let at = v.attribute_anchor(node, name);
                v.error("invalid-attribute-value", at, message);
                return None;
            }
        }
    }
    let list: Vec<&str> = names.iter().map(String::as_str).collect();
    let given_names: Vec<&str> = given.iter().map(|(n, _)| *n).collect();
    one_of_names(node, &list, &given_names, &format!("its {prefix}"), v);
    match given.as_slice() {
        [(_, found)] => Some(*found),
        _ => None,
    }
}

/// LabelEncoder of ai.onnx.ml versions 2 and 3: one keys list, of the input's element type,
/// and one values list.
fn label_encoder_2(node: &Node, input: Option<i32>, v: &mut Violations<'_, '_>) {
    let keys = [("keys_strings", DataType::String), ("keys_int64s", DataType::Int64), ("keys_floats", DataType::Float)];
    let given: Vec<_> = keys.iter().filter(|(n, _)| node.attribute(n).is_some()).collect();
    let names = keys.map(|(n, _)| n);
    one_of_names(node, &names, &given.iter().map(|(n, _)| *n).collect::<Vec<_>>(), "its keys", v);
    if let ([(name, ty)], Some(input)) = (given.as_slice(), input)
        && input != *ty as i32
    {
        let message = format!(
            "LabelEncoder has {name}, so its input must be {}, not {}",
            type_name(*ty as i32),
            type_name(input)
        );
        v.error("input-type", Anchor::NodeInput(v.n, 0), message);
    }
    exactly_one_given(node, &["values_strings", "values_int64s", "values_floats"], "its values", v);
}

/// TreeEnsemble (ai.onnx.ml version 5), as onnx's inference judges it: `nodes_splits`, a
/// 1-D tensor of the input's type, sets how many nodes there are; every `nodes_*` list has
/// that many values of its type; `leaf_targetids` and `leaf_weights` (of the input's type)
/// are both given and as long as each other; `membership_values` is of the input's type.
fn tree_ensemble(model: &Model, node: &Node, input: Option<i32>, v: &mut Violations<'_, '_>) {
    let Some(splits) = node.attribute("nodes_splits") else {
        v.error("missing-required-attribute", Anchor::Node(v.n), "TreeEnsemble needs nodes_splits");
        return;
    };
    let (split_type, count) = match typed_length(model, splits) {
        Ok(Some(found)) => found,
        Ok(None) | Err(_) => {
            let at = v.attribute_anchor(node, "nodes_splits");
            v.error("invalid-attribute-value", at, "nodes_splits of TreeEnsemble must be a 1-D tensor");
            return;
        }
    };
    let Some(input) = input else { return };
    let of_input = |v: &mut Violations<'_, '_>, name: &str, ty: i32| {
        if ty != input {
            let message = format!(
                "{name} of TreeEnsemble is {}, its input {}: they must be of one type",
                type_name(ty),
                type_name(input)
            );
            let at = v.attribute_anchor(node, name);
            v.error("invalid-attribute-value", at, message);
        }
    };
    of_input(v, "nodes_splits", split_type);
    let int64 = DataType::Int64 as i32;
    let lists = [
        ("nodes_featureids", int64, true),
        ("nodes_hitrates", DataType::Float as i32, false),
        ("nodes_modes", DataType::Uint8 as i32, true),
        ("nodes_truenodeids", int64, true),
        ("nodes_falsenodeids", int64, true),
        ("nodes_trueleafs", int64, true),
        ("nodes_falseleafs", int64, true),
        ("nodes_missing_value_tracks_true", int64, false),
    ];
    for (name, ty, required) in lists {
        let Some(attribute) = node.attribute(name) else {
            if required {
                v.error("missing-required-attribute", Anchor::Node(v.n), format!("TreeEnsemble needs {name}"));
            }
            continue;
        };
        // onnx reads the type and length first, failing a tensor that is not 1-D.
        let found = match typed_length(model, attribute) {
            Ok(found) => found.unwrap_or((0, 0)),
            Err(not_1d) => {
                let at = v.attribute_anchor(node, name);
                v.error("invalid-attribute-value", at, format!("TreeEnsemble's {not_1d}"));
                continue;
            }
        };
        let (code, message) = if found.0 != ty {
            ("invalid-attribute-value", format!("{name} of TreeEnsemble must hold {} values", type_name(ty)))
        } else if found.1 != count {
            (
                "attribute-size",
                format!("{name} of TreeEnsemble has {} values, nodes_splits {count}: one per node", found.1),
            )
        } else {
            continue;
        };
        let at = v.attribute_anchor(node, name);
        v.error(code, at, message);
    }
    if let Some(membership) = node.attribute("membership_values").and_then(|a| a.t) {
        of_input(v, "membership_values", model.tensors[membership].data_type.unwrap_or(0));
    }
    let (Some(targets), Some(weights)) = (node.attribute("leaf_targetids"), node.attribute("leaf_weights")) else {
        let message = "TreeEnsemble needs both leaf_targetids and leaf_weights";
        v.error("missing-required-attribute", Anchor::Node(v.n), message);
        return;
    };
    if let Some(weights) = weights.t.map(|t| &model.tensors[t]) {
        let length = weights.dims.first().copied().unwrap_or(0);
        if i64::try_from(targets.ints.len()).ok() != Some(length) {
            let message = format!(
                "TreeEnsemble has {} leaf_targetids and {length} leaf_weights: one of each per leaf",
                targets.ints.len()
            );
            let at = v.attribute_anchor(node, "leaf_weights");
            v.error("attribute-size", at, message);
        }
        of_input(v, "leaf_weights", weights.data_type.unwrap_or(0));
    }
}

/// ArrayFeatureExtractor's output holds one value per index: onnx multiplies the indices'
/// dimensions, in order, while they are known (one named dimension may stand among them),
/// and fails the node when the product leaves int64.
fn indices_count(indices: &[crate::ir::Dimension], v: &mut Violations<'_, '_>) {
    let mut count: i64 = 1;
    let mut named = false;
    for d in indices {
        match &d.value {
            Some(DimValue::Value(n)) => match count.checked_mul(*n) {
                Some(c) => count = c,
                None => {
                    let message = "the number of indices of ArrayFeatureExtractor (the product of their dimensions) leaves the range of int64";
                    v.error("dimension-overflow", Anchor::NodeInput(v.n, 1), message);
                    return;
                }
            },
            Some(DimValue::Param(_)) if !named => named = true,
            _ => return,
        }
    }
}
