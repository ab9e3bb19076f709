//! State and key-script tests: the browser's `App` driven through the real keymap on small
//! fixtures, without a terminal.

mod common;

use common::{keys, open, screen, selected_name, selected_op};
use onnx_view::app::{Overlay, RunState, Screen};
use onnx_view::index::Body;

#[test]
fn producer_and_consumer_jumps_walk_the_dataflow_with_history() {
    let mut app = open("conv_relu.onnxtxt");
    assert_eq!(app.counts(), (0, 0), "the fixture is valid");
    keys(&mut app, "j");
    assert_eq!(selected_op(&app), "Relu");
    keys(&mut app, "p");
    assert_eq!(selected_op(&app), "Conv", "p jumps to the producer of Relu's only input");
    keys(&mut app, "c");
    assert_eq!(selected_op(&app), "Relu", "c jumps to Conv's only consumer");
    keys(&mut app, "H");
    assert_eq!(selected_op(&app), "Conv", "back");
    keys(&mut app, "H");
    assert_eq!(selected_op(&app), "Relu", "back again");
    keys(&mut app, "L");
    assert_eq!(selected_op(&app), "Conv", "forward");
}

#[test]
fn an_input_with_several_producers_opens_a_chooser() {
    let mut app = open("conv_relu.onnxtxt");
    keys(&mut app, "p");
    let Some(Overlay::Chooser(c)) = app.overlays.last() else { panic!("Conv has three inputs: a chooser") };
    assert_eq!(c.items.len(), 3);
    keys(&mut app, "<Esc>");
    assert!(app.overlays.is_empty());
}

#[test]
fn search_finds_nodes_in_every_scope_and_enters_theirs() {
    let mut app = open("control.onnxtxt");
    keys(&mut app, "/Abs<Enter>");
    assert_eq!(selected_op(&app), "Abs");
    assert_eq!(app.index.scopes[app.scope].title, "If#0 ▸ else_branch", "the search left the main graph");
    keys(&mut app, "<Esc>");
    assert_eq!((app.scope, selected_op(&app).as_str()), (0, "If"), "Esc leaves the scope onto its holder");
    keys(&mut app, "/zzzzqqq<Enter>");
    assert_eq!(app.flash.as_deref(), Some("nothing matches 'zzzzqqq'"));
}

#[test]
fn enter_makes_a_subgraph_the_scope_and_the_tree_lists_every_scope() {
    let mut app = open("control.onnxtxt");
    let titles: Vec<&str> = app.index.scopes.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles, ["main", "If#0 ▸ then_branch", "If#0 ▸ else_branch", "Loop#1 ▸ body"]);
    keys(&mut app, "<Enter>");
    assert_eq!(selected_op(&app), "Neg");
    keys(&mut app, "<Esc>3jjj<Enter>");
    assert_eq!(app.screen, Screen::Graph);
    assert_eq!(app.index.scopes[app.scope].title, "Loop#1 ▸ body");
    assert_eq!(selected_op(&app), "Identity");
}

#[test]
fn functions_are_scopes_of_their_own() {
    let mut app = open("function.onnxtxt");
    let function = app.index.scopes.iter().position(|s| matches!(s.body, Body::Function(_))).expect("a function scope");
    assert_eq!(app.index.scopes[function].title, "local::Square");
    keys(&mut app, "3j<Enter>");
    assert_eq!(app.scope, function);
    assert_eq!(selected_op(&app), "Mul");
}

#[test]
fn findings_mark_their_nodes_and_enter_jumps_to_them() {
    let mut app = open("broken.onnxtxt");
    assert_eq!(app.counts().0, 2, "both errors found");
    let concat = app.nodes()[0];
    assert!(app.marks.contains_key(&concat), "the Concat node is marked");
    keys(&mut app, "4j<Enter>");
    assert_eq!(app.screen, Screen::Graph);
    assert_eq!(selected_op(&app), "Relu", "the second finding is the Relu's undefined input");
    keys(&mut app, "4e");
    assert_eq!(app.diagnostics().len(), 2, "errors only");
    keys(&mut app, "e");
    assert_eq!(app.diagnostics().len(), 0, "warnings only");
}

