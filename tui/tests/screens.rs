//! Snapshots of every screen and overlay, drawn into ratatui's test backend at two
//! terminal sizes (a diff in a `.snap` file shows what a change did to the screen), and the
//! proof that a model's hostile strings reach no cell as control characters.

mod common;

use std::time::Duration;

use common::{keys, open, screen};
use onnx_view::app::{App, RunState};

const SIZES: [(u16, u16); 2] = [(100, 30), (80, 24)];

fn snap(name: &str, app: &mut App) {
    for (w, h) in SIZES {
        let text = screen(app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
    }
}

/// A run whose times are fixed, so the screens that show them can be compared.
fn ran(fixture: &str) -> App {
    let mut app = open(fixture);
    keys(&mut app, "r<Enter>");
    let RunState::Done(o) = &mut app.run else { panic!("the run ended: {:?}", app.run) };
    for (k, t) in o.timings.iter_mut().enumerate() {
        t.1 = Duration::from_micros(250 * (k as u64 + 1));
    }
    // Inside subgraphs: fixed too, in node order.
    let mut nested: Vec<_> = o.nested_timings.keys().copied().collect();
    nested.sort_by_key(|n| n.into_raw());
    for (k, n) in nested.into_iter().enumerate() {
        o.nested_timings.insert(n, Duration::from_micros(10 * (k as u64 + 1)));
    }
    o.total = o.timings.iter().map(|t| t.1).sum();
    o.runs = 4;
    app.flash = None;
    app
}

#[test]
fn graph_screen_and_its_detail_tabs() {
    let mut app = open("conv_relu.onnxtxt");
    snap("graph_node", &mut app);
    keys(&mut app, "]");
    snap("graph_schema", &mut app);
    keys(&mut app, "]");
    snap("graph_text", &mut app);
}

#[test]
fn graph_screen_after_a_run_shows_times() {
    let mut app = ran("conv_relu.onnxtxt");
    keys(&mut app, "1");
    snap("graph_after_run", &mut app);
}

#[test]
fn values_tree_diagnostics_model() {
    let mut app = open("conv_relu.onnxtxt");
    keys(&mut app, "2");
    snap("values", &mut app);
    keys(&mut app, "6");
    snap("model", &mut app);
    let mut app = open("control.onnxtxt");
    keys(&mut app, "3");
    snap("tree", &mut app);
    let mut app = open("broken.onnxtxt");
    keys(&mut app, "4");
    snap("diagnostics", &mut app);
}

#[test]
fn run_screen_before_and_after() {
    let mut app = open("control.onnxtxt");
    keys(&mut app, "5");
    snap("run_idle", &mut app);
    let mut app = ran("control.onnxtxt");
    keys(&mut app, "5");
    snap("run_done", &mut app);
}

#[test]
fn overlays() {
    let mut app = open("conv_relu.onnxtxt");
    keys(&mut app, "?");
    snap("help", &mut app);
    let mut app = open("control.onnxtxt");
    keys(&mut app, "/ab");
    snap("search", &mut app);
    let mut app = open("conv_relu.onnxtxt");
    keys(&mut app, "p");
    snap("chooser", &mut app);
    let mut app = open("dynamic.onnxtxt");
    keys(&mut app, "r");
    snap("run_dialog", &mut app);
    let mut app = open("conv_relu.onnxtxt");
    keys(&mut app, "2j<Enter>");
    snap("viewer", &mut app);
}

#[test]
fn a_small_terminal_gets_one_line_not_a_broken_layout() {
    let mut app = open("conv_relu.onnxtxt");
    assert_eq!(screen(&mut app, 40, 10).lines().next(), Some("terminal too small: 40x10"));
}

#[test]
fn hostile_strings_reach_no_cell_as_control_characters() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // OSC 52 sets the clipboard, CSI 2J clears the screen; a bidi override; a byte that is
    // not UTF-8.
    let path = common::hostile_file(dir.path(), b"\x1b]52;c;ZXZpbA==\x07\x1b[2Jevil\xe2\x80\xaename\xff");
    let mut app = common::open_path(&path, None);
    for script in ["", "]", "]", "2", "6", "/evil", "<Esc>?"] {
        keys(&mut app, script);
        let text = screen(&mut app, 120, 30);
        let bad: Vec<char> = text.chars().filter(|c| *c != '\n' && (c.is_control() || *c == '\u{202e}')).collect();
        assert!(bad.is_empty(), "after {script:?}: {bad:?} in\n{text}");
    }
    keys(&mut app, "<Esc>1");
    let text = screen(&mut app, 120, 30);
    assert!(text.contains("\\x1b]52;c;ZXZpbA==\\x07\\x1b[2Jevil\\u{202e}name\\xff"), "shown escaped:\n{text}");
}

/// The Flow screen (7): the selected node's neighbourhood with its branch and merges.
#[test]
fn flow_screen_draws_branches_and_merges() {
    let mut app = open("branches.onnxtxt");
    keys(&mut app, "jjj7");
    snap("flow", &mut app);
}
