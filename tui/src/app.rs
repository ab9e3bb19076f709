//! The browser's state and how keys and reports change it (`App::key`, `App::report`).
//! Drawing reads this state and never changes it; work that takes time leaves as an
//! [`Effect`] the event loop starts on a worker, so every change here is instant and the
//! state tests drive it without a terminal.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use onnx_core::diagnostic::Severity;
use onnx_core::ir::{Model, NodeId, Str};
use onnx_eval::Tensor;
use ratatui::crossterm::event::{KeyCode, KeyEvent};

use crate::dialog::{Outcome, RunDialog};
use crate::index::{Body, Def, Index};
use crate::inputs::Source;
use crate::keys::{self, Action, Context};
use crate::load::{Loaded, TextSource};
use crate::search::{Hit, Target};
use crate::stats::Stats;
use crate::view::{ValueRow, values_of};
use crate::worker::{Analysis, Report, RunOutcome, RunRequest};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    Graph,
    Values,
    Tree,
    Diagnostics,
    Run,
    Model,
}

pub const SCREENS: [(Screen, &str); 6] = [
    (Screen::Graph, "Graph"),
    (Screen::Values, "Values"),
    (Screen::Tree, "Tree"),
    (Screen::Diagnostics, "Diagnostics"),
    (Screen::Run, "Run"),
    (Screen::Model, "Model"),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    List,
    Detail,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DetailTab {
    Node,
    Schema,
    Text,
}

/// The selected row of a list and the first row shown; only the rows on screen are ever
/// formatted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    pub selected: usize,
    pub offset: usize,
}

impl Cursor {
    pub fn step(&mut self, delta: isize, len: usize) {
        if len == 0 {
            *self = Cursor::default();
            return;
        }
        self.selected = self.selected.saturating_add_signed(delta).min(len - 1);
    }

    /// Moves the window so the selection is in it; the rows to draw.
    pub fn window(&mut self, height: usize, len: usize) -> std::ops::Range<usize> {
        let height = height.max(1);
        self.selected = self.selected.min(len.saturating_sub(1));
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
        self.offset = self.offset.min(len.saturating_sub(height));
        self.offset..(self.offset + height).min(len)
    }
}

/// Where the user was: for back and forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub scope: usize,
    pub screen: Screen,
    pub selected: usize,
}

const HISTORY: usize = 100;

#[derive(Debug)]
pub enum Overlay {
    Help { scroll: usize },
    Search(SearchBox),
    Chooser(Chooser),
    Viewer(Box<Viewer>),
    RunDialog(RunDialog),
}

#[derive(Debug, Default)]
pub struct SearchBox {
    pub query: String,
    pub hits: Vec<Hit>,
    pub cursor: Cursor,
    /// The generation of the newest query sent; older answers are dropped.
    pub generation: u64,
    pub waiting: bool,
}

#[derive(Debug)]
pub struct Chooser {
    pub title: String,
    pub items: Vec<(String, Target)>,
    pub cursor: Cursor,
}

/// The full-screen tensor viewer.
#[derive(Debug)]
pub struct Viewer {
    pub name: String,
    pub tensor: Tensor,
    pub stats: Option<Result<Stats, String>>,
    /// Index along each leading axis (all but the last two).
    pub lead: Vec<usize>,
    pub row: usize,
    pub col: usize,
}

#[derive(Debug)]
pub enum RunState {
    Idle,
    Running { started: Instant, progress: Arc<AtomicUsize>, cancel: Arc<AtomicBool>, total: usize },
    Done(Box<RunOutcome>),
    Failed(String),
}