#[test]
fn gg_g_and_pages_move_within_the_list() {
    let mut app = open("control.onnxtxt");
    keys(&mut app, "G");
    assert_eq!(selected_op(&app), "Loop");
    keys(&mut app, "gg");
    assert_eq!(selected_op(&app), "If");
    keys(&mut app, "<PageDown>");
    assert_eq!(selected_op(&app), "Loop");
}

#[test]
fn a_run_times_every_node_and_keeps_every_value() {
    let mut app = open("control.onnxtxt");
    keys(&mut app, "r<Enter>");
    let RunState::Done(outcome) = &app.run else { panic!("the run ended: {:?}", app.run) };
    assert_eq!(outcome.timings.len(), 2);
    assert!(outcome.values.contains_key("y") && outcome.values.contains_key("z"));
    // The Loop added x to itself three times: z = 4x.
    let (x, z) = (&outcome.values["x"], &outcome.values["z"]);
    let (x, z) = (x.tensor().expect("x").to_f64s().expect("f"), z.tensor().expect("z").to_f64s().expect("f"));
    assert_eq!(z, x.iter().map(|v| (*v as f32 * 4.0) as f64).collect::<Vec<_>>());
    keys(&mut app, "2G<Enter>");
    let Some(Overlay::Viewer(v)) = app.overlays.last() else { panic!("Enter on a value opens the viewer") };
    assert_eq!(v.name, "z");
    assert!(matches!(v.stats, Some(Ok(_))), "statistics arrived");
}

#[test]
fn the_first_run_asks_how_to_make_inputs_and_symbolic_dimensions() {
    let mut app = common::open_path(&common::repo("tests/corpus/real/p2o_ppocrv5_det.onnx"), None);
    keys(&mut app, "r");
    let Some(Overlay::RunDialog(d)) = app.overlays.last() else { panic!("a run dialog") };
    assert_eq!(d.inputs.len(), 1);
    assert!(!d.dims.is_empty(), "the model's input has symbolic dimensions");
    keys(&mut app, "<Esc>");
    assert!(matches!(app.run, RunState::Idle));

    // dynamic.onnxtxt: x is float[N,2], k is int64[N].
    let mut app = open("dynamic.onnxtxt");
    keys(&mut app, "r");
    // x: zeros (Space goes random → file → zeros); k: random with seed 7; N = 3.
    keys(&mut app, "<Left><Down><Backspace>7<Down><Backspace>3<Enter>");
    let RunState::Done(o) = &app.run else { panic!("the run ended: {:?} {:?}", app.run, app.flash) };
    let x = o.values["x"].tensor().expect("x");
    assert_eq!((x.shape.clone(), x.to_f64s().expect("f")), (vec![3, 2], vec![0.0; 6]));
    assert_eq!(o.values["k"].tensor().expect("k").shape, vec![3]);
    // The next r runs again with the same choices, without asking.
    keys(&mut app, "r");
    assert!(app.overlays.is_empty() && matches!(app.run, RunState::Done(_)));
}

#[test]
fn run_inputs_can_come_from_npy_and_pb_files() {
    let mut app = common::open_path(&common::repo("tests/corpus/node/test_conv_with_strides_padding/model.onnx"), None);
    let x = common::repo("cli/tests/fixtures/npy/x.npy");
    let w = common::repo("tests/corpus/node/test_conv_with_strides_padding/test_data_set_0/input_1.pb");
    keys(&mut app, "r");
    keys(&mut app, &format!("<Right>{}<Down><Right>{}<Enter>", x.display(), w.display()));
    let RunState::Done(o) = &app.run else { panic!("the run ended: {:?} {:?}", app.run, app.flash) };
    let want = onnx_eval::stored::read_value(
        &common::repo("tests/corpus/node/test_conv_with_strides_padding/test_data_set_0/output_0.pb"),
        None,
    )
    .expect("expected output")
    .1;
    assert_eq!(onnx_eval::compare::value_difference(&o.outputs[0].1, &want, 1e-5, 1e-6), None);
    let mut app = common::open_path(&common::repo("tests/corpus/node/test_conv_with_strides_padding/model.onnx"), None);
    keys(&mut app, "r<Right><Enter>");
    assert_eq!(app.flash.as_deref(), Some("'x' needs a file (.pb or .npy)"));
    assert!(matches!(app.run, RunState::Idle), "nothing ran");
}

