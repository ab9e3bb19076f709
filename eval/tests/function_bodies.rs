//! Every operator whose schema has a function body, run through that body instead of its
//! kernel (`PlanOptions::expand_function_bodies`), on onnx's backend node tests of that
//! operator, compared with onnx's expected outputs as the node tests compare them. This
//! checks the expansion the evaluator falls back to for operators without a kernel, and
//! checks each kernel against onnx's own definition. Which tests pass this way is a snapshot.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use onnx_core::binary::read_model;
use onnx_core::ir::Str;
use onnx_eval::compare::{ATOL, RTOL, value_difference};
use onnx_eval::stored::{numbered, read_value};
use onnx_eval::{Plan, PlanOptions, RunOptions};
use onnx_tests::node_tests_dir;

/// The operators of a model's main graph that have a schema function body at the version
/// the model imports.
fn bodied_ops(model: &onnx_core::ir::Model) -> Vec<String> {
    let Some(graph) = model.main_graph() else { return Vec::new() };
    graph
        .nodes
        .iter()
        .filter_map(|&n| {
            let node = &model.nodes[n];
            let domain = node.schema_domain()?;
            let op = node.op_type.as_ref().and_then(Str::as_str)?;
            let version = model.opset_version(domain).unwrap_or(1);
            let schema = onnx_core::schema::registry().lookup(domain, op, version)?;
            schema.function_body_at(version).map(|_| op.to_owned())
        })
        .collect()
}

/// Runs one node test with function bodies expanded; `Ok(bodies used)` when every output
/// matches.
fn run_expanded(dir: &Path, model: &onnx_core::ir::Model) -> Result<usize, String> {
    let options = PlanOptions { expand_function_bodies: true, ..Default::default() };
    let plan = Plan::with_options(model, &options).map_err(|e| e.to_string().replace('\n', "; "))?;
    let graph = &model.graphs[plan.main];
    let data = dir.join("test_data_set_0");
    let expected = plan.inputs();
    let mut inputs = Vec::new();
    for (i, path) in numbered(&data, "input_").map_err(|e| e.to_string())?.into_iter().enumerate() {
        let (name, _) = expected.get(i).ok_or("more inputs than the model has")?;
        let declared = graph.inputs.iter().find(|v| v.name.as_ref().is_some_and(|n| n.to_string() == *name));
        let (_, value) = read_value(&path, declared.and_then(|v| v.ty.as_ref()))?;
        inputs.push((name.clone(), value));
    }
    let result = plan.run(inputs, &RunOptions::default()).map_err(|e| e.to_string())?;
    for (i, path) in numbered(&data, "output_").map_err(|e| e.to_string())?.into_iter().enumerate() {
        let (name, got) = result.outputs.get(i).ok_or("fewer outputs than expected")?;
        let (_, want) = read_value(&path, graph.outputs.get(i).and_then(|v| v.ty.as_ref()))?;
        if let Some(e) = value_difference(got, &want, RTOL, ATOL) {
            return Err(format!("output '{name}': {e}"));
        }
    }
    Ok(plan.bodies.len())
}

#[test]
fn operators_run_through_their_function_bodies_match_the_node_tests() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(node_tests_dir())
        .expect("tests/corpus/node")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| !p.to_string_lossy().ends_with("_expanded"))
        .collect();
    dirs.sort();
    let (mut passed, mut lines, mut ops) = (0, Vec::new(), BTreeSet::new());
    for dir in &dirs {
        let Ok(model) = read_model(&dir.join("model.onnx")) else { continue };
        let bodied = bodied_ops(&model);
        if bodied.is_empty() {
            continue;
        }
        let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        match std::panic::catch_unwind(|| run_expanded(dir, &model)) {
            Ok(Ok(used)) => {
                assert!(used > 0, "{name}: no function body was used");
                passed += 1;
                ops.extend(bodied);
            }
            Ok(Err(e)) => lines.push(format!("{name}: {}", e.chars().take(200).collect::<String>())),
            Err(_) => panic!("the evaluator panicked on {name} with function bodies expanded"),
        }
    }
    let total = passed + lines.len();
    assert!(total >= 100, "only {total} node tests use an operator with a function body");
    let ops: Vec<String> = ops.into_iter().collect();
    insta::assert_snapshot!(
        "expanded",
        format!(
            "{passed} of {total} pass with function bodies expanded\noperators run through their bodies: {}\n\n{}",
            ops.join(", "),
            lines.join("\n")
        )
    );
}