/// Work for the event loop to start.
#[derive(Debug)]
pub enum Effect {
    Run(RunRequest),
    Stats { key: String, tensor: Tensor },
    Search { generation: u64, query: String },
    Export { path: PathBuf, tensor: Tensor },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagFilter {
    All,
    Errors,
    Warnings,
}

#[derive(Debug)]
pub struct App {
    pub model: Arc<Model>,
    pub label: String,
    pub model_dir: Option<PathBuf>,
    pub text: Option<TextSource>,
    pub index: Arc<Index>,
    pub analysis: Option<Analysis>,
    /// The worst finding on each node.
    pub marks: HashMap<NodeId, Severity>,
    pub screen: Screen,
    pub focus: Focus,
    pub detail_tab: DetailTab,
    pub detail_scroll: usize,
    pub scope: usize,
    /// The Graph list's cursor in each scope.
    pub graph_cursor: Vec<Cursor>,
    pub values_cursor: Cursor,
    pub values: (usize, Vec<ValueRow>),
    pub tree_cursor: Cursor,
    pub diag_cursor: Cursor,
    pub diag_filter: DiagFilter,
    pub run_cursor: Cursor,
    pub model_scroll: usize,
    pub overlays: Vec<Overlay>,
    pub back: Vec<Place>,
    pub forward: Vec<Place>,
    /// The last search's hits, for `n`/`N`, and where in them we are.
    pub last_hits: (Vec<Hit>, usize),
    pub test_data: Option<PathBuf>,
    /// The memory budget of each run (`--max-memory`; default half of what the process may
    /// use): a run that would need more fails on the Run screen, and the browser goes on.
    pub max_memory: usize,
    pub run: RunState,
    /// How inputs without test data were made last time (`None`: not chosen yet).
    pub run_sources: Option<BTreeMap<String, Source>>,
    pub run_dims: BTreeMap<String, usize>,
    pub flash: Option<String>,
    pub effects: Vec<Effect>,
    pub search_ready: bool,
    pub quit: bool,
    pending_g: bool,
    /// The body height of the last frame, for page moves.
    pub page: usize,
    /// The Text tab's node, printed once (a Constant may hold megabytes of numbers).
    text_cache: Option<(NodeId, String)>,
    /// The Model screen's facts, gathered on its first visit (the model never changes, and
    /// gathering walks every node).
    summary: Option<onnx_core::summary::Summary>,
}

impl App {
    pub fn new(loaded: Loaded, test_data: Option<PathBuf>) -> App {
        let index = Arc::new(Index::new(&loaded.model));
        let scopes = index.scopes.len();
        App {
            model: Arc::new(loaded.model),
            label: loaded.label,
            model_dir: loaded.model_dir,
            text: loaded.text,
            index,
            analysis: None,
            marks: HashMap::new(),
            screen: Screen::Graph,
            focus: Focus::List,
            detail_tab: DetailTab::Node,
            detail_scroll: 0,
            scope: 0,
            graph_cursor: vec![Cursor::default(); scopes.max(1)],
            values_cursor: Cursor::default(),
            values: (usize::MAX, Vec::new()),
            tree_cursor: Cursor::default(),
            diag_cursor: Cursor::default(),
            diag_filter: DiagFilter::All,
            run_cursor: Cursor::default(),
            model_scroll: 0,
            overlays: Vec::new(),
            back: Vec::new(),
            forward: Vec::new(),
            last_hits: (Vec::new(), 0),
            test_data,
            max_memory: onnx_eval::memory::default_budget(),
            run: RunState::Idle,
            run_sources: None,
            run_dims: BTreeMap::new(),
            flash: None,
            effects: Vec::new(),
            search_ready: false,
            quit: false,
            pending_g: false,
            page: 20,
            text_cache: None,
            summary: None,
        }
    }

    // ---- what drawing asks -----------------------------------------------------------

    /// The nodes of the current scope.
    pub fn nodes(&self) -> &[NodeId] {
        self.index.scopes.get(self.scope).map_or(&[], |s| s.nodes.as_slice())
    }

    /// The node selected in the Graph list.
    pub fn selected_node(&self) -> Option<NodeId> {
        self.nodes().get(self.graph_cursor[self.scope].selected).copied()
    }

