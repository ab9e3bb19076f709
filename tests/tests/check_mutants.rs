//! `onnx check` against onnx's full check and onnxruntime on mutants of real exported
//! models. `tests/fixtures/check/gen_mutants.py` changed one attribute of one node (or the
//! dims of one initializer) of each model of `corpus/real` at a time and recorded whether
//! onnx 1.23.2's `check_model(full_check=True)` and onnxruntime's loader accept each
//! mutant (`mutants.tsv`: the recipe, not the model). This test applies each recipe to the
//! model itself and runs our checks:
//!
//! * a mutant that both onnx and onnxruntime accept must pass (no false alarm), except
//!   those listed with a reason in `mutant_differences.tsv` (empty now: a node rule broken
//!   only on shapes our inference derives beyond onnx's is a warning, see
//!   `beyond_onnx_rules` in `core/src/infer/mod.rs`);
//! * a mutant that only onnxruntime rejects, because its kernels do not implement what the
//!   model asks (GRU with `layout = 1`, LRN of an even size), passes with the
//!   `unsupported-by-onnxruntime` warning (the verdict contract leaves such models valid);
//! * a mutant that either rejects must fail, except those listed in `mutant_gaps.tsv`: the
//!   rules onnx's inference functions enforce that ours does not yet (issue: checker
//!   parity). The list must stay true: a listed mutant we now reject fails the test until it
//!   is removed (`UPDATE_EXPECT=1` rewrites the list; review the diff).

use std::collections::BTreeSet;

use onnx_core::binary;
use onnx_core::check::{CheckOptions, is_valid};
use onnx_core::ir::{Attribute, AttributeType, Model, Str};
use onnx_core::pipeline::check_model;
use onnx_tests::tests_dir;
use serde_json::Value;

/// Applies one recipe; `None` when it names what the model does not have.
fn mutate(model: &mut Model, kind: &str, args: &Value) -> Option<()> {
    let main = model.graph?;
    if kind == "init_dims" {
        let name = args["initializer"].as_str()?;
        let dims: Vec<i64> = args["dims"].as_array()?.iter().map(Value::as_i64).collect::<Option<_>>()?;
        let id = *model.graphs[main]
            .initializers
            .iter()
            .find(|&&t| model.tensors[t].name.as_ref().is_some_and(|n| n == name))?;
        model.tensors[id].dims = dims;
        return Some(());
    }
    let index = usize::try_from(args["node"].as_u64()?).ok()?;
    let node_id = *model.graphs[main].nodes.get(index)?;
    let name = args["name"].as_str()?;
    let node = &mut model.nodes[node_id];
    // A replaced attribute keeps its place, as the generator replaced it.
    let at = node.attributes.iter().position(|a| a.name.as_ref().is_some_and(|n| n == name));
    let attribute =
        |ty: AttributeType| Attribute { name: Some(Str::from(name)), ty: Some(ty as i32), ..Attribute::default() };
    let value = &args["value"];
    let new = match kind {
        "remove" => {
            if let Some(i) = at {
                node.attributes.remove(i);
            }
            return Some(());
        }
        "set_int" => Attribute { i: Some(value.as_i64()?), ..attribute(AttributeType::Int) },
        "set_ints" => Attribute {
            ints: value.as_array()?.iter().map(Value::as_i64).collect::<Option<_>>()?,
            ..attribute(AttributeType::Ints)
        },
        "set_float" => Attribute { f: Some(value.as_f64()? as f32), ..attribute(AttributeType::Float) },
        "set_string" => Attribute { s: Some(Str::from(value.as_str()?)), ..attribute(AttributeType::String) },
        _ => return None,
    };
    match at {
        Some(i) => node.attributes[i] = new,
        None => node.attributes.push(new),
    }
    Some(())
}

