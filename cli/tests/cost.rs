//! `onnx cost` against onnx-tool 1.0.1 (`tests/fixtures/cost/gen_cost_cases.py` recorded what
//! it reports for every corpus model it can profile, at the inputs of the committed run
//! data), and on models whose counts are worked out by hand.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn onnx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_onnx")).args(args).output().unwrap()
}

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn cost_json(args: &[&str]) -> Value {
    let mut all = vec!["cost"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = onnx(&all);
    assert!(out.status.success(), "onnx {all:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Operators whose MACs we count otherwise than onnx-tool, on purpose (docs/cost.md):
/// their nodes are left out of the per-node comparison and of the totals compared.
const COUNTED_OTHERWISE: [(&str, &str); 4] = [
    ("ConvTranspose", "onnx-tool multiplies the output's elements, not the input's: ×stride² too many"),
    ("GRU", "onnx-tool leaves out the second direction of a bidirectional layer's gate updates"),
    ("Tanh", "onnx-tool counts each element's tanh twice"),
    ("Erf", "onnx-tool counts Erf as free"),
];

/// Every node onnx-tool profiles gets the same MACs, parameters and memory from us, except
/// where docs/cost.md says why: the operators above, and scalars (onnx-tool's volume of a
/// 0-d shape is 0, so a scalar output costs nothing and a scalar initializer is no
/// parameter: the recorder notes them, and parameters and memory are compared with them
/// added back). Totals over the nodes compared are then within 1%, and Conv, Gemm and
/// MatMul nodes are compared exactly.
#[test]
fn counts_are_onnx_tools_on_the_corpus() {
    let reference: Value =
        serde_json::from_str(&std::fs::read_to_string(repo("tests/fixtures/cost/onnx_tool.json")).unwrap()).unwrap();
    let mut failures = Vec::new();
    let (mut models, mut products) = (0, 0);
    for (stem, case) in reference["cases"].as_object().unwrap() {
        if case.get("error").is_some() {
            continue;
        }
        models += 1;
        let model = repo(case["model"].as_str().unwrap());
        let settings: Vec<String> = case["inputs"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(name, dims)| {
                let dims: Vec<String> = dims.as_array().unwrap().iter().map(|d| d.to_string()).collect();
                format!("{name}:{}", dims.join(","))
            })
            .collect();
        let mut args = vec![model.to_str().unwrap()];
        args.extend(settings.iter().map(String::as_str));
        let ours = cost_json(&args);
        let by_output: HashMap<&str, &Value> =
            ours["nodes"].as_array().unwrap().iter().map(|n| (n["output"].as_str().unwrap_or(""), n)).collect();
        let (mut our_total, mut their_total) = (0i64, 0i64);
        for node in case["nodes"].as_array().unwrap() {
            let n = node.as_array().unwrap();
            let (output, op) = (n[0].as_str().unwrap(), n[1].as_str().unwrap());
            let (macs, params, memory) = (n[2].as_i64().unwrap(), n[3].as_i64().unwrap(), n[4].as_i64().unwrap());
            let (scalar, scalar_params, scalar_bytes) =
                (n[5].as_bool().unwrap(), n[6].as_i64().unwrap(), n[7].as_i64().unwrap());
            let Some(mine) = by_output.get(output) else {
                failures.push(format!("{stem}: no node makes {output}"));
                continue;
            };
            let mut differ = |what: &str, theirs: i64, ours: &Value| {
                if ours.as_i64() != Some(theirs) {
                    failures.push(format!("{stem}: {op} {output}: {what} {ours} where onnx-tool has {theirs}"));
                }
            };
            differ("parameters", params + scalar_params, &mine["params"]);
            if scalar {
                continue;
            }
            let our_memory = mine["param_bytes"].as_i64().zip(mine["output_bytes"].as_i64()).map(|(p, o)| p + o);
            differ("memory", memory + scalar_bytes, &our_memory.map_or(Value::Null, Value::from));
            if COUNTED_OTHERWISE.iter().any(|(o, _)| *o == op) {
                continue;
            }
            differ("MACs", macs, &mine["macs"]);
            products += usize::from(matches!(op, "Conv" | "Gemm" | "MatMul"));
            our_total += mine["macs"].as_i64().unwrap_or(0);
            their_total += macs;
        }
        if (our_total - their_total).abs() * 100 > their_total {
            failures.push(format!("{stem}: {our_total} MACs in all where onnx-tool has {their_total}"));
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
    // The comparison covers what the bar names: a model that stopped profiling, or lost its
    // products, shows here.
    assert!(models >= 15, "onnx-tool profiled only {models} models");
    assert!(products >= 350, "only {products} Conv, Gemm and MatMul nodes compared");
}

/// A model with symbolic dimensions gets formulas in them; fixed, the same formulas give
/// the numbers.
#[test]
fn symbolic_dimensions_give_formulas_that_fixing_evaluates() {
    let model = repo("tests/corpus/contrib/bert_ts_opt.onnx");
    let model = model.to_str().unwrap();
    let symbolic = cost_json(&[model]);
    assert_eq!(symbolic["macs"], "272*batch*sequence^2 + 22,641*batch*sequence + 2,272*batch");
    let fixed = cost_json(&[model, "batch=2", "sequence=7"]);
    assert_eq!(fixed["macs"], 272 * 2 * 49 + 22_641 * 2 * 7 + 2_272 * 2);
    assert!(symbolic["peak_bytes"].is_null());
    assert!(fixed["peak_bytes"].as_i64().unwrap() > 0);
}

/// The peak of live activations, worked out by hand (4,000 bytes a value): x lives until its
/// last reader, the second Relu, where x, a and b are live (12,000 bytes, the peak first
/// reached); at the Add, a, b and c; at the Sigmoid, c and y.
#[test]
fn peak_memory_follows_each_values_last_use() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.onnxtxt");
    std::fs::write(
        &path,
        "<ir_version: 8, opset_import: [\"\" : 17]>\n\
         g (float[1000] x) => (float[1000] y) {\n\
           a = Relu (x)\n\
           b = Relu (x)\n\
           c = Add (a, b)\n\
           y = Sigmoid (c)\n\
         }\n",
    )
    .unwrap();
    let cost = cost_json(&[path.to_str().unwrap()]);
    // Relu 1 per element, Add 1, Sigmoid an exponential (32).
    assert_eq!(cost["macs"], 1000 + 1000 + 1000 + 32_000);
    assert_eq!(cost["activation_bytes"], 16_000);
    assert_eq!(cost["peak_bytes"], 12_000);
    assert_eq!(cost["peak_at"], 1);
    assert_eq!(cost["peak_node"], Value::Null);
}

/// What cannot be counted is said, per node and in the totals, never a silent zero.
#[test]
fn nodes_without_a_count_are_named() {
    let model = repo("tests/corpus/real/p2o_slanet_loop.onnx");
    let cost = cost_json(&[model.to_str().unwrap()]);
    let loops: Vec<&Value> = cost["nodes"].as_array().unwrap().iter().filter(|n| n["op"] == "Loop").collect();
    assert!(!loops.is_empty());
    for l in &loops {
        assert_eq!(l["not_counted"], "subgraphs");
        assert!(l["macs"].is_null());
    }
    assert!(cost["not_counted"].as_i64().unwrap() >= loops.len() as i64);
}