    pub fn diagnostics(&self) -> Vec<&crate::worker::Finding> {
        let Some(a) = &self.analysis else { return Vec::new() };
        a.diagnostics
            .iter()
            .filter(|f| match self.diag_filter {
                DiagFilter::All => true,
                DiagFilter::Errors => f.diagnostic.severity == Severity::Error,
                DiagFilter::Warnings => f.diagnostic.severity == Severity::Warning,
            })
            .collect()
    }

    /// A node in the canonical text, cleaned for the terminal.
    pub fn node_text(&mut self, n: NodeId) -> &str {
        if self.text_cache.as_ref().is_none_or(|(m, _)| *m != n) {
            let text = onnx_core::print::canonical::node(&self.model, n);
            let lines: Vec<_> = text.lines().map(crate::sanitize::str).collect();
            self.text_cache = Some((n, lines.join("\n")));
        }
        self.text_cache.as_ref().map_or("", |(_, t)| t.as_str())
    }

    /// The model's facts for the Model screen, gathered once.
    pub fn summary(&mut self) -> &onnx_core::summary::Summary {
        self.summary.get_or_insert_with(|| onnx_core::summary::Summary::of(&self.model))
    }

    pub fn counts(&self) -> (usize, usize) {
        let Some(a) = &self.analysis else { return (0, 0) };
        let errors = a.diagnostics.iter().filter(|f| f.diagnostic.severity == Severity::Error).count();
        (errors, a.diagnostics.len() - errors)
    }

    /// The rows of the Values screen for the current scope (built on first use per scope).
    pub fn value_rows(&mut self) -> &[ValueRow] {
        if self.values.0 != self.scope {
            self.values = (self.scope, values_of(&self.model, &self.index, self.scope));
        }
        &self.values.1
    }

    fn place(&self) -> Place {
        let selected = match self.screen {
            Screen::Graph => self.graph_cursor[self.scope].selected,
            Screen::Values => self.values_cursor.selected,
            Screen::Tree => self.tree_cursor.selected,
            Screen::Diagnostics => self.diag_cursor.selected,
            Screen::Run => self.run_cursor.selected,
            Screen::Model => self.model_scroll,
        };
        Place { scope: self.scope, screen: self.screen, selected }
    }

