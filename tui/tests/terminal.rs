//! End to end: the real `onnx-view` binary in a pseudo-terminal, driven by keys, its screen
//! read back through a terminal emulator (vt100), as a person would see it.

mod common;

use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

const ROWS: u16 = 30;
const COLS: u16 = 100;
const PATIENCE: Duration = Duration::from_secs(20);

/// The binary running in a terminal of its own.
struct Session {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    keys: Box<dyn Write + Send>,
    output: mpsc::Receiver<Vec<u8>>,
    screen: vt100::Parser,
    raw: Vec<u8>,
}

impl Session {
    fn start(args: &[&std::path::Path]) -> Session {
        Session::start_with(args, &[])
    }

    fn start_with(args: &[&std::path::Path], env: &[(&str, &str)]) -> Session {
        Session::start_in(None, args, env)
    }

    /// Started in directory `cwd` (where exports go).
    fn start_in(cwd: Option<&std::path::Path>, args: &[&std::path::Path], env: &[(&str, &str)]) -> Session {
        let pty = native_pty_system()
            .openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })
            .expect("a pseudo-terminal");
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_onnx-view"));
        for a in args {
            command.arg(a);
        }
        if let Some(dir) = cwd {
            command.cwd(dir);
        }
        command.env("NO_COLOR", "1");
        command.env("TERM", "xterm-256color");
        for (k, v) in env {
            command.env(k, v);
        }
        let child = pty.slave.spawn_command(command).expect("onnx-view starts");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("a reader");
        let keys = pty.master.take_writer().expect("a writer");
        // The terminal's output is drained on a thread so the program never blocks on it.
        let (tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let _master = pty.master;
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Session { child, keys, output, screen: vt100::Parser::new(ROWS, COLS, 0), raw: Vec::new() }
    }

    fn pump(&mut self, wait: Duration) {
        if let Ok(bytes) = self.output.recv_timeout(wait) {
            self.screen.process(&bytes);
            self.raw.extend_from_slice(&bytes);
        }
    }

    /// Waits until the screen shows `text`.
    fn wait_for(&mut self, text: &str) -> String {
        let started = Instant::now();
        loop {
            let contents = self.screen.screen().contents();
            if contents.contains(text) {
                return contents;
            }
            assert!(started.elapsed() < PATIENCE, "waited for {text:?}; the screen shows:\n{contents}");
            self.pump(Duration::from_millis(50));
        }
    }

    /// Esc, then a pause: a key sent right after it would read as Alt and that key.
    fn escape(&mut self) {
        self.type_keys("\x1b");
        let until = Instant::now() + Duration::from_millis(300);
        while Instant::now() < until {
            self.pump(Duration::from_millis(50));
        }
    }

    fn type_keys(&mut self, keys: &str) {
        self.keys.write_all(keys.as_bytes()).expect("keys sent");
        self.keys.flush().expect("keys flushed");
    }

    /// Quits with `q` and returns the exit code.
    fn quit(mut self) -> (u32, Vec<u8>) {
        self.type_keys("q");
        self.exit()
    }

    /// Waits for the program to end; its exit code and everything it wrote.
    fn exit(mut self) -> (u32, Vec<u8>) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("status") {
                while let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(200)) {
                    self.raw.extend_from_slice(&bytes);
                }
                return (status.exit_code(), self.raw);
            }
            assert!(started.elapsed() < PATIENCE, "onnx-view did not quit on q");
            self.pump(Duration::from_millis(50));
        }
    }
}

#[test]
fn open_search_jump_run_and_quit_in_a_real_terminal() {
    let model = common::repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let data = common::repo("tests/fixtures/run/cntk_mnist_conv");
    let mut s = Session::start(&[&model, "--test-data".as_ref(), &data]);
    s.wait_for("Convolution28");
    s.wait_for("valid");
    s.type_keys("/ReLU114");
    s.wait_for("›Relu ReLU114");
    s.type_keys("\r");
    s.wait_for("Relu v8  ReLU114");
    s.type_keys("p");
    s.wait_for("Add v8  Plus112");
    s.type_keys("r");
    s.wait_for("all 1 outputs match");
    s.type_keys("5");
    let run = s.wait_for("time by operator");
    assert!(run.contains("Conv v8") && run.contains("%"), "the run screen shows times per node:\n{run}");
    let (code, raw) = s.quit();
    assert_eq!(code, 0);
    let tail = String::from_utf8_lossy(&raw[raw.len().saturating_sub(200)..]).to_string();
    assert!(tail.contains("\x1b[?1049l"), "the alternate screen is left: {tail:?}");
}

