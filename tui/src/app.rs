//! The browser's state and how keys and reports change it (`App::key`, `App::report`).
//!
//! The app keeps what no one component owns: the model and its index, what the workers
//! found, the run, the current scope and screen, the overlays, the history and the status
//! line. Each screen ([`crate::screens`]) and overlay ([`crate::overlays`]) owns its own
//! state and keys; the app routes a key to the overlay on top, or acts on it itself when
//! every screen shares it (screens, history, search, run), or hands it to the screen shown,
//! and then does what the component asked ([`Outcome`]).
//!
//! Drawing reads this state and never changes what a key or report would; work that takes
//! time leaves as an [`Effect`] the event loop starts on a worker, so every change here is
//! instant and the state tests drive it without a terminal.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use onnx_core::diagnostic::Severity;
use onnx_core::ir::{Model, NodeId};
use onnx_eval::Tensor;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEventKind};

pub use crate::component::{Effect, Focus, RunState};
use crate::component::{Outcome, Shared};
use crate::index::Index;
use crate::keys::{self, Action, Context};
use crate::load::{Loaded, TextSource};
pub use crate::overlays::Overlay;
use crate::overlays::{Chooser, CommandLine, Help, LastHits, SearchBox, Viewer, tensor_of};
use crate::screens::{RunScreen, Screens};
pub use crate::screens::{SCREENS, Screen};
use crate::search::Target;
use crate::worker::{Analysis, Finding, Report};

/// Where the user was: for back and forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Place {
    scope: usize,
    screen: Screen,
    selected: usize,
}

const HISTORY: usize = 100;

#[derive(Debug)]
pub struct App {
    pub model: Arc<Model>,
    pub index: Arc<Index>,
    pub(crate) label: String,
    pub(crate) model_dir: Option<PathBuf>,
    pub(crate) text: Option<TextSource>,
    pub(crate) analysis: Option<Analysis>,
    /// The worst finding on each node.
    pub marks: HashMap<NodeId, Severity>,
    pub screen: Screen,
    pub scope: usize,
    focus: Focus,
    screens: Screens,
    pub overlays: Vec<Overlay>,
    back: Vec<Place>,
    forward: Vec<Place>,
    last_hits: LastHits,
    /// The memory budget of each run (`--max-memory`; default half of what the process may
    /// use): a run that would need more fails on the Run screen, and the browser goes on.
    pub max_memory: usize,
    pub run: RunState,
    /// The status line's message, until the next key.
    pub flash: Option<String>,
    pub effects: Vec<Effect>,
    pub(crate) search_ready: bool,
    quit: bool,
    pending_g: bool,
    /// The body height of the last frame, for page moves.
    pub(crate) page: usize,
}

/// What components read of the app; a macro so that it borrows only the fields it names
/// (the screens stay free to borrow mutably beside it).
macro_rules! shared {
    ($app:expr) => {
        Shared {
            model: &$app.model,
            index: &$app.index,
            label: &$app.label,
            model_dir: $app.model_dir.as_ref(),
            analysis: $app.analysis.as_ref(),
            marks: &$app.marks,
            run: &$app.run,
            scope: $app.scope,
            focus: $app.focus,
        }
    };
}

impl App {
    pub fn new(loaded: Loaded, test_data: Option<PathBuf>) -> App {
        let index = Arc::new(Index::new(&loaded.model));
        let scopes = index.scopes.len();
        App {
            model: Arc::new(loaded.model),
            index,
            label: loaded.label,
            model_dir: loaded.model_dir,
            text: loaded.text,
            analysis: None,
            marks: HashMap::new(),
            screen: Screen::Graph,
            scope: 0,
            focus: Focus::List,
            screens: Screens::new(scopes, test_data),
            overlays: Vec::new(),
            back: Vec::new(),
            forward: Vec::new(),
            last_hits: LastHits::default(),
            max_memory: onnx_eval::memory::default_budget(),
            run: RunState::Idle,
            flash: None,
            effects: Vec::new(),
            search_ready: false,
            quit: false,
            pending_g: false,
            page: 20,
        }
    }