    fn restore(&mut self, p: Place) {
        self.scope = p.scope.min(self.index.scopes.len().saturating_sub(1));
        self.screen = p.screen;
        match p.screen {
            Screen::Graph => self.graph_cursor[self.scope].selected = p.selected,
            Screen::Values => self.values_cursor.selected = p.selected,
            Screen::Tree => self.tree_cursor.selected = p.selected,
            Screen::Diagnostics => self.diag_cursor.selected = p.selected,
            Screen::Run => self.run_cursor.selected = p.selected,
            Screen::Model => self.model_scroll = p.selected,
        }
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

    /// Shows a node: its scope, the Graph screen, its row selected.
    pub fn go_to_node(&mut self, n: NodeId) {
        let Some(&(scope, row)) = self.index.node_at.get(&n) else { return };
        self.remember();
        self.scope = scope;
        self.screen = Screen::Graph;
        self.graph_cursor[scope].selected = row;
        self.detail_scroll = 0;
    }

    fn go_to(&mut self, target: &Target) {
        match target {
            Target::Node(n) => self.go_to_node(*n),
            Target::Value { scope, name } => {
                self.remember();
                self.scope = *scope;
                self.screen = Screen::Values;
                let row = self.value_rows().iter().position(|r| &r.name == name).unwrap_or(0);
                self.values_cursor.selected = row;
            }
        }
    }

    // ---- keys ------------------------------------------------------------------------

    pub fn key(&mut self, key: KeyEvent) {
        self.flash = None;
        match self.overlays.last_mut() {
            Some(Overlay::Search(_)) => self.search_key(key),
            Some(Overlay::RunDialog(_)) => self.dialog_key(key),
            Some(Overlay::Viewer(_)) => {
                if let Some(a) = keys::action(Context::Viewer, &key) {
                    self.viewer_action(a);
                }
            }
            Some(Overlay::Help { .. } | Overlay::Chooser(_)) => {
                let a = keys::action(Context::Overlay, &key)
                    .or_else(|| keys::action(Context::Browse, &key).filter(|a| matches!(a, Action::Down | Action::Up)))
                    .or_else(|| (key.code == KeyCode::Char('q')).then_some(Action::Escape));
                if let Some(a) = a {
                    self.overlay_action(a);
                }
            }
            None => {
                if let Some(a) = keys::action(Context::Browse, &key) {
                    self.browse(a);
                }
            }
        }
    }

    fn browse(&mut self, a: Action) {
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
            Action::NextTab | Action::PrevTab => {
                let tabs = [DetailTab::Node, DetailTab::Schema, DetailTab::Text];
                let at = tabs.iter().position(|t| *t == self.detail_tab).unwrap_or(0);
                let next = if a == Action::NextTab { at + 1 } else { at + tabs.len() - 1 };
                self.detail_tab = tabs[next % tabs.len()];
                self.detail_scroll = 0;
            }
            Action::Screen(k) => {
                if let Some(&(s, _)) = SCREENS.get(usize::from(k).saturating_sub(1)) {
                    self.screen = s;
                    self.focus = Focus::List;
                }
            }
            Action::Enter => self.enter(),
            Action::Escape if self.screen == Screen::Run && matches!(self.run, RunState::Running { .. }) => {
                self.cancel_run()
            }
            Action::Escape => self.escape(),
            Action::Producer => self.producer(),
            Action::Consumers => self.consumers(),
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
            Action::ViewOutput => {
                if let Some(n) = self.graph_node_for('v') {
                    let first = self.model.nodes[n].outputs.iter().position(|o| !o.is_empty());
                    if let Some(i) = first {
                        let name = self.model.nodes[n].outputs[i].clone();
                        self.open_value(&name, Some(Def::Node(n, i)));
                    }
                }
            }
            Action::NextHit | Action::PrevHit => self.next_hit(a == Action::NextHit),
            Action::Help => self.overlays.push(Overlay::Help { scroll: 0 }),
            Action::Quit => self.quit = true,
            Action::Run => self.start_run(),
            Action::RunDialog => self.open_run_dialog(),
            Action::Cancel => self.cancel_run(),
            Action::CycleFilter => {
                self.diag_filter = match self.diag_filter {
                    DiagFilter::All => DiagFilter::Errors,
                    DiagFilter::Errors => DiagFilter::Warnings,
                    DiagFilter::Warnings => DiagFilter::All,
                };
                self.diag_cursor = Cursor::default();
            }
            _ => {}
        }
    }

    /// Moves the focused list (or scrolls the focused detail pane).
    fn step(&mut self, delta: isize) {
        if self.focus == Focus::Detail {
            self.detail_scroll = self.detail_scroll.saturating_add_signed(delta).min(10_000);
            return;
        }
        match self.screen {
            Screen::Graph => {
                let len = self.nodes().len();
                self.graph_cursor[self.scope].step(delta, len);
                self.detail_scroll = 0;
            }
            Screen::Values => {
                let len = self.value_rows().len();
                self.values_cursor.step(delta, len);
            }
            Screen::Tree => self.tree_cursor.step(delta, self.index.scopes.len()),
            Screen::Diagnostics => {
                let len = self.diagnostics().len();
                self.diag_cursor.step(delta, len);
            }
            Screen::Run => {
                let len = self.run_rows();
                self.run_cursor.step(delta, len);
            }
            Screen::Model => self.model_scroll = self.model_scroll.saturating_add_signed(delta).min(100_000),
        }
    }