/// Issue 56, defect 4: `E` wrote `NAME.npy` over an existing file without a word. An export
/// now takes a free name, keeps the file there, and says where it wrote, in full.
#[test]
fn an_export_never_replaces_a_file_and_says_where_it_wrote() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cwd = dir.path().canonicalize().expect("a real path");
    std::fs::write(cwd.join("w.npy"), "a file of mine").expect("written");
    let model = common::fixture("conv_relu.onnxtxt");
    let mut s = Session::start_in(Some(&cwd), &[&model], &[]);
    s.wait_for("Conv");
    s.type_keys("2");
    s.wait_for("float[2,1,3,3]");
    s.type_keys("j");
    s.type_keys("\r");
    s.wait_for("E export .npy");
    s.type_keys("E");
    let second = cwd.join("w-2.npy");
    s.wait_for(&format!("wrote {}", second.display()));
    assert_eq!(std::fs::read_to_string(cwd.join("w.npy")).expect("readable"), "a file of mine");
    let written = onnx_eval::npy::decode(&std::fs::read(&second).expect("exported")).expect("a .npy file");
    assert_eq!(written.shape, vec![2, 1, 3, 3]);
    s.escape();
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56, defect 1: with `--test-data`, the run dialog's choices were ignored. The
/// dialog now offers the test data as one source among others, and what is chosen is run.
#[test]
fn the_run_dialog_choices_win_over_the_test_data() {
    let model = common::repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let data = common::repo("tests/fixtures/run/cntk_mnist_conv");
    let mut s = Session::start(&[&model, "--test-data".as_ref(), &data]);
    s.wait_for("valid");
    s.type_keys("R");
    s.wait_for("Input3 float[1,1,28,28]: from the test data");
    s.type_keys(" ");
    s.wait_for("Input3 float[1,1,28,28]: zeros");
    s.type_keys("\r");
    s.wait_for("not compared with the test data's outputs: 'Input3' chosen in the run dialog");
    // Back to the test data: compared again.
    s.type_keys("R");
    s.wait_for("Input3 float[1,1,28,28]: zeros");
    s.type_keys("\x1b[D");
    s.wait_for("from the test data");
    s.type_keys("\r");
    s.wait_for("all 1 outputs match");
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56, defect 5: Ctrl-U and Ctrl-W typed `u` and `w` into the search box and the run
/// dialog, and a number field appended to its value (`1` then `4` gave `14`).
#[test]
fn text_fields_take_readline_keys_and_the_first_digit_replaces_the_value() {
    let model = common::fixture("dynamic.onnxtxt");
    let mut s = Session::start(&[&model]);
    s.wait_for("valid");
    s.type_keys("/Relu");
    s.wait_for("/Relu");
    s.type_keys("\x15");
    s.type_keys("Add two");
    s.wait_for("/Add two");
    s.type_keys("\x17");
    let screen = s.wait_for("/Add █");
    assert!(!screen.contains("Reluu") && !screen.contains("twow"), "{screen}");
    s.escape();
    s.type_keys("r");
    s.wait_for("symbolic dimensions");
    s.type_keys("\x1b[B\x1b[B");
    s.type_keys("4");
    s.wait_for("N = 4");
    s.type_keys("2");
    s.wait_for("N = 42");
    s.type_keys("\x15");
    s.type_keys("7");
    let cleared = s.wait_for("N = 7");
    assert!(!cleared.contains("N = 427") && !cleared.contains("N = u"), "{cleared}");
    s.escape();
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56, defect 9: an input of the wrong shape failed in the first Conv with a message
/// about the Conv's operands; the run now names the graph input and what it declares.
#[test]
fn a_wrong_input_is_named_with_its_declared_type() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let wrong = dir.path().join("wrong.npy");
    let tensor = onnx_eval::Tensor::new(vec![1, 2048], onnx_eval::Data::F32(vec![0.0; 2048].into()));
    onnx_eval::npy::write(&wrong, &tensor).expect("written");
    let model = common::repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let mut s = Session::start(&[&model]);
    s.wait_for("valid");
    s.type_keys("R");
    s.wait_for("Input3 float[1,1,28,28]: random");
    s.type_keys(" ");
    s.wait_for("Input3 float[1,1,28,28]: file");
    s.type_keys(&wrong.display().to_string());
    s.type_keys("\r");
    s.wait_for("the run failed");
    s.type_keys("5");
    let run = s.wait_for("input 'Input3'");
    assert!(run.contains("declares float[1,1,28,28]") && run.contains("float[1,2048]"), "{run}");
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56, defect 10: a cancelled run was reported as a failure; the help scrolled past
/// its last line; counts read "1 nodes".
#[test]
fn a_cancelled_run_is_not_a_failure_help_stops_at_its_end_and_counts_agree() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // A loop of a billion steps: running until cancelled.
    let slow = dir.path().join("slow.onnxtxt");
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
slow (float[1] x) => (float[1] y) {
  n = Constant <value = int64 {1000000000}> ()
  t = Constant <value = bool {1}> ()
  y = Loop (n, t, x) <body = step (int64 i, bool c, float[1] v) => (bool c, float[1] w) {
    w = Add (v, v)
  }>
}
"#;
    std::fs::write(&slow, text).expect("written");
    let mut s = Session::start(&[&slow]);
    s.wait_for("valid");
    s.type_keys("r");
    s.wait_for("Enter runs");
    s.type_keys("\r");
    s.wait_for("running node 3 of 3 (Loop)");
    s.type_keys("x");
    let cancelled = s.wait_for("run cancelled: r runs again");
    assert!(!cancelled.contains("failed"), "{cancelled}");
    s.type_keys("5");
    s.wait_for("the run was cancelled (x) before it ended");
    s.type_keys("?");
    s.wait_for("keys (Esc closes)");
    for _ in 0..20 {
        s.type_keys("\x1b[6~");
    }
    let end = s.wait_for("search: fzf syntax");
    assert!(end.contains("pickers"), "the last page is full, not past the end:\n{end}");
    s.escape();
    s.type_keys("3");
    let tree = s.wait_for("Loop#");
    assert!(tree.contains("1 node") && !tree.contains("1 nodes"), "{tree}");
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56, defect 6: a finding was cut at the screen's width, and Enter on one that the
/// checker places at a value said "not about a node". The selected finding is shown whole,
/// and Enter goes to the node that computes the value.
#[test]
fn a_finding_is_read_whole_and_enter_goes_to_its_value_s_node() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = dir.path().join("conflict.onnxtxt");
    let text = "<ir_version: 10, opset_import: [\"\" : 21]>\nconflict (float[1,2] x) => (float[3] y) {\n  h = Relu (x)\n  y = Sigmoid (h)\n}\n";
    std::fs::write(&model, text).expect("written");
    let mut s = Session::start(&[&model]);
    s.wait_for("✗1");
    s.type_keys("4");
    // The end of the message, past the 100 columns of the list's row.
    s.wait_for("rewrites the declaration from inference)");
    s.type_keys("\r");
    let graph = s.wait_for("Sigmoid v21  Sigmoid#1");
    assert!(!graph.contains("not about a node"), "{graph}");
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56, defect 3: the tensors of Constant nodes (a voice detector keeps 545,597 of its
/// parameters in Constants inside If branches) could not be viewed without a run.
#[test]
fn a_constant_in_a_branch_is_viewed_without_a_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = dir.path().join("gated.onnxtxt");
    let text = r#"<ir_version: 10, opset_import: ["" : 21]>
gated (bool cond, float[3] x) => (float[3] y) {
  y = If (cond) <
    then_branch = then_g () => (float[3] t) {
      w = Constant <value = float[3] {0.5, 1.5, 2.5}> ()
      t = Mul (x, w)
    },
    else_branch = else_g () => (float[3] e) { e = Identity (x) }
  >
}
"#;
    std::fs::write(&model, text).expect("written");
    let mut s = Session::start(&[&model]);
    s.wait_for("valid");
    s.type_keys("3");
    s.wait_for("then_branch");
    s.type_keys("j\r");
    s.wait_for("Constant v21");
    s.type_keys("v");
    let viewer = s.wait_for("w · float[3] · 3 elements");
    s.wait_for("max 2.5");
    assert!(!viewer.contains("run the model"), "{viewer}");
    s.escape();
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56, defect 2: after a run nothing inside a subgraph could be inspected (every value
/// "has no value yet", the Run screen showed the If as one node). The taken branch's values
/// and per-node times are now kept and shown.
#[test]
fn values_and_times_inside_the_taken_branch_are_shown_after_a_run() {
    let model = common::fixture("control.onnxtxt");
    let mut s = Session::start(&[&model]);
    s.wait_for("valid");
    // cond = zeros (false): the else branch runs.
    s.type_keys("r");
    s.wait_for("cond bool: random");
    s.type_keys("\x1b[D");
    s.wait_for("cond bool: zeros");
    s.type_keys("\r");
    s.wait_for("ran in");
    s.type_keys("5");
    s.wait_for("in If#0 ▸ else_branch");
    s.type_keys("3");
    s.wait_for("If#0 ▸ else_branch");
    s.type_keys("jj\r");
    let graph = s.wait_for("Abs v21");
    assert!(graph.contains("µs") || graph.contains(" ns") || graph.contains("ms"), "a time per node:\n{graph}");
    s.type_keys("v");
    let viewer = s.wait_for("e · float[2] · 2 elements");
    assert!(!viewer.contains("no value yet"), "{viewer}");
    s.escape();
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56, defect 8: the times of a single run were noisy and included the first run's
/// warm-up (and the copies of every value it keeps). They are now each node's median over
/// the runs after the first.
#[test]
fn run_times_are_medians_of_runs_after_a_warm_up() {
    let model = common::repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let data = common::repo("tests/fixtures/run/cntk_mnist_conv");
    let mut s = Session::start(&[&model, "--test-data".as_ref(), &data]);
    s.wait_for("valid");
    s.type_keys("r");
    s.wait_for("all 1 outputs match");
    s.type_keys("5");
    s.wait_for("median of 4 runs");
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56, defect 7: rows cut long names on the right, so names sharing a long prefix
/// looked the same. They are shortened in the middle, their ends kept.
#[test]
fn long_names_that_share_a_prefix_stay_apart() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = dir.path().join("long.onnxtxt");
    let prefix = "model.encoder.layers.11.self_attention.output_projection.quantized";
    let text = format!(
        "<ir_version: 10, opset_import: [\"\" : 21]>\nlong (float[2] x) => (float[2] z) {{\n  \
         \"{prefix}_first\" = Relu (x)\n  \"{prefix}_second\" = Neg (\"{prefix}_first\")\n  \
         z = Abs (\"{prefix}_second\")\n}}\n"
    );
    std::fs::write(&model, text).expect("written");
    let mut s = Session::start(&[&model]);
    s.wait_for("valid");
    let graph = s.wait_for("quantized_first");
    assert!(graph.contains("quantized_second") && graph.contains("model.enc"), "{graph}");
    s.type_keys("2");
    let values = s.wait_for("quantized_second");
    assert!(values.contains("quantized_first") && values.contains('…'), "{values}");
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56, the graph view: the selected node's producers and consumers drawn as a small
/// graph (branches and merges in lanes), walked with the arrow keys, Enter centring it on
/// another node, which the list then shows.
#[test]
fn the_flow_screen_draws_and_walks_a_neighbourhood() {
    let model = common::fixture("branches.onnxtxt");
    let mut s = Session::start(&[&model]);
    s.wait_for("valid");
    s.type_keys("jjj7");
    let drawn = s.wait_for("flow · Mul#3");
    for part in ["├─┐", "◆─┘ Mul v21", "Add v21 Add#5 → float[1,8]  ↑ 1 more"] {
        assert!(drawn.contains(part), "{part:?} in:\n{drawn}");
    }
    s.type_keys("k\r");
    s.wait_for("flow · Tanh#2");
    s.type_keys("1");
    s.wait_for("Tanh v21  Tanh#2");
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56: `:` commands, and comparing a run with the values of another run (as
/// `onnx run --compare-values` does) from the browser: the first node that differs is named
/// and selected.
#[test]
fn compare_goto_and_export_commands() {
    let model = common::repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let data = common::repo("tests/fixtures/run/cntk_mnist_conv");
    // The reference: every value of a run on the test data, one of them off by one.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let reference = dir.path().join("reference");
    std::fs::create_dir(&reference).expect("made");
    let loaded = onnx_core::binary::read_model(&model).expect("the model");
    let plan = onnx_eval::Plan::new(&loaded).expect("plannable");
    let (name, input) = onnx_eval::stored::read_value(&data.join("input_0.pb"), None).expect("the input");
    let options = onnx_eval::RunOptions { capture_all: true, ..Default::default() };
    let result = plan.run(vec![(name, input)], &options).expect("runs");
    let mut index = String::new();
    for (k, c) in result.values.iter().enumerate() {
        let mut t = c.value.tensor().expect("a tensor").clone();
        if c.name == "ReLU32_Output_0" {
            let mut v = t.to_f64s().expect("numbers");
            v[5] += 1.0;
            t = onnx_eval::Tensor::new(t.shape.clone(), onnx_eval::Data::F32(v.iter().map(|&x| x as f32).collect()));
        }
        let file = format!("value_{k}.npy");
        onnx_eval::npy::write(&reference.join(&file), &t).expect("written");
        index.push_str(&format!("{file}\t{}\n", c.name));
    }
    std::fs::write(reference.join("values.tsv"), index).expect("written");
    let cwd = dir.path().canonicalize().expect("a real path");
    let mut s = Session::start_in(Some(&cwd), &[&model, "--test-data".as_ref(), &data], &[]);
    s.wait_for("valid");
    s.type_keys(":");
    s.wait_for(":goto NAME");
    s.type_keys(&format!("compare {}\r", reference.display()));
    s.wait_for("first difference at 'ReLU32_Output_0'");
    s.wait_for("Relu v8  ReLU32");
    s.type_keys(":goto Pooling66\r");
    s.wait_for("MaxPool v8  Pooling66");
    s.type_keys(":export Parameter5\r");
    s.wait_for(&format!("wrote {}", cwd.join("Parameter5.npy").display()));
    s.type_keys(":frobnicate\r");
    s.wait_for("no command :frobnicate");
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56: the mouse. A click on a row selects it, a click on the selected row opens it,
/// a click on a screen's name shows it, the wheel moves the list; reporting is turned off on
/// leaving.
#[test]
fn the_mouse_selects_opens_scrolls_and_switches_screens() {
    // SGR mouse reports, 1-based columns and rows.
    let click = |x: u16, y: u16| format!("\x1b[<0;{};{}M\x1b[<0;{};{}m", x + 1, y + 1, x + 1, y + 1);
    let wheel_down = |x: u16, y: u16| format!("\x1b[<65;{};{}M", x + 1, y + 1);
    let model = common::repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let mut s = Session::start(&[&model]);
    s.wait_for("valid");
    // Row 3 of the screen is the list's first row (title, tabs, the box's border).
    s.type_keys(&click(10, 5));
    s.wait_for("Add v8  Plus30");
    s.type_keys(&wheel_down(10, 8));
    s.wait_for("Conv v8  Convolution110");
    // "2 Values" on the tab row.
    s.type_keys(&click(10, 1));
    s.wait_for(" values · ");
    s.type_keys(&click(1, 1));
    s.wait_for("main · 6 of 12");
    // Clicking the selected row opens it: on the Values screen, the viewer.
    s.type_keys(&click(10, 1));
    s.wait_for(" values · ");
    s.type_keys(&click(5, 4));
    s.type_keys(&click(5, 4));
    s.wait_for("E export .npy");
    s.escape();
    let (code, raw) = s.quit();
    assert_eq!(code, 0);
    let text = String::from_utf8_lossy(&raw);
    let on = text.find("\x1b[?1000h").expect("mouse reporting was turned on");
    let off = text.rfind("\x1b[?1000l").expect("and off again");
    assert!(on < off);
}

/// Issue 56, defect 10: a big text model showed a blank terminal while it was read. The
/// reading is now shown with its stage and how far into the text it is (from 32 MB; the
/// test lowers the size).
#[test]
fn reading_a_big_model_shows_its_progress() {
    let model = common::repo("tests/corpus/real/cntk_mnist_conv.onnx");
    let mut s = Session::start_with(&[&model], &[("ONNX_VIEW_PROGRESS_FROM_BYTES", "1")]);
    s.wait_for("valid");
    let (code, raw) = s.quit();
    assert_eq!(code, 0);
    let text = String::from_utf8_lossy(&raw);
    let shown = text.find("onnx-view: reading ").expect("the reading is shown");
    let frame = text.find("\x1b[?1049h").expect("then the browser's screen");
    assert!(shown < frame, "before the first frame");
}

#[test]
fn a_hostile_model_sends_no_escape_sequence_of_its_own() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = common::hostile_file(dir.path(), b"\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b]0;pwned\x07evil");
    let mut s = Session::start(&[&path]);
    s.wait_for("evil");
    s.type_keys("6");
    s.wait_for("producer");
    let (code, raw) = s.quit();
    assert_eq!(code, 0);
    for sequence in [b"\x1b]52".as_slice(), b"\x1b]0;", b"\x07"] {
        assert!(!raw.windows(sequence.len()).any(|w| w == sequence), "{sequence:?} reached the terminal");
    }
}

#[test]
fn an_unreadable_model_is_a_clear_error_and_status_1() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("bad.onnx");
    std::fs::write(&path, b"\xff\xff\xff\xff not protobuf").expect("written");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_onnx-view")).arg(&path).output().expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("onnx-view: ") && err.contains("bad.onnx"), "{err}");
    let usage = std::process::Command::new(env!("CARGO_BIN_EXE_onnx-view")).output().expect("runs");
    assert_eq!(usage.status.code(), Some(2), "no model is a usage error");
}

#[test]
fn a_panic_leaves_the_terminal_as_it_found_it() {
    let model = common::fixture("conv_relu.onnxtxt");
    // The panic follows the first frame at once: the screen is read from what was written,
    // not waited for (the frame may be gone from the emulator's screen when it is read).
    let s = Session::start_with(&[&model], &[("ONNX_VIEW_PANIC_AFTER_FIRST_FRAME", "1")]);
    let (code, raw) = s.exit();
    assert_ne!(code, 0, "a panic is a failure");
    let text = String::from_utf8_lossy(&raw);
    let drawn = text.find("Conv").expect("the first frame was drawn");
    let left = text.rfind("\x1b[?1049l").expect("the alternate screen is left");
    let message = text.rfind("panic requested").expect("the panic message is shown");
    assert!(drawn < left && left < message, "restored after the frame and before the message, so it stays visible");
}

#[test]
fn without_a_terminal_it_says_so_in_one_line_and_exits_2() {
    let model = common::fixture("conv_relu.onnxtxt");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_onnx-view"))
        .arg(&model)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("onnx-view needs a terminal"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line, no backtrace: {err}");
    assert!(out.stdout.is_empty(), "nothing drawn to a pipe");
}

#[test]
fn a_fifo_is_announced_while_it_waits_for_a_writer() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fifo = dir.path().join("model.onnxtxt");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success(), "mkfifo made the FIFO");
    let mut s = Session::start(&[&fifo]);
    s.wait_for("a FIFO; waiting for a program to write the model into it");
    let text = std::fs::read(common::fixture("conv_relu.onnxtxt")).expect("the fixture");
    std::fs::write(&fifo, text).expect("written into the FIFO");
    s.wait_for("Conv");
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// A small convolutional model for the inspector's tests: two Convs of different widths,
/// three initializers of different sizes, two outputs, and metadata with a long value.
fn convs_model(dir: &std::path::Path) -> std::path::PathBuf {
    let numbers = |n: usize| vec!["0.5"; n].join(", ");
    let config = format!("BEGIN{}END", "x".repeat(300));
    let text = format!(
        "<ir_version: 10, opset_import: [\"\" : 21], metadata_props: [\"author\": \"onnx-view tests\", \
         \"config\": \"{config}\"]>\n\
         convs (float[1,3,8,8] image) => (float[1,64,8,8] out, float[1,64,1,1] pooled)\n\
         <float[16,3,3,3] w1 = {{{}}}, float[64,16,1,1] w2 = {{{}}}, float[16] bias = {{{}}}>\n\
         {{\n  \
           a = Conv <pads = [1, 1, 1, 1], kernel_shape = [3, 3]> (image, w1, bias)\n  \
           b = Relu (a)\n  \
           out = Conv <kernel_shape = [1, 1]> (b, w2)\n  \
           pooled = GlobalAveragePool (out)\n\
         }}\n",
        numbers(16 * 27),
        numbers(64 * 16),
        numbers(16)
    );
    let path = dir.join("convs.onnxtxt");
    std::fs::write(&path, text).expect("written");
    path
}

/// Issue 56: a node is found by its operator and the shape of its output (`op:`, `shape:`,
/// with `name:` and `in:`, together with the fuzzy text); the search box says so.
#[test]
fn search_finds_a_node_by_op_and_shape() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = convs_model(dir.path());
    let mut s = Session::start(&[&model]);
    s.wait_for("valid");
    s.type_keys("/");
    s.wait_for("narrow with op:Conv name:… shape:1,64 in:body");
    // The first Conv's output is float[1,16,8,8]: only the second one has a 64.
    s.type_keys("op:conv shape:64");
    let found = s.wait_for("›Conv out : float[1,64,8,8]");
    assert!(found.contains("search · 1 of 1"), "{found}");
    s.type_keys("\r");
    s.wait_for("›2   Conv v21");
    // Without the op, the pool's output and the 64x16 weight have a 64 too.
    s.type_keys("/shape:64");
    let three = s.wait_for("w2 : float[64,16,1,1]");
    assert!(three.contains("search · 1 of 3") && three.contains("GlobalAveragePool pooled"), "{three}");
    s.escape();
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56: `s` on the Values screen shows the largest values first (by the bytes their
/// types or initializers take), and back in model order; the title says which.
#[test]
fn values_sort_by_size_and_back() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = convs_model(dir.path());
    let mut s = Session::start(&[&model]);
    s.wait_for("valid");
    s.type_keys("2");
    let before = s.wait_for("values · model order · 1 of 8");
    assert!(before.contains("›input       image"), "{before}");
    s.type_keys("s");
    s.wait_for("values · largest first");
    // The last row, the smallest value: the list is drawn whole.
    let sorted = s.wait_for("bias  float[16]  64 B");
    // The list's rows, in order (the detail pane shares the screen's lines).
    let kinds = ["input ", "initializer ", "value ", "output "];
    let rows: Vec<String> = sorted
        .lines()
        .map(|l| l.chars().skip(2).collect::<String>())
        .filter(|l| kinds.iter().any(|k| l.starts_with(k)))
        .collect();
    assert_eq!(rows.len(), 8, "every value:\n{sorted}");
    assert!(rows[0].contains("out") && rows[0].contains("16.0 KiB"), "{sorted}");
    assert!(rows[1].contains("w2") && rows[1].contains("4.0 KiB"), "ties in model order:\n{sorted}");
    assert!(sorted.contains("›input       image"), "the selected value stays selected:\n{sorted}");
    s.type_keys("s");
    s.wait_for("values · model order");
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56: the Model screen lists the graph's inputs and outputs with their types, and the
/// metadata, a long value shortened in the middle on one row.
#[test]
fn the_model_screen_lists_inputs_outputs_and_metadata() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = convs_model(dir.path());
    let mut s = Session::start(&[&model]);
    s.wait_for("valid");
    s.type_keys("6");
    // The histogram's last row: the whole screen is drawn.
    let screen = s.wait_for("1 GlobalAveragePool");
    for line in ["image  float[1,3,8,8]", "out  float[1,64,8,8]", "pooled  float[1,64,1,1]", "author = onnx-view tests"]
    {
        assert!(screen.contains(line), "{line:?} on\n{screen}");
    }
    let config = screen.lines().find(|l| l.contains("config = ")).expect("the config row");
    assert!(config.contains("config = BEGINxxx") && config.contains('…') && config.contains("xxxEND"), "{config}");
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}

/// Issue 56: the Schema tab says which inputs are optional or variadic, and each attribute's
/// type with its default, or that it is optional or required.
#[test]
fn the_schema_tab_marks_optional_inputs_and_attribute_types() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = convs_model(dir.path());
    let mut s = Session::start(&[&model]);
    s.wait_for("valid");
    s.type_keys("]");
    s.wait_for("Conv since version");
    let schema = s.wait_for("strides : ints, optional");
    for line in
        ["B : T, optional", "auto_pad : string = \"NOTSET\"", "group : int = 1", "kernel_shape : ints, optional"]
    {
        assert!(schema.contains(line), "{line:?} on\n{schema}");
    }
    let (code, _) = s.quit();
    assert_eq!(code, 0);
}
