//! The browser on what a hand-edited or truncated file gives it: every screen draws, every
//! key works, and what is wrong is on the Diagnostics screen (issue 52: each of these inputs
//! made `onnx-view` panic from the tab line).

mod common;

use common::{keys, screen};
use onnx_view::app::App;

/// Inputs without a main graph, or whose text does not read: each opens.
fn broken_inputs() -> Vec<(&'static str, Vec<u8>)> {
    let valid = std::fs::read(common::fixture("conv_relu.onnxtxt")).expect("the fixture");
    let mut with_bad_line = valid.clone();
    with_bad_line.extend_from_slice(b"\ny = = = ,\n");
    vec![
        ("dollar.onnxtxt", b"$".to_vec()),
        ("bad_line.onnxtxt", with_bad_line),
        ("header.onnxtxt", b"<ir_version: 10, opset_import: [\"\" : 21]>\n".to_vec()),
        ("two_bytes.onnx", vec![0x08, 0x08]),
    ]
}

fn open_bytes(dir: &std::path::Path, name: &str, bytes: &[u8]) -> App {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("written");
    let loaded = onnx_view::load::load(&path).unwrap_or_else(|e| panic!("{name} opens: {e}"));
    let mut app = App::new(loaded, None);
    onnx_view::check_now(&mut app);
    app
}

#[test]
fn a_file_without_a_main_graph_opens_on_every_screen_and_takes_every_key() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (name, bytes) in broken_inputs() {
        let mut app = open_bytes(dir.path(), name, &bytes);
        for screen_key in ["1", "2", "3", "4", "5", "6"] {
            keys(&mut app, screen_key);
            for (w, h) in [(100, 30), (80, 24), (20, 5)] {
                screen(&mut app, w, h);
            }
            // Moving, opening, jumping, searching, running and going back on an empty list.
            keys(&mut app, "jkgGG<Enter>pcn]]<Tab><Esc><BackTab>/x<Enter><Esc>r<Enter><Esc>?<Esc><C-o><C-i>");
            screen(&mut app, 100, 30);
        }
    }
}

#[test]
fn what_is_wrong_with_a_broken_text_is_on_the_diagnostics_screen() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (name, bytes) in broken_inputs() {
        if name == "two_bytes.onnx" {
            continue;
        }
        let mut app = open_bytes(dir.path(), name, &bytes);
        assert!(app.counts().0 >= 1, "{name}: an error is reported");
        keys(&mut app, "4");
        let text = screen(&mut app, 100, 30);
        assert!(text.contains("error"), "{name}: the Diagnostics screen names the error:\n{text}");
    }
}

#[test]
fn a_run_past_its_memory_budget_fails_on_the_run_screen_and_the_browser_goes_on() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let text = br#"<ir_version: 10, opset_import: ["" : 21]>
main (float[1] x) => (float[?] a, float[?] b) <int64[1] n = {1048576}> {
    a = Expand (x, n)
    b = Expand (x, n)
}"#;
    let mut app = open_bytes(dir.path(), "two.onnxtxt", text);
    app.max_memory = 6 << 20;
    keys(&mut app, "r<Enter>");
    let onnx_view::app::RunState::Failed(why) = &app.run else { panic!("the run failed: {:?}", app.run) };
    assert!(why.contains("(Expand)") && why.contains("memory budget of 6.0 MiB"), "{why}");
    keys(&mut app, "5");
    let shown = screen(&mut app, 120, 30);
    assert!(shown.contains("budget of 6.0 MiB"), "the Run screen says why, wrapped:\n{shown}");
    // Within a bigger budget the same model runs.
    app.max_memory = 64 << 20;
    keys(&mut app, "r");
    assert!(matches!(app.run, onnx_view::app::RunState::Done(_)), "{:?}", app.run);
}