    /// Rows of the Run screen's table (one per timed node).
    pub fn run_rows(&self) -> usize {
        match &self.run {
            RunState::Done(o) => o.outputs.len() + o.timings.len(),
            _ => 0,
        }
    }

    fn enter(&mut self) {
        match self.screen {
            Screen::Graph => {
                let Some(n) = self.selected_node() else { return };
                // A node holding subgraphs: its first one becomes the scope.
                let sub = self.model.nodes[n].attributes.iter().flat_map(|a| a.subgraphs()).next();
                if let Some(s) = sub.and_then(|g| self.index.scope_of_graph(g)) {
                    self.remember();
                    self.scope = s;
                    self.detail_scroll = 0;
                } else {
                    self.focus = Focus::Detail;
                }
            }
            Screen::Values => {
                let row = self.values_cursor.selected;
                if let Some(r) = self.value_rows().get(row).cloned() {
                    self.open_value(&r.name, r.def);
                }
            }
            Screen::Tree => {
                let s = self.tree_cursor.selected;
                if s < self.index.scopes.len() {
                    self.remember();
                    self.scope = s;
                    self.screen = Screen::Graph;
                }
            }
            Screen::Diagnostics => {
                let node = self.diagnostics().get(self.diag_cursor.selected).and_then(|f| f.node);
                match node {
                    Some(n) => self.go_to_node(n),
                    None => self.flash = Some("this finding is not about a node".into()),
                }
            }
            Screen::Run => self.open_run_row(),
            Screen::Model => {}
        }
    }

    fn escape(&mut self) {
        if self.focus == Focus::Detail {
            self.focus = Focus::List;
        } else if let Some(parent) = self.index.scopes.get(self.scope).and_then(|s| s.parent) {
            let holder = self.index.scopes[self.scope].holder;
            self.scope = parent;
            if let Some(&(_, row)) = holder.and_then(|h| self.index.node_at.get(&h)) {
                self.graph_cursor[parent].selected = row;
            }
        } else if self.screen != Screen::Graph {
            self.screen = Screen::Graph;
        }
    }

    /// The Graph screen's selected node, for a key that works on it (elsewhere it says so).
    fn graph_node_for(&mut self, key: char) -> Option<NodeId> {
        let n = self.selected_node().filter(|_| self.screen == Screen::Graph);
        if n.is_none() {
            self.flash = Some(format!("{key} works on the Graph screen's selected node"));
        }
        n
    }

    /// `p`: the producer of the selected node's inputs (a chooser when several).
    fn producer(&mut self) {
        let Some(n) = self.graph_node_for('p') else { return };
        let mut items = Vec::new();
        for name in self.model.nodes[n].inputs.iter().filter(|s| !s.is_empty()) {
            let label = crate::sanitize::name(name).into_owned();
            match self.index.def(self.scope, name) {
                Some((_, Def::Node(p, _))) => {
                    items.push((format!("{label} ← {}", self.index.node_title(&self.model, p)), Target::Node(p)))
                }
                Some((s, _)) => items
                    .push((format!("{label} (input or initializer)"), Target::Value { scope: s, name: name.clone() })),
                None => {}
            }
        }
        self.choose("producer of", items);
    }

    /// `c`: the consumers of the selected node's outputs (a chooser when several).
    fn consumers(&mut self) {
        let Some(n) = self.graph_node_for('c') else { return };
        let mut items = Vec::new();
        for name in self.model.nodes[n].outputs.iter().filter(|s| !s.is_empty()) {
            for &(c, i) in self.index.consumers(self.scope, name) {
                let label =
                    format!("{} → {} input {i}", crate::sanitize::name(name), self.index.node_title(&self.model, c));
                items.push((label, Target::Node(c)));
            }
        }
        self.choose("consumer of", items);
    }

    fn choose(&mut self, what: &str, items: Vec<(String, Target)>) {
        match items.len() {
            0 => self.flash = Some(format!("no {what} this node")),
            1 => self.go_to(&items[0].1),
            _ => self.overlays.push(Overlay::Chooser(Chooser {
                title: format!("{} {what} this node", items.len()),
                items,
                cursor: Cursor::default(),
            })),
        }
    }

