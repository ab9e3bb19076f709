//! Shared by the browser's tests: open a fixture as the binary does (then check it, as
//! the worker would after the first frame), type a key script, draw into a test backend.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use onnx_view::app::App;
use onnx_view::{keys, settle};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

pub fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// The app on a fixture, checked.
pub fn open(name: &str) -> App {
    open_path(&fixture(name), None)
}

pub fn open_path(path: &Path, test_data: Option<PathBuf>) -> App {
    let mut loaded = onnx_view::load::load(path).unwrap_or_else(|e| panic!("{e}"));
    // The path as a person would type it from the repository, not this checkout's place.
    loaded.label = path.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
    let mut app = App::new(loaded, test_data);
    onnx_view::check_now(&mut app);
    app
}

/// Types a key script (`/Relu<Enter>p`), doing the work each key starts before the next.
pub fn keys(app: &mut App, script: &str) {
    for key in keys::script(script) {
        app.key(keys::parse(&key));
        settle(app);
    }
}

/// The screen as text, one line per row, trailing spaces cut.
pub fn screen(app: &mut App, width: u16, height: u16) -> String {
    onnx_view::ui::set_color(false);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal.draw(|f| onnx_view::ui::draw(f, app)).expect("draws");
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        let mut line = String::new();
        for x in 0..width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The selected node's name.
pub fn selected_name(app: &App) -> String {
    let n = app.selected_node().expect("a node is selected");
    app.model.nodes[n].name.as_ref().map(ToString::to_string).unwrap_or_default()
}

/// The selected node's op type.
pub fn selected_op(app: &App) -> String {
    let n = app.selected_node().expect("a node is selected");
    app.model.nodes[n].op_type.as_ref().map(ToString::to_string).unwrap_or_default()
}

/// The Conv-Relu fixture with `evil` as its producer, doc string, first node's name and a
/// metadata entry: strings that carry terminal escapes.
pub fn hostile(evil: &[u8]) -> onnx_core::ir::Model {
    let mut model = onnx_view::load::load(&fixture("conv_relu.onnxtxt")).expect("loads").model;
    let evil = onnx_core::ir::Str::from(evil);
    model.producer_name = Some(evil.clone());
    model.doc_string = Some(evil.clone());
    let graph = model.graph.expect("a graph");
    let first = model.graphs[graph].nodes[0];
    model.nodes[first].name = Some(evil.clone());
    model.metadata_props.push(onnx_core::ir::StringPair { key: Some(evil.clone()), value: Some(evil) });
    model
}

/// [`hostile`] written as a binary model in `dir`.
pub fn hostile_file(dir: &Path, evil: &[u8]) -> PathBuf {
    let path = dir.join("hostile.onnx");
    std::fs::write(&path, onnx_core::binary::encode_model(&hostile(evil))).expect("written");
    path
}