#[test]
fn a_run_with_test_data_compares_with_the_expected_outputs() {
    let model = common::repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let data = common::repo("tests/fixtures/run/cntk_mnist_conv");
    let mut app = common::open_path(&model, Some(data));
    keys(&mut app, "r");
    let RunState::Done(outcome) = &app.run else { panic!("the run ended: {:?}", app.run) };
    assert_eq!(outcome.comparison.len(), 1);
    assert_eq!(outcome.comparison[0].difference, None, "onnxruntime's output is matched");
    assert!(outcome.comparison[0].largest_error.is_some_and(|e| e < 1e-4));
    assert_eq!(app.flash.as_deref().map(|f| f.ends_with("all 1 outputs match")), Some(true), "{:?}", app.flash);
}

/// The run dialog's choice is what runs, even with test data (issue 56, defect 1).
#[test]
fn a_dialog_choice_replaces_the_test_datas_input() {
    let model = common::repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let data = common::repo("tests/fixtures/run/cntk_mnist_conv");
    let mut app = common::open_path(&model, Some(data));
    keys(&mut app, "R<Right><Enter>");
    let RunState::Done(outcome) = &app.run else { panic!("the run ended: {:?} {:?}", app.run, app.flash) };
    let input = outcome.values["Input3"].tensor().expect("a tensor").to_f64s().expect("numbers");
    assert!(input.iter().all(|&v| v == 0.0), "the input is zeros, as chosen");
    assert!(outcome.comparison.is_empty(), "outputs of other inputs are not compared");
    assert!(outcome.not_compared.as_deref().is_some_and(|w| w.contains("'Input3' chosen in the run dialog")));
}

#[test]
fn initializers_open_in_the_viewer_without_a_run() {
    let mut app = open("conv_relu.onnxtxt");
    keys(&mut app, "2jj<Enter>");
    let Some(Overlay::Viewer(v)) = app.overlays.last() else { panic!("the viewer: {:?}", app.flash) };
    assert_eq!(v.name, "b");
    let Some(Ok(stats)) = &v.stats else { panic!("statistics") };
    assert_eq!((stats.min, stats.max), (Some((-0.25, 1)), Some((0.5, 0))));
}

#[test]
fn a_text_with_syntax_errors_opens_with_its_diagnostics() {
    let mut app = open("syntax_error.onnxtxt");
    assert!(app.counts().0 >= 1, "the syntax error is reported");
    assert_eq!(selected_op(&app), "Relu", "what parsed is shown");
    keys(&mut app, "4");
    let first = &app.diagnostics()[0];
    assert!(first.place.starts_with("line 5:"), "placed in the text: {}", first.place);
}

#[test]
fn a_run_can_be_cancelled_and_a_node_output_viewed_after_a_run() {
    let model = common::repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let data = common::repo("tests/fixtures/run/cntk_mnist_conv");
    let mut app = common::open_path(&model, Some(data));
    // r queues the run, x sets its cancel flag before the worker starts it.
    app.key(onnx_view::keys::parse("r"));
    app.key(onnx_view::keys::parse("x"));
    onnx_view::settle(&mut app);
    assert!(matches!(app.run, RunState::Cancelled), "cancelled, not failed: {:?}", app.run);
    assert_eq!(app.flash.as_deref(), Some("run cancelled: r runs again"));
    keys(&mut app, "v");
    assert_eq!(app.flash.as_deref().map(|f| f.contains("run the model")), Some(true), "{:?}", app.flash);
    keys(&mut app, "rjv");
    let Some(Overlay::Viewer(v)) = app.overlays.last() else { panic!("the viewer: {:?}", app.flash) };
    assert_eq!(v.name, "Convolution28_Output_0");
    assert_eq!(v.tensor.shape, vec![1, 8, 28, 28]);
}

#[test]
fn a_worker_that_panics_is_reported_not_waited_for() {
    let mut app = open("conv_relu.onnxtxt");
    app.key(onnx_view::keys::parse("r"));
    app.key(onnx_view::keys::parse("Enter"));
    app.effects.clear();
    assert!(matches!(app.run, RunState::Running { .. }));
    let (tx, rx) = crossbeam_channel::unbounded();
    onnx_view::worker::spawn(&tx, "run", || panic!("kernel bug"));
    app.report(rx.recv().expect("a report"));
    let RunState::Failed(why) = &app.run else { panic!("failed: {:?}", app.run) };
    assert_eq!(why, "internal error in the run: kernel bug (please report it)");
}