    fn next_hit(&mut self, forward: bool) {
        let (hits, at) = &mut self.last_hits;
        if hits.is_empty() {
            self.flash = Some("no search yet: / searches".into());
            return;
        }
        *at = if forward { (*at + 1) % hits.len() } else { (*at + hits.len() - 1) % hits.len() };
        let (target, k, total) = (hits[*at].target.clone(), *at + 1, hits.len());
        self.go_to(&target);
        self.flash = Some(format!("hit {k} of {total}"));
    }

    fn overlay_action(&mut self, a: Action) {
        let page = self.page.max(1) as isize;
        let Some(top) = self.overlays.last_mut() else { return };
        let delta = match a {
            Action::Down => 1,
            Action::Up => -1,
            Action::PageDown => page,
            Action::PageUp => -page,
            _ => 0,
        };
        match top {
            Overlay::Help { scroll } => {
                *scroll = scroll.saturating_add_signed(delta).min(keys::BINDINGS.len());
            }
            Overlay::Chooser(c) => {
                let len = c.items.len();
                c.cursor.step(delta, len);
            }
            _ => {}
        }
        match a {
            Action::Escape => {
                self.overlays.pop();
            }
            Action::Enter => {
                if let Some(Overlay::Chooser(c)) = self.overlays.pop()
                    && let Some((_, target)) = c.items.get(c.cursor.selected)
                {
                    self.go_to(target);
                }
            }
            _ => {}
        }
    }

    fn search_key(&mut self, key: KeyEvent) {
        let Some(Overlay::Search(search)) = self.overlays.last_mut() else { return };
        let mut changed = false;
        match key.code {
            KeyCode::Esc => {
                self.overlays.pop();
                return;
            }
            KeyCode::Enter => {
                let Some(Overlay::Search(search)) = self.overlays.pop() else { return };
                let at = search.cursor.selected;
                if let Some(hit) = search.hits.get(at) {
                    let target = hit.target.clone();
                    self.last_hits = (search.hits, at);
                    self.go_to(&target);
                    self.focus = Focus::List;
                } else if search.waiting {
                    self.flash = Some("still searching".into());
                } else {
                    self.flash = Some(format!("nothing matches '{}'", search.query));
                }
                return;
            }
            KeyCode::Backspace => changed = search.query.pop().is_some(),
            KeyCode::Down => search.cursor.step(1, search.hits.len()),
            KeyCode::Up => search.cursor.step(-1, search.hits.len()),
            KeyCode::Char('n') if key.modifiers.contains(ratatui::crossterm::event::KeyModifiers::CONTROL) => {
                search.cursor.step(1, search.hits.len())
            }
            KeyCode::Char('p') if key.modifiers.contains(ratatui::crossterm::event::KeyModifiers::CONTROL) => {
                search.cursor.step(-1, search.hits.len())
            }
            KeyCode::Char(c) if !c.is_control() => {
                search.query.push(c);
                changed = true;
            }
            _ => {}
        }
        if changed {
            search.generation += 1;
            search.waiting = true;
            search.cursor = Cursor::default();
            let (generation, query) = (search.generation, search.query.clone());
            self.effects.push(Effect::Search { generation, query });
        }
    }

    // ---- values ----------------------------------------------------------------------

    /// Opens a value in the viewer: a run's value when there is one, else an initializer.
    fn open_value(&mut self, name: &Str, def: Option<Def>) {
        let key = name.to_string();
        let from_run = match &self.run {
            RunState::Done(o) => o.values.get(&key).and_then(|v| v.tensor().ok().cloned()),
            _ => None,
        };
        let tensor = match (from_run, def) {
            (Some(t), _) => Ok(t),
            (None, Some(Def::Initializer(i))) => self.initializer(i),
            (None, _) => Err(format!("'{}' has no value yet: run the model (r)", crate::sanitize::name(name))),
        };
        match tensor {
            Ok(t) => self.open_viewer(key, t),
            Err(e) => self.flash = Some(e),
        }
    }