#[test]
fn mutants_of_real_models_get_the_verdict_of_onnx_and_onnxruntime() {
    let table = std::fs::read_to_string(tests_dir().join("fixtures/check/mutants.tsv")).expect("mutants.tsv");
    let gaps_path = tests_dir().join("fixtures/check/mutant_gaps.tsv");
    let listed = onnx_tests::first_column(&gaps_path);
    let mut models: std::collections::HashMap<String, Model> = std::collections::HashMap::new();
    let (mut total, mut rejected_by_anchor, mut models_seen) = (0usize, 0usize, BTreeSet::new());
    let mut false_alarms = Vec::new();
    let mut gaps = Vec::new();
    let mut warned_unsupported = 0usize;
    for line in table.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [id, rel, kind, args, op, onnx, _, ort, ..] = cols[..] else { panic!("bad row: {line}") };
        let base = models
            .entry(rel.to_owned())
            .or_insert_with(|| binary::read_model(&tests_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}")));
        let mut model = base.clone();
        let args: Value = serde_json::from_str(args).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(mutate(&mut model, kind, &args).is_some(), "{id}: the recipe does not apply: {kind} {args}");
        let options = CheckOptions {
            model_dir: Some(binary::model_dir(&tests_dir().join(rel))),
            full_check: true,
            ..CheckOptions::default()
        };
        let diagnostics = check_model(&model, &options).diagnostics;
        let ours_valid = is_valid(&diagnostics);
        let anchors_reject = onnx == "invalid" || ort == "invalid";
        total += 1;
        models_seen.insert(rel.to_owned());
        rejected_by_anchor += usize::from(anchors_reject);
        match (anchors_reject, ours_valid) {
            (false, false) => {
                let codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
                false_alarms
                    .push(format!("{id} {kind} {args} on {op}: onnx and onnxruntime accept it, we say {codes:?}"));
            }
            // Refused by onnxruntime alone for what it does not implement: by the verdict
            // contract a warning that names the runtime, which `--strict` makes an error.
            (true, true) if onnx == "valid" && diagnostics.iter().any(|d| d.code == "unsupported-by-onnxruntime") => {
                warned_unsupported += 1;
            }
            (true, true) => gaps.push(format!("{id}\t{kind}\t{op}\t{onnx}\t{ort}")),
            _ => {}
        }
    }
    assert!(total >= 1000 && models_seen.len() >= 10, "{total} mutants of {} models", models_seen.len());
    let differences = onnx_tests::first_column(&tests_dir().join("fixtures/check/mutant_differences.tsv"));
    let alarm_ids: BTreeSet<String> =
        false_alarms.iter().filter_map(|a| a.split(' ').next().map(str::to_owned)).collect();
    let unexplained: Vec<&String> =
        false_alarms.iter().filter(|a| a.split(' ').next().is_none_or(|id| !differences.contains(id))).collect();
    assert!(unexplained.is_empty(), "{} false alarms:\n{unexplained:#?}", unexplained.len());
    let resolved: Vec<&String> = differences.difference(&alarm_ids).collect();
    assert!(resolved.is_empty(), "listed differences that now agree with onnx: remove them: {resolved:?}");
    let found: BTreeSet<String> = gaps.iter().filter_map(|g| g.split('\t').next().map(str::to_owned)).collect();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let header = "# mutants onnx or onnxruntime rejects and `onnx check` does not yet (see check_mutants.rs)\n\
                      # id\tkind\top\tonnx\tort\n";
        std::fs::write(&gaps_path, format!("{header}{}\n", gaps.join("\n"))).expect("writable");
        return;
    }
    let new: Vec<&String> = found.difference(&listed).collect();
    let closed: Vec<&String> = listed.difference(&found).collect();
    println!(
        "{total} mutants of {} models; {rejected_by_anchor} rejected by onnx or onnxruntime, {} of those accepted by us, \
         {warned_unsupported} warned as unsupported by onnxruntime",
        models_seen.len(),
        found.len()
    );
    assert!(new.is_empty(), "{} mutants onnx or onnxruntime rejects now pass our checks: {new:?}", new.len());
    assert!(closed.is_empty(), "{} listed gaps are closed: remove them (UPDATE_EXPECT=1): {closed:?}", closed.len());
}
