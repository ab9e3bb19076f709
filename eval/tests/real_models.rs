//! The real-exporter models of `tests/corpus/real` run on fixed inputs, compared with the
//! outputs onnxruntime gave for them (`tests/fixtures/run/MODEL/`, written by
//! `gen_run_data.py`, with the onnxruntime version beside them). Tolerances: rtol 1e-3 and
//! atol 1e-4 (onnxruntime sums in another order, and these are whole networks); a float16
//! output atol 1e-3, float16's own (its values near 1 are 1e-3 apart, and a whole network
//! of float16 kernels that round each result drifts by a few of those). Which models
//! match, and why the others do not yet, is a snapshot; a panic fails.

use std::path::{Path, PathBuf};

use onnx_core::binary::read_model;
use onnx_eval::compare::value_difference;
use onnx_eval::{Plan, RunOptions, Tensor, Value};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn numbered(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    onnx_eval::stored::numbered(dir, prefix).unwrap_or_default()
}

fn tensor(path: &Path) -> (String, Tensor) {
    match onnx_eval::stored::read_value(path, None).expect("a TensorProto the evaluator reads") {
        (name, Value::Tensor(t)) => (name, t),
        (_, other) => panic!("{} holds {}", path.display(), other.describe()),
    }
}

fn run(model: &Path, data: &Path) -> Result<(), String> {
    let model = read_model(model).map_err(|e| e.to_string())?;
    run_read(&model, data)
}

fn run_read(model: &onnx_core::ir::Model, data: &Path) -> Result<(), String> {
    let plan = Plan::new(model).map_err(|e| e.to_string().replace('\n', "; "))?;
    let inputs = numbered(data, "input_").iter().map(|p| tensor(p)).map(|(n, t)| (n, Value::Tensor(t))).collect();
    let result = plan.run(inputs, &RunOptions::default()).map_err(|e| e.to_string())?;
    let declared = &plan.model.graphs[plan.main].outputs;
    for (k, (path, (name, got))) in numbered(data, "output_").iter().zip(&result.outputs).enumerate() {
        // Read as the output is declared: ZipMap's outputs are sequences of maps.
        let (_, want) = onnx_eval::stored::read_value(path, declared.get(k).and_then(|v| v.ty.as_ref()))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let half = matches!(&want, Value::Tensor(t) if t.data_type() == onnx_core::ir::DataType::Float16);
        let atol = if half { 1e-3 } else { 1e-4 };
        if let Some(e) = value_difference(got, &want, 1e-3, atol) {
            return Err(format!("output '{name}': {e}"));
        }
    }
    Ok(())
}