    fn shared(&self) -> Shared<'_> {
        shared!(self)
    }

    /// What the screens read, beside the screens themselves (for drawing and routing).
    pub(crate) fn parts(&mut self) -> (Shared<'_>, &mut Screens) {
        (shared!(self), &mut self.screens)
    }

    // ---- what drawing, the event loop and tests ask ------------------------------------

    /// The nodes of the current scope.
    pub fn nodes(&self) -> &[NodeId] {
        self.shared().nodes()
    }

    /// The node selected in the Graph list.
    pub fn selected_node(&self) -> Option<NodeId> {
        self.screens.graph.selected_node(&self.shared())
    }

    /// The findings the Diagnostics screen shows (its filter applied).
    pub fn diagnostics(&self) -> Vec<&Finding> {
        self.screens.diagnostics.shown(self.analysis.as_ref())
    }

    /// Errors and warnings found.
    pub fn counts(&self) -> (usize, usize) {
        let Some(a) = &self.analysis else { return (0, 0) };
        let errors = a.diagnostics.iter().filter(|f| f.diagnostic.severity == Severity::Error).count();
        (errors, a.diagnostics.len() - errors)
    }

    /// Progress of a run going on: nodes done, total, and the op of the node running.
    pub fn progress(&self) -> Option<(usize, usize, String)> {
        RunScreen::progress(&self.run, &self.model)
    }

    /// Checking or running: the screen changes without a key.
    pub fn busy(&self) -> bool {
        self.analysis.is_none() || self.progress().is_some()
    }

    /// `q` was pressed.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    // ---- keys --------------------------------------------------------------------------

    pub fn key(&mut self, key: KeyEvent) {
        self.flash = None;
        let outcome = match self.overlays.last_mut() {
            Some(top) => top.handle_key(key, self.page),
            None => match keys::action(Context::Browse, &key) {
                Some(a) => self.browse(a),
                None => Outcome::Stay,
            },
        };
        self.apply(outcome);
    }

    /// A mouse event at column `x`, row `y` of the terminal: the wheel moves the list (or
    /// the overlay on top) three rows; a click on a screen's name shows that screen, a
    /// click on a list's row selects it, and a click on the selected row opens it.
    pub fn mouse(&mut self, kind: MouseEventKind, x: u16, y: u16) {
        let wheel = match kind {
            MouseEventKind::ScrollDown => Some(KeyCode::Down),
            MouseEventKind::ScrollUp => Some(KeyCode::Up),
            _ => None,
        };
        if let Some(code) = wheel {
            for _ in 0..3 {
                self.key(KeyEvent::new(code, KeyModifiers::NONE));
            }
            return;
        }
        if kind != MouseEventKind::Down(MouseButton::Left) || !self.overlays.is_empty() {
            return;
        }
        self.flash = None;
        if y == 1 {
            // The tab row: " 1 Graph " " 2 Values " …, one after another from column 0.
            let mut start = 0u16;
            for (k, (_, name)) in SCREENS.iter().enumerate() {
                let width = u16::try_from(format!(" {} {name} ", k + 1).chars().count()).unwrap_or(u16::MAX);
                if (start..start.saturating_add(width)).contains(&x) {
                    let outcome = self.browse(Action::Screen(u8::try_from(k + 1).unwrap_or(1)));
                    self.apply(outcome);
                    return;
                }
                start = start.saturating_add(width);
            }
            return;
        }
        let screen = self.screen;
        let (cx, screens) = self.parts();
        let Some(row) = screens.get(screen).list(&cx).and_then(|c| c.row_at(x, y)) else { return };
        let outcome = screens.get_mut(screen).click(row, &cx);
        self.focus = Focus::List;
        self.apply(outcome);
    }

    /// A key on the screens: the app's own, or the shown screen's.
    fn browse(&mut self, a: Action) -> Outcome {
        if a != Action::G {
            self.pending_g = false;
        }
        let page = self.page.max(1) as isize;
        match a {
            Action::Down => self.step(1),
            Action::Up => self.step(-1),
            Action::PageDown => self.step(page),
            Action::PageUp => self.step(-page),
            Action::HalfDown => self.step(page / 2),
            Action::HalfUp => self.step(-page / 2),
            Action::Top => self.step(isize::MIN / 2),
            Action::Bottom => self.step(isize::MAX / 2),
            Action::G if self.pending_g => {
                self.pending_g = false;
                self.step(isize::MIN / 2);
            }
            Action::G => self.pending_g = true,
            Action::NextPane | Action::PrevPane => {
                if matches!(self.screen, Screen::Graph | Screen::Values) {
                    self.focus = if self.focus == Focus::List { Focus::Detail } else { Focus::List };
                }
            }
            Action::NextTab | Action::PrevTab => self.screens.graph.next_tab(a == Action::NextTab),
            Action::Screen(k) => {
                if let Some(&(s, _)) = SCREENS.get(usize::from(k).saturating_sub(1)) {
                    self.screen = s;
                    self.focus = Focus::List;
                    if s == Screen::Flow {
                        // The drawing is of the node selected in the list.
                        let (cx, screens) = self.parts();
                        let selected = screens.graph.selected_node(&cx);
                        screens.flow.centre_on(selected);
                    }
                }
            }
            Action::Enter => {
                let screen = self.screen;
                let (cx, screens) = self.parts();
                return screens.get_mut(screen).enter(&cx);
            }
            Action::Escape if self.screen == Screen::Run && matches!(self.run, RunState::Running { .. }) => {
                return RunScreen::cancel(&self.run);
            }
            Action::Escape => self.escape(),
            Action::Producer | Action::Consumers | Action::ViewOutput => {
                return self.screens.graph.node_action(a, self.screen == Screen::Graph, &self.shared());
            }
            Action::Back => {
                if let Some(p) = self.back.pop() {
                    self.forward.push(self.place());
                    self.restore(p);
                }
            }
            Action::Forward => {
                if let Some(p) = self.forward.pop() {
                    self.back.push(self.place());
                    self.restore(p);
                }
            }
            Action::Search => self.overlays.push(Overlay::Search(SearchBox::default())),
            Action::Command => self.overlays.push(Overlay::Command(CommandLine::default())),
            Action::NextHit | Action::PrevHit => {
                let Some((target, k, total)) = self.last_hits.step(a == Action::NextHit) else {
                    return Outcome::Flash("no search yet: / searches".into());
                };
                self.go_to(&target);
                return Outcome::Flash(format!("hit {k} of {total}"));
            }
            Action::Help => self.overlays.push(Overlay::Help(Help::default())),
            Action::Quit => self.quit = true,
            Action::Run => return self.screens.run.start(&mut self.run, &self.model, self.max_memory),
            Action::RunDialog => return Outcome::RunDialog,
            Action::Cancel => return RunScreen::cancel(&self.run),
            Action::CycleFilter => self.screens.diagnostics.cycle_filter(),
            Action::SortValues => return self.screens.values.toggle_order(self.screen == Screen::Values),
            _ => {}
        }
        Outcome::Stay
    }

    /// Moves the focused list (or scrolls the focused detail pane).
    fn step(&mut self, delta: isize) {
        let screen = self.screen;
        let (cx, screens) = self.parts();
        if cx.focus == Focus::Detail {
            screens.graph.scroll_detail(delta);
        } else {
            screens.get_mut(screen).step(delta, &cx);
        }
    }

    fn escape(&mut self) {
        if self.focus == Focus::Detail {
            self.focus = Focus::List;
        } else if let Some(parent) = self.index.scopes.get(self.scope).and_then(|s| s.parent) {
            let holder = self.index.scopes[self.scope].holder;
            self.scope = parent;
            if let Some(&(_, row)) = holder.and_then(|h| self.index.node_at.get(&h)) {
                self.screens.graph.select_in(parent, row);
            }
        } else if self.screen != Screen::Graph {
            self.screen = Screen::Graph;
        }
    }

    /// Does what a component asked.
    fn apply(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Stay => {}
            Outcome::Flash(message) => self.flash = Some(message),
            Outcome::Start { effect, saying } => {
                if let Some(message) = saying {
                    self.flash = Some(message);
                }
                self.effects.push(effect);
            }
            Outcome::Close => {
                self.overlays.pop();
            }
            Outcome::Dismiss(message) => {
                self.overlays.pop();
                self.flash = Some(message);
            }
            Outcome::Pick(target) => {
                self.overlays.pop();
                self.go_to(&target);
            }
            Outcome::Jump { hits, at } => {
                self.overlays.pop();
                self.last_hits = LastHits::new(hits, at);
                if let Some(target) = self.last_hits.current().cloned() {
                    self.go_to(&target);
                }
                self.focus = Focus::List;
            }
            Outcome::GoTo(target) => self.go_to(&target),
            Outcome::Follow(n) => {
                if let Some(&(scope, row)) = self.index.node_at.get(&n) {
                    self.remember();
                    self.scope = scope;
                    self.screens.graph.show(scope, row);
                }
            }
            Outcome::EnterScope(s) => {
                self.remember();
                self.scope = s;
                self.screen = Screen::Graph;
            }
            Outcome::FocusDetail => self.focus = Focus::Detail,
            Outcome::Choose { what, items } => match items.len() {
                0 => self.flash = Some(format!("no {what} of this node")),
                1 => self.go_to(&items[0].1),
                n => {
                    let title = format!("{} of this node", crate::view::count(n, what));
                    let items = items.into_iter().map(|(label, target)| (label, Some(target))).collect();
                    self.overlays.push(Overlay::Chooser(Chooser::new(title, items)));
                }
            },
            Outcome::OpenValue { name, def } => match tensor_of(&self.shared(), &name, def) {
                Ok(t) => self.open_viewer(name.to_string(), t),
                Err(e) => self.flash = Some(e),
            },
            Outcome::View { name, tensor } => self.open_viewer(name, tensor),
            Outcome::Command(line) => {
                self.overlays.pop();
                match crate::command::parse(&line) {
                    Ok(command) => {
                        let then = self.command(command);
                        self.apply(then);
                    }
                    Err(why) => self.flash = Some(why),
                }
            }
            Outcome::RunDialog => {
                let dialog = self.screens.run.dialog(&self.model);
                self.overlays.push(Overlay::RunDialog(dialog));
            }
            Outcome::Run { sources, dims } => {
                self.overlays.pop();
                let then = self.screens.run.run_with(sources, dims, &mut self.run, &self.model, self.max_memory);
                self.apply(then);
            }
        }
    }

    fn open_viewer(&mut self, name: String, tensor: Tensor) {
        let (viewer, stats) = Viewer::open(name, tensor);
        self.effects.push(stats);
        self.overlays.push(Overlay::Viewer(Box::new(viewer)));
    }

    // ---- history -----------------------------------------------------------------------

    fn place(&self) -> Place {
        let selected = self.screens.get(self.screen).selected(&self.shared());
        Place { scope: self.scope, screen: self.screen, selected }
    }

    fn restore(&mut self, p: Place) {
        self.scope = p.scope.min(self.index.scopes.len().saturating_sub(1));
        self.screen = p.screen;
        let (cx, screens) = self.parts();
        screens.get_mut(p.screen).select(p.selected, &cx);
    }

    /// Remembers where we are before a jump.
    fn remember(&mut self) {
        let here = self.place();
        if self.back.last() != Some(&here) {
            self.back.push(here);
            if self.back.len() > HISTORY {
                self.back.remove(0);
            }
        }
        self.forward.clear();
    }

    /// Shows a node (its scope, the Graph screen, its row selected) or a value (its scope,
    /// the Values screen, its row selected).
    /// Carries out a `:` command.
    fn command(&mut self, command: crate::command::Command) -> Outcome {
        use crate::command::Command;
        match command {
            Command::GoTo(name) => match self.named(&name) {
                Some(target) => {
                    self.go_to(&target);
                    Outcome::Stay
                }
                None => Outcome::Flash(format!("no node or value is named '{name}'")),
            },
            Command::Run => self.screens.run.start(&mut self.run, &self.model, self.max_memory),
            Command::Compare(dir) => {
                if !dir.join("values.tsv").is_file() {
                    return Outcome::Flash(format!(
                        "{}: no values.tsv there (onnx run --all-values DIR writes one)",
                        dir.display()
                    ));
                }
                self.screens.run.compare_with(dir);
                self.screens.run.start(&mut self.run, &self.model, self.max_memory)
            }
            Command::Export { value, file } => {
                let name = onnx_core::ir::Str::from(value.as_str());
                let cx = self.shared();
                let def = cx.index.def(cx.scope, &name).map(|(_, d)| d);
                let tensor = match tensor_of(&cx, &name, def) {
                    Ok(t) => t,
                    Err(e) => return Outcome::Flash(e),
                };
                let path = file.unwrap_or_else(|| crate::export::default_file(&value));
                Outcome::Flash(crate::export::export(&path, &tensor))
            }
            Command::Simplify(file) => {
                let path = file.unwrap_or_else(|| crate::export::simplified_file(&self.label));
                Outcome::Flash(crate::export::simplified(&path, &self.model))
            }
            Command::Diff(file) => self.diff_with(&file),
            Command::Opset { target, file } => self.convert_opset(target, file),
        }
    }

    /// `:opset N [FILE]`: the model converted to opset N and written to a new file, or the
    /// nodes that block it as a chooser whose items go to them.
    fn convert_opset(&mut self, target: i64, file: Option<std::path::PathBuf>) -> Outcome {
        match crate::export::opset_converted(&self.model, &self.label, target, file) {
            Ok(done) => Outcome::Flash(done),
            Err(onnx_core::opset::OpsetError::Blocked { from, to, blockers }) => {
                let items = blockers
                    .iter()
                    .map(|b| (crate::sanitize::str(&b.to_string()).into_owned(), Some(Target::Node(b.id))))
                    .collect();
                let title = format!("{} block opset {from} → {to}", crate::view::count(blockers.len(), "node"));
                self.overlays.push(Overlay::Chooser(Chooser::new(title, items)));
                Outcome::Stay
            }
            Err(other) => Outcome::Flash(format!("opset: {other}")),
        }
    }

    /// `:diff FILE`: what changed from this model to FILE's, as a chooser whose items go to
    /// the changed node or value here.
    fn diff_with(&mut self, file: &std::path::Path) -> Outcome {
        let other = match crate::load::load(file) {
            Ok(loaded) => loaded,
            Err(why) => return Outcome::Flash(why),
        };
        let options = onnx_core::diff::Options {
            ignore_names: false,
            dir_a: self.model_dir.clone(),
            dir_b: other.model_dir.clone(),
        };
        let changes = onnx_core::diff::diff(&self.model, &other.model, &options);
        if changes.is_empty() {
            return Outcome::Flash(format!("no differences with {}", file.display()));
        }
        let items = changes
            .iter()
            .map(|c| (crate::sanitize::str(&c.text()).into_owned(), c.a.and_then(|anchor| self.target_of(anchor))))
            .collect();
        let title = format!("{} against {}", crate::view::count(changes.len(), "change"), file.display());
        self.overlays.push(Overlay::Chooser(Chooser::new(title, items)));
        Outcome::Stay
    }

    /// Where the browser shows a place of this model: its node, or a value of its scope.
    fn target_of(&self, anchor: onnx_core::diagnostic::Anchor) -> Option<Target> {
        use onnx_core::diagnostic::Anchor;
        let model = &*self.model;
        let value = |g: onnx_core::ir::GraphId, name: Option<&onnx_core::ir::Str>| {
            Some(Target::Value { scope: self.index.scope_of_graph(g)?, name: name?.clone() })
        };
        match anchor {
            Anchor::Node(n) | Anchor::NodeInput(n, _) | Anchor::NodeOutput(n, _) | Anchor::Attribute(n, _) => {
                Some(Target::Node(n))
            }
            Anchor::GraphInput(g, i) => value(g, model.graphs[g].inputs.get(i)?.name.as_ref()),
            Anchor::Initializer(g, i) => value(g, model.tensors[*model.graphs[g].initializers.get(i)?].name.as_ref()),
            // An output or a value description: the node that makes the value, if any.
            Anchor::GraphOutput(g, i) | Anchor::ValueInfo(g, i) => {
                let graph = &model.graphs[g];
                let name = if matches!(anchor, Anchor::GraphOutput(..)) {
                    graph.outputs.get(i)?
                } else {
                    graph.value_info.get(i)?
                };
                let name = name.name.as_ref()?;
                graph.nodes.iter().copied().find(|&n| model.nodes[n].outputs.contains(name)).map(Target::Node)
            }
            _ => None,
        }
    }

    /// The node of this name, else the node that makes a value of this name, else a graph
    /// input or initializer of this name, in any scope.
    fn named(&self, name: &str) -> Option<Target> {
        let model = &*self.model;
        let by_row = |a: &NodeId, b: &NodeId| self.index.node_at.get(a).cmp(&self.index.node_at.get(b));
        let mut nodes: Vec<NodeId> = self.index.node_at.keys().copied().collect();
        nodes.sort_by(by_row);
        let named =
            nodes.iter().find(|&&n| model.nodes[n].name.as_ref().is_some_and(|s| s.as_bytes() == name.as_bytes()));
        let making = || nodes.iter().find(|&&n| model.nodes[n].outputs.iter().any(|o| o.as_bytes() == name.as_bytes()));
        if let Some(&n) = named.or_else(making) {
            return Some(Target::Node(n));
        }
        let value = onnx_core::ir::Str::from(name);
        (0..self.index.scopes.len())
            .find(|&s| self.index.def(s, &value).is_some_and(|(at, _)| at == s))
            .map(|scope| Target::Value { scope, name: value })
    }

    fn go_to(&mut self, target: &Target) {
        match target {
            Target::Node(n) => {
                let Some(&(scope, row)) = self.index.node_at.get(n) else { return };
                self.remember();
                self.scope = scope;
                self.screen = Screen::Graph;
                self.screens.graph.show(scope, row);
            }
            Target::Value { scope, name } => {
                self.remember();
                self.scope = *scope;
                self.screen = Screen::Values;
                let (cx, screens) = self.parts();
                screens.values.select_name(name, &cx);
            }
        }
    }

    // ---- reports from workers ----------------------------------------------------------

    pub fn report(&mut self, report: Report) {
        match report {
            Report::Checked(analysis) => {
                self.marks.clear();
                for f in &analysis.diagnostics {
                    if let Some(n) = f.node {
                        let worst = self.marks.entry(n).or_insert(f.diagnostic.severity);
                        if f.diagnostic.severity == Severity::Error {
                            *worst = Severity::Error;
                        }
                    }
                }
                self.analysis = Some(analysis);
            }
            Report::Ran(result) => {
                let (run, said) = RunScreen::finished(result);
                self.run = run;
                self.flash = Some(said);
                // `:compare` found where the run departs: that node is selected in the list.
                let first = match &self.run {
                    RunState::Done(o) => o.divergence.as_ref().and_then(|d| d.as_ref().ok()?.first.as_ref()),
                    _ => None,
                };
                if let Some(&(n, _, _)) = first
                    && let Some(&(scope, row)) = self.index.node_at.get(&n)
                {
                    self.scope = scope;
                    self.screens.graph.show(scope, row);
                }
            }
            Report::Stats { key, stats } => {
                for o in &mut self.overlays {
                    if let Overlay::Viewer(v) = o {
                        v.stats_arrived(&key, &stats);
                    }
                }
            }
            Report::Found { generation, hits } => {
                if let Some(Overlay::Search(s)) = self.overlays.last_mut() {
                    s.found(generation, hits);
                }
            }
            Report::SearchReady => self.search_ready = true,
            Report::Failed { job, message } => {
                let what = format!("internal error in the {job}: {message} (please report it)");
                if job == "run" && matches!(self.run, RunState::Running { .. }) {
                    self.run = RunState::Failed(what.clone());
                }
                if job == "check" && self.analysis.is_none() {
                    self.analysis = Some(Analysis::default());
                }
                self.flash = Some(what);
            }
        }
    }
}
