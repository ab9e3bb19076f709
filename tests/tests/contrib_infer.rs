//! Inference on the models onnxruntime's optimizers and quantizers write
//! (`tests/corpus/contrib`), against onnxruntime's own `symbolic_shape_infer.py`: for each
//! output of a `com.microsoft` node, whether ours types it, and whether our shape is the
//! one onnxruntime's tool gives (`tests/fixtures/run_contrib/MODEL/expected.json`, written
//! by `gen_contrib_models.py`). A dim both know that differs is a contradiction and fails
//! the test; the rest is a snapshot, so a gain or a loss shows in review. What differs
//! today is GroupQueryAttention's present key and value of the genai models: onnxruntime's
//! tool gives them the past's length, which its kernel gives only when the cache is one
//! shared buffer; the kernel's length is the larger of the past's and the total sequence
//! length (the values of an input), which ours leaves unknown. And the genai Whisper
//! decoder's sequence length: its position table is sliced from the past length to the
//! past plus the new length, which is that length only while it stays within the table
//! (onnxruntime's tool assumes it does; ours, as onnx's, leaves it unknown).

use std::collections::BTreeMap;
use std::path::Path;

use onnx_core::binary;
use onnx_core::infer::infer_main_graph;
use onnx_core::ir::{DimValue, Type, TypeValue};

/// onnxruntime's dims: a size, a symbol, or null (unknown). Its tool names a dim read from
/// a one-element shape value by that value's list text (`[sequence]` for RelativePositionBias'
/// lengths): the symbol inside is the dim.
fn ort_dims(value: &serde_json::Value) -> Option<Vec<Option<String>>> {
    value.as_array().map(|dims| {
        dims.iter()
            .map(|d| match d {
                serde_json::Value::Number(n) => Some(n.to_string()),
                serde_json::Value::String(s) => {
                    Some(s.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or(s).to_owned())
                }
                _ => None,
            })
            .collect()
    })
}

/// Our dims as onnxruntime's tool spells them (`None`: unknown); `None` for no shape.
fn our_dims(ty: &Type) -> Option<Vec<Option<String>>> {
    let Some(TypeValue::Tensor(t)) = &ty.value else { return None };
    let shape = t.shape.as_ref()?;
    Some(
        shape
            .dims
            .iter()
            .map(|d| match &d.value {
                Some(DimValue::Value(v)) => Some(v.to_string()),
                Some(DimValue::Param(p)) => Some(p.escaped()),
                None => None,
            })
            .collect(),
    )
}

fn has_element_type(ty: &Type) -> bool {
    matches!(&ty.value, Some(TypeValue::Tensor(t)) if t.elem_type.is_some_and(|e| e != 0))
}

/// Dims onnxruntime's tool names with a fixed text whatever the model calls its dims:
/// `_infer_RemovePadding` writes `batch_size + 1` for a batch named `batch`, and
/// `token_count` for the packed token count (which hangs on the mask's values), and the
/// nodes after it keep that name. Ours is the same when it is a symbol there, whatever
/// its name.
const FIXED_NAMES: &[&str] = &["batch_size + 1", "token_count"];

/// Whether our dims are onnxruntime's, a dim it names with a fixed text (see
/// [`FIXED_NAMES`]) matching any symbol of ours.
fn same_dims(ours: &[Option<String>], theirs: &[Option<String>]) -> bool {
    ours.len() == theirs.len()
        && ours.iter().zip(theirs).all(|(a, b)| match (a, b) {
            (Some(a), Some(b)) if FIXED_NAMES.contains(&b.as_str()) => a.parse::<i64>().is_err(),
            _ => a == b,
        })
}