/// Issue 56: `op:`, `name:`, `shape:` and `in:` narrow the search, all together and with the
/// fuzzy text; `n` walks the hits they leave.
#[test]
fn prefixed_terms_narrow_the_search() {
    let mut app = open("conv_relu.onnxtxt");
    keys(&mut app, "j/op:CONV<Enter>");
    assert_eq!(selected_op(&app), "Conv", "op: is the operator, in any case");
    // Both nodes compute float[1,2,4,4] (the Conv's by inference only).
    keys(&mut app, "/shape:1,2,4<Enter>n");
    assert_eq!(app.flash.as_deref(), Some("hit 2 of 2"));
    keys(&mut app, "/op:Relu shape:1,2<Enter>");
    assert_eq!(selected_op(&app), "Relu");
    keys(&mut app, "/shape:2,1,3,3<Enter>");
    assert_eq!(app.screen, Screen::Values, "an initializer by its shape");
    keys(&mut app, "/op:conv y<Enter>");
    assert_eq!(app.flash.as_deref(), Some("nothing matches 'op:conv y'"), "AND with the fuzzy text");
    keys(&mut app, "1j/name:C<Enter>");
    assert_eq!(selected_op(&app), "Conv", "name: is a node's output's name too, in any case");
    keys(&mut app, "/shape:float[2]<Enter>n");
    assert_eq!(app.flash.as_deref(), Some("hit 1 of 1"), "b's float[2], not w's float[2,1,3,3]");

    let mut app = open("control.onnxtxt");
    keys(&mut app, "/in:body op:add<Enter>");
    assert_eq!(app.index.scopes[app.scope].title, "Loop#1 ▸ body");
    assert_eq!(selected_op(&app), "Add");
    keys(&mut app, "/in:else<Enter>n");
    assert_eq!(selected_op(&app), "Abs", "the else branch's Abs and nothing of the then branch");
    assert_eq!(app.flash.as_deref(), Some("hit 1 of 1"));
    keys(&mut app, "/in:branch<Enter>n");
    assert_eq!(app.flash.as_deref(), Some("hit 2 of 2"), "both branches");
    keys(&mut app, "/name:trip<Enter>");
    assert_eq!(app.screen, Screen::Values, "name: finds values too");
}

/// The search's `shape:` uses inference's types where a value declares none, and the
/// declared ones before inference has run.
#[test]
fn shape_terms_use_inferred_types_once_there_are_some() {
    let app = open("conv_relu.onnxtxt");
    let mut hay = onnx_view::search::Haystack::new(&app.model, &app.index);
    let declared = hay.find(&app.model, None, "shape:1,2,4,4");
    let labels: Vec<&str> = declared.iter().map(|h| h.label.as_str()).collect();
    assert_eq!(labels, ["Relu y : float[1,2,4,4]"], "only the graph output declares its type");
    let types = std::sync::Arc::new(onnx_core::infer::infer_model(&app.model));
    let inferred = hay.find(&app.model, Some(&types), "shape:1,2,4,4");
    let labels: Vec<&str> = inferred.iter().map(|h| h.label.as_str()).collect();
    assert_eq!(labels, ["Conv c : float[1,2,4,4]", "Relu y : float[1,2,4,4]"]);
    assert!(hay.find(&app.model, Some(&types), "op:").is_empty(), "a bare prefix narrows nothing and finds nothing");
}