/// Runs every model of `corpus` that has golden data in `fixtures` (a folder per model),
/// and says per model whether it matches onnxruntime, or why not.
fn corpus_results(corpus: &str, fixtures: &str) -> (usize, usize, Vec<String>) {
    let fixtures = root().join(fixtures);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .unwrap_or_else(|e| panic!("{}: {e}", fixtures.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut lines = Vec::new();
    let mut matched = 0;
    for dir in &dirs {
        let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let model = root().join(corpus).join(format!("{name}.onnx"));
        match std::panic::catch_unwind(|| run(&model, dir)) {
            Ok(Ok(())) => {
                matched += 1;
                lines.push(format!("{name}: matches"));
            }
            Ok(Err(e)) => lines.push(format!("{name}: {}", e.chars().take(200).collect::<String>())),
            Err(_) => panic!("the evaluator panicked on {name}"),
        }
    }
    (matched, dirs.len(), lines)
}

#[test]
fn real_models_match_onnxruntime() {
    let (matched, total, lines) = corpus_results("tests/corpus/real", "tests/fixtures/run");
    assert!(total >= 8, "only {total} real models have golden data");
    insta::assert_snapshot!("results", format!("{matched} of {total} match\n\n{}", lines.join("\n")));
}

/// The models onnxruntime's optimizers and quantizers write (`tests/corpus/contrib`, with
/// `com.microsoft` operators), against onnxruntime's outputs (`tests/fixtures/run_contrib`).
#[test]
fn contrib_models_match_onnxruntime() {
    let (matched, total, lines) = corpus_results("tests/corpus/contrib", "tests/fixtures/run_contrib");
    assert!(total >= 10, "only {total} contrib models have golden data");
    insta::assert_snapshot!("contrib_results", format!("{matched} of {total} match\n\n{}", lines.join("\n")));
}

/// A model whose weights live in a side file `onnx convert --external-data` wrote (each
/// tensor at an aligned offset) runs them where they lie in the mapped file: no initializer
/// of the side file is copied, and the results are the same.
#[test]
fn weights_in_an_aligned_side_file_are_used_where_they_lie() {
    let name = "ortquant_smart_turn_v3_2";
    let source = root().join("tests/corpus/real").join(format!("{name}.onnx"));
    let mut model = read_model(&source).expect("the corpus model");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let threshold = 1024;
    let moved = onnx_core::external::externalize(&mut model, dir.path(), "weights.bin", threshold).expect("written");
    assert!(moved > 50, "only {moved} tensors moved");
    let path = dir.path().join("model.onnx");
    std::fs::write(&path, onnx_core::binary::encode_model(&model)).expect("model written");

    let mut reread = read_model(&path).expect("the model reads back");
    onnx_core::external::embed_all(&mut reread, Some(dir.path().to_owned())).expect("side file read");
    let plan = Plan::new(&reread).expect("plannable");
    let held = plan.initializer_bytes();
    let side_file = std::fs::metadata(dir.path().join("weights.bin")).expect("side file").len() as usize;
    // Everything in the side file is in place; what is copied is the small tensors left in
    // the model (under the threshold each).
    assert!(held.in_place + 64 * moved >= side_file, "{held:?} of a {side_file}-byte side file");
    let small: usize = reread.graphs[reread.graph.expect("a graph")]
        .initializers
        .iter()
        .map(|&t| reread.tensors[t].expected_raw_size().unwrap_or(0) as usize)
        .filter(|&n| n < threshold as usize)
        .sum();
    assert!(held.copied <= small, "{held:?}: more copied than the {small} bytes of small tensors");
    run_read(&reread, &root().join("tests/fixtures/run").join(name)).expect("the same outputs");
}

/// Quantized weights decoded once when the plan is made (MatMulNBits, QMoE) give the same
/// outputs, bit for bit, as when the plan's budget for such forms is 0 and they are decoded
/// on every run; and the plan holds a form for each such node only with a budget.
#[test]
fn weights_decoded_once_give_what_decoding_on_each_run_gives() {
    for name in ["llama_genai_int4", "gptoss_genai_int4", "llama_genai_int4_asym", "llama_ts_opt_hqq"] {
        let model = read_model(&root().join("tests/corpus/contrib").join(format!("{name}.onnx"))).expect(name);
        let inputs: Vec<(String, Value)> = numbered(&root().join("tests/fixtures/run_contrib").join(name), "input_")
            .iter()
            .map(|p| tensor(p))
            .map(|(n, t)| (n, Value::Tensor(t)))
            .collect();
        let outputs = |budget: Option<usize>| {
            let options = onnx_eval::PlanOptions { prepared_budget: budget, ..Default::default() };
            let plan = Plan::with_options(&model, &options).expect(name);
            let decoded_once = plan.prepared.values().count();
            let result = plan.run(inputs.clone(), &RunOptions::default()).expect(name);
            (decoded_once, result.outputs)
        };
        let (prepared, once) = outputs(None);
        let (none, each_run) = outputs(Some(0));
        assert!(prepared > 0, "{name}: no node's weights were decoded when the plan was made");
        // With no budget, what is left is the marker of constant weights (no bytes).
        assert!(none <= prepared, "{name}: {none} forms with no budget");
        for ((n, a), (_, b)) in once.iter().zip(&each_run) {
            assert_eq!(
                format!("{:?}", a.tensor().map(|t| t.to_f64s().unwrap_or_default())),
                format!("{:?}", b.tensor().map(|t| t.to_f64s().unwrap_or_default())),
                "{name}: output {n} differs"
            );
        }
    }
}