#[test]
fn contrib_outputs_are_typed_as_onnxruntime_types_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixtures = root.join("fixtures/run_contrib");
    let mut models: Vec<_> = std::fs::read_dir(&fixtures)
        .expect("tests/fixtures/run_contrib")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    models.sort();
    assert!(models.len() >= 10, "only {} contrib models have expectations", models.len());
    let mut lines = Vec::new();
    let mut contradictions = Vec::new();
    let (mut all_outputs, mut all_typed) = (0, 0);
    for dir in &models {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).expect("expected.json"))
                .expect("expected.json is JSON");
        let shapes = expected["symbolic_shapes"].as_object();
        let model = binary::read_model(&root.join("corpus/contrib").join(format!("{name}.onnx"))).expect(&name);
        let inferred = infer_main_graph(&model);
        let types: BTreeMap<String, &Type> = inferred.types.iter().map(|(k, t)| (k.escaped(), t)).collect();
        let (mut outputs, mut typed, mut compared, mut same) = (0, 0, 0, 0);
        let mut untyped_ops: BTreeMap<String, usize> = BTreeMap::new();
        for &n in &model.main_graph().expect("a graph").nodes {
            let node = &model.nodes[n];
            if !node.domain.as_ref().is_some_and(|d| d.escaped().starts_with("com.microsoft")) {
                continue;
            }
            let op = node.op_type.as_ref().map_or_else(String::new, |o| o.escaped());
            for output in node.outputs.iter().filter(|o| !o.as_bytes().is_empty()) {
                let output = output.escaped();
                outputs += 1;
                let ours = types.get(&output).filter(|t| has_element_type(t));
                match ours {
                    Some(_) => typed += 1,
                    None => *untyped_ops.entry(op.clone()).or_default() += 1,
                }
                let Some(theirs) = shapes.and_then(|s| s.get(&output)).and_then(ort_dims) else { continue };
                compared += 1;
                let ours = ours.and_then(|t| our_dims(t));
                if ours.as_ref().is_some_and(|ours| same_dims(ours, &theirs)) {
                    same += 1;
                } else if let Some(ours) = &ours {
                    let differs = ours.len() != theirs.len()
                        || ours.iter().zip(&theirs).any(|(a, b)| {
                            matches!((a, b), (Some(a), Some(b)) if a != b && !FIXED_NAMES.contains(&b.as_str()))
                        });
                    if differs {
                        contradictions.push(format!("{name}: {op} {output}: ours {ours:?}, onnxruntime {theirs:?}"));
                    }
                }
            }
        }
        all_outputs += outputs;
        all_typed += typed;
        let untyped = if untyped_ops.is_empty() { String::new() } else { format!("; untyped: {untyped_ops:?}") };
        lines.push(format!(
            "{name}: {typed}/{outputs} contrib outputs typed; {same}/{compared} shapes as onnxruntime's{untyped}"
        ));
    }
    assert!(contradictions.is_empty(), "our shapes contradict onnxruntime's:\n{}", contradictions.join("\n"));
    insta::assert_snapshot!(
        "contrib_inference",
        format!("{all_typed}/{all_outputs} outputs of contrib nodes typed\n\n{}", lines.join("\n"))
    );
}

/// Cases (by name prefix) whose output 0 has a size that hangs on their inputs' values,
/// which the one-node cases feed as graph inputs: no inference can know it.
const VALUE_DEPENDENT: &[(&str, &str)] = &[
    ("range_", "Range's length is (limit - start) / delta"),
    ("remove_padding", "RemovePadding's token count is the sum of sequence_token_count"),
];

/// The one-node cases of `tests/fixtures/contrib_ops` (their outputs declared with the
/// shapes onnxruntime's kernels give them): with the declarations dropped, our inference
/// gives each output a shape of the declared rank whose known dims are the declared ones
/// (a dim may stay unknown where it hangs on an input's value, as GroupQueryAttention's
/// cache length on total_sequence_length), and output 0 fully known but in the cases of
/// [`VALUE_DEPENDENT`].
#[test]
fn contrib_cases_are_shaped_as_onnxruntime_computes_them() {
    let root = onnx_tests::fixture_dir("contrib_ops");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("tests/fixtures/contrib_ops")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("model.onnx").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 30, "only {} contrib cases", dirs.len());
    let mut wrong = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mut model = binary::read_model(&dir.join("model.onnx")).expect(&name);
        let graph = model.graph.expect("a graph");
        let declared: Vec<(String, Vec<Option<String>>)> = model.graphs[graph]
            .outputs
            .iter()
            .map(|o| {
                let dims = o.ty.as_ref().and_then(our_dims).expect("declared shapes");
                (o.name.as_ref().map(|n| n.escaped()).unwrap_or_default(), dims)
            })
            .collect();
        model.graphs[graph].outputs.iter_mut().for_each(|o| o.ty = None);
        let inferred = infer_main_graph(&model);
        let types: BTreeMap<String, &Type> = inferred.types.iter().map(|(k, t)| (k.escaped(), t)).collect();
        let value_dependent = VALUE_DEPENDENT.iter().any(|(prefix, _)| name.starts_with(prefix));
        for (k, (output, theirs)) in declared.iter().enumerate() {
            let ours = types.get(output).and_then(|t| our_dims(t));
            let agrees = ours.as_ref().is_some_and(|ours| {
                ours.len() == theirs.len()
                    && ours.iter().zip(theirs).all(|(a, b)| {
                        let unsized_ = a.as_ref().is_none_or(|a| a.parse::<i64>().is_err());
                        unsized_ && (k > 0 || value_dependent) || a == b
                    })
            });
            if !agrees {
                wrong.push(format!("{name}: {output}: ours {ours:?}, onnxruntime {theirs:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{} outputs shaped otherwise:\n{}", wrong.len(), wrong.join("\n"));
}