    fn initializer(&self, i: usize) -> Result<Tensor, String> {
        let Some(Body::Graph(g)) = self.index.scopes.get(self.scope).map(|s| s.body) else {
            return Err("not a graph".into());
        };
        let id = *self.model.graphs[g].initializers.get(i).ok_or("no such initializer")?;
        let mut t = self.model.tensors[id].clone();
        if t.is_external() {
            let bytes = onnx_core::external::ExternalReader::new(self.model_dir.clone())
                .read(&t)
                .map_err(|e| format!("external data: {e}"))?;
            t.raw_data = Some(bytes);
            t.external_data.clear();
            t.data_location = None;
        }
        Ok(Tensor::from_ir(&t)?)
    }

    fn open_viewer(&mut self, name: String, tensor: Tensor) {
        let lead = vec![0; tensor.rank().saturating_sub(2)];
        self.effects.push(Effect::Stats { key: name.clone(), tensor: tensor.clone() });
        self.overlays.push(Overlay::Viewer(Box::new(Viewer { name, tensor, stats: None, lead, row: 0, col: 0 })));
    }

    fn viewer_action(&mut self, a: Action) {
        let page = self.page.max(1);
        let Some(Overlay::Viewer(v)) = self.overlays.last_mut() else { return };
        let shape = &v.tensor.shape;
        let (rows, cols) = match shape.len() {
            0 => (1, 1),
            1 => (1, shape[0]),
            r => (shape[r - 2], shape[r - 1]),
        };
        match a {
            Action::Down => v.row = (v.row + 1).min(rows.saturating_sub(1)),
            Action::Up => v.row = v.row.saturating_sub(1),
            Action::PageDown => v.row = (v.row + page).min(rows.saturating_sub(1)),
            Action::PageUp => v.row = v.row.saturating_sub(page),
            Action::Right => v.col = (v.col + 1).min(cols.saturating_sub(1)),
            Action::Left => v.col = v.col.saturating_sub(1),
            Action::AxisNext | Action::AxisPrev => {
                // The leading axes count like an odometer, last axis fastest.
                let lead_dims = &shape[..v.lead.len()];
                for (k, &d) in v.lead.iter_mut().zip(lead_dims).rev() {
                    if a == Action::AxisNext {
                        if *k + 1 < d {
                            *k += 1;
                            break;
                        }
                        *k = 0;
                    } else {
                        if *k > 0 {
                            *k -= 1;
                            break;
                        }
                        *k = d.saturating_sub(1);
                    }
                }
            }
            Action::Export => {
                let file: String =
                    v.name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
                let path = PathBuf::from(format!("{file}.npy"));
                self.flash = Some(format!("exporting to {}", path.display()));
                let tensor = v.tensor.clone();
                self.effects.push(Effect::Export { path, tensor });
            }
            Action::Escape => {
                self.overlays.pop();
            }
            _ => {}
        }
    }

    fn open_run_row(&mut self) {
        let RunState::Done(o) = &self.run else { return };
        let at = self.run_cursor.selected;
        if let Some((name, value)) = o.outputs.get(at) {
            match value.tensor() {
                Ok(t) => {
                    let (name, t) = (name.clone(), t.clone());
                    self.open_viewer(name, t);
                }
                Err(e) => self.flash = Some(e.to_string()),
            }
        } else if let Some(&(n, _)) = crate::view::slowest(o).get(at - o.outputs.len()) {
            self.go_to_node(n);
        }
    }

    // ---- running ---------------------------------------------------------------------