/// Issue 56: `s` sorts the Values screen largest first and back; elsewhere it says where it
/// works.
#[test]
fn s_sorts_values_by_size() {
    let mut app = open("conv_relu.onnxtxt");
    keys(&mut app, "s");
    assert_eq!(app.flash.as_deref(), Some("s sorts the Values screen (2)"));
    keys(&mut app, "2");
    let text = common::screen(&mut app, 100, 30);
    assert!(text.contains("values · model order · 1 of 5"), "{text}");
    keys(&mut app, "s");
    let text = common::screen(&mut app, 100, 30);
    let first = text.lines().find(|l| l.contains('›')).expect("a selected row");
    assert!(text.contains("values · largest first · 4 of 5") && first.contains("x"), "x stays selected:\n{text}");
    // c and y are float[1,2,4,4] (128 B), w 72 B, x 64 B, b 8 B.
    let kinds = ["input ", "initializer ", "value ", "output "];
    let rows: Vec<String> = text.lines().map(|l| l.chars().skip(2).collect()).collect();
    let order: Vec<&str> = rows
        .iter()
        .filter(|l| kinds.iter().any(|k| l.starts_with(k)))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(order, ["c", "y", "w", "x", "b"], "{text}");
}

/// Issue 56: the Schema tab marks variadic inputs.
#[test]
fn the_schema_tab_marks_variadic_inputs() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("concat.onnxtxt");
    let text = "<ir_version: 10, opset_import: [\"\" : 21]>\ncat (float[2] x) => (float[4] y) {\n  y = Concat <axis = 0> (x, x)\n}\n";
    std::fs::write(&path, text).expect("written");
    let mut app = common::open_path(&path, None);
    keys(&mut app, "]");
    let text = common::screen(&mut app, 120, 30);
    assert!(text.contains("inputs : T, variadic, at least 1"), "{text}");
    assert!(text.contains("axis : int, required"), "{text}");
}

/// Issue 58: `:diff FILE` lists what changed from the open model to FILE's, and each change
/// goes to its node here; one only the other model has says so.
#[test]
fn diff_lists_the_changes_and_goes_to_them() {
    let mut app = common::open_path(&common::repo("cli/tests/fixtures/commands/diff_before.onnxtxt"), None);
    let after = common::repo("cli/tests/fixtures/commands/diff_after.onnxtxt");
    keys(&mut app, &format!(":diff {}<Enter>", after.display()));
    let shown = screen(&mut app, 140, 30);
    assert!(shown.contains("9 changes against"), "{shown}");
    assert!(shown.contains("~ node \"relu\" (Relu): operator Relu → Sigmoid"), "{shown}");
    // The changes in order: opset, input, initializer w, initializer b2 (added), conv, relu.
    keys(&mut app, "jjjjj<Enter>");
    assert_eq!(selected_name(&app), "relu");
    assert_eq!(selected_op(&app), "Relu");
    // The Softmax only the second model has.
    keys(&mut app, &format!(":diff {}<Enter>jjjjjj<Enter>", after.display()));
    let shown = screen(&mut app, 140, 30);
    assert!(shown.contains("only the other model has it"), "{shown}");
    keys(
        &mut app,
        &format!("<Esc>:diff {}<Enter>", common::repo("cli/tests/fixtures/commands/diff_before.onnxtxt").display()),
    );
    assert!(screen(&mut app, 140, 30).contains("no differences with"));
}

/// Issue 58: `:opset N [FILE]` writes the model converted to opset N, or lists the nodes that
/// block it, each a place to go to.
#[test]
fn opset_writes_the_converted_model_or_lists_what_blocks_it() {
    let model = common::repo("cli/tests/fixtures/commands/opset_model.onnxtxt");
    let mut app = common::open_path(&model, None);
    // Down to 9: GridSample exists only from 16, and the chooser goes to it.
    keys(&mut app, ":opset 9<Enter>");
    let shown = screen(&mut app, 140, 30);
    assert!(shown.contains("1 node block opset 20 → 9"), "{shown}");
    assert!(shown.contains("GridSample exists only from opset 16"), "{shown}");
    keys(&mut app, "<Enter>");
    assert_eq!(selected_name(&app), "sample");
    // Down to 16 it converts and writes a new file, never over one.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("old.onnx");
    keys(&mut app, &format!(":opset 16 {}<Enter>", out.display()));
    assert!(screen(&mut app, 200, 30).contains("opset 20 → 16"), "{}", screen(&mut app, 200, 30));
    let written = onnx_core::binary::read_model(&out).expect("a model written");
    assert_eq!(written.opset_version(""), Some(16));
    keys(&mut app, &format!(":opset 16 {}<Enter>", out.display()));
    assert!(dir.path().join("old-2.onnx").exists(), "the second conversion took a free name");
}