    fn start_run(&mut self) {
        if matches!(self.run, RunState::Running { .. }) {
            self.flash = Some("a run is going on: x cancels it".into());
            return;
        }
        // Test data gives the inputs; otherwise the first run asks how to make them.
        if self.test_data.is_none() && self.run_sources.is_none() {
            self.open_run_dialog();
            return;
        }
        self.launch();
    }

    fn launch(&mut self) {
        let progress = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let total = self.model.main_graph().map_or(0, |g| g.nodes.len());
        self.effects.push(Effect::Run(RunRequest {
            test_data: self.test_data.clone(),
            sources: self.run_sources.clone().unwrap_or_default(),
            dims: self.run_dims.clone(),
            cancel: Arc::clone(&cancel),
            progress: Arc::clone(&progress),
            max_memory: self.max_memory,
        }));
        self.run = RunState::Running { started: Instant::now(), progress, cancel, total };
    }

    fn cancel_run(&mut self) {
        if let RunState::Running { cancel, .. } = &self.run {
            cancel.store(true, Ordering::Relaxed);
            self.flash = Some("cancelling…".into());
        }
    }

    fn open_run_dialog(&mut self) {
        let sources = self.run_sources.clone().unwrap_or_default();
        let dialog = RunDialog::new(&self.model, &sources, &self.run_dims);
        self.overlays.push(Overlay::RunDialog(dialog));
    }

    fn dialog_key(&mut self, key: KeyEvent) {
        let Some(Overlay::RunDialog(d)) = self.overlays.last_mut() else { return };
        match d.key(key) {
            Outcome::Stay => {}
            Outcome::Close => {
                self.overlays.pop();
            }
            Outcome::Invalid(why) => self.flash = Some(why),
            Outcome::Run { sources, dims } => {
                self.run_sources = Some(sources);
                self.run_dims = dims;
                self.overlays.pop();
                self.launch();
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
                self.run = match result {
                    Ok(outcome) => {
                        let failed = outcome.comparison.iter().filter(|c| c.difference.is_some()).count();
                        self.flash = Some(match (outcome.comparison.len(), failed) {
                            (0, _) => format!("ran in {:.1?}", outcome.total),
                            (n, 0) => format!("ran in {:.1?}: all {n} outputs match", outcome.total),
                            (n, f) => format!("ran in {:.1?}: {f} of {n} outputs differ", outcome.total),
                        });
                        RunState::Done(Box::new(outcome))
                    }
                    Err(e) => {
                        self.flash = Some("the run failed: see the Run screen (5)".into());
                        RunState::Failed(e)
                    }
                };
            }
            Report::Stats { key, stats } => {
                for o in &mut self.overlays {
                    if let Overlay::Viewer(v) = o
                        && v.name == key
                    {
                        v.stats = Some(stats.clone());
                    }
                }
            }
            Report::Found { generation, hits } => {
                if let Some(Overlay::Search(s)) = self.overlays.last_mut()
                    && s.generation == generation
                {
                    s.hits = hits;
                    s.waiting = false;
                    s.cursor = Cursor::default();
                }
            }
            Report::SearchReady => self.search_ready = true,
            Report::Failed { job, message } => {
                let what = format!("internal error in the {job}: {message} (please report it)");
                if job == "run" && matches!(self.run, RunState::Running { .. }) {
                    self.run = RunState::Failed(what.clone());
                }
                if job == "check" && self.analysis.is_none() {
                    self.analysis = Some(crate::worker::Analysis::default());
                }
                self.flash = Some(what);
            }
        }
    }

    /// Progress of a run going on: nodes done, total, and the op of the node running.
    pub fn progress(&self) -> Option<(usize, usize, String)> {
        let RunState::Running { progress, total, .. } = &self.run else { return None };
        let done = progress.load(Ordering::Relaxed);
        let op = self
            .model
            .main_graph()
            .and_then(|g| g.nodes.get(done))
            .map(|&n| crate::sanitize::opt(self.model.nodes[n].op_type.as_ref()).into_owned())
            .unwrap_or_default();
        Some((done, *total, op))
    }
}
