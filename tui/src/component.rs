//! What the browser's components share, so that they import nothing of the app and the app
//! imports them: the read-only view of what no component owns ([`Shared`]), what a key asks
//! of the app beyond its component ([`Outcome`]), work for the event loop ([`Effect`]), the
//! run's state, list cursors, and the [`Component`] every screen is.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::Instant;

use onnx_core::diagnostic::Severity;
use onnx_core::infer::ModelTypes;
use onnx_core::ir::{Model, NodeId, Str};
use onnx_eval::Tensor;
use ratatui::Frame;
use ratatui::layout::Rect;

use crate::index::{Def, Index};
use crate::inputs::Source;
use crate::search::{Hit, Target};
use crate::worker::{Analysis, RunOutcome, RunRequest};

/// A screen of the browser: its own cursor and caches, how the keys that move and open
/// rows act on it, and how it draws. Keys every screen shares (screens, history, search,
/// run) are the app's; the app routes the rest to the screen shown.
pub trait Component {
    /// Moves the selection (or scrolls) by `delta` rows, within the rows there are.
    fn step(&mut self, delta: isize, cx: &Shared<'_>);
    /// Enter on the selected row.
    fn enter(&mut self, cx: &Shared<'_>) -> Outcome;
    /// The selected row (the scroll where there are no rows), for back and forward.
    fn selected(&self, cx: &Shared<'_>) -> usize;
    fn select(&mut self, row: usize, cx: &Shared<'_>);
    /// The status line's keys for this screen.
    fn hint(&self, cx: &Shared<'_>) -> &'static str;
    fn draw(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>);
    /// The list a click selects in, as last drawn; `None` where the screen has none.
    fn list(&self, _cx: &Shared<'_>) -> Option<Cursor> {
        None
    }
    /// A click on row `row` of the list: selects it, or opens it (as Enter) when it is
    /// selected already.
    fn click(&mut self, row: usize, cx: &Shared<'_>) -> Outcome {
        let at = self.selected(cx);
        if row == at {
            return self.enter(cx);
        }
        self.step(row as isize - at as isize, cx);
        Outcome::Stay
    }
}

/// What components read and none owns: the model, what workers found about it, and where
/// the user is.
#[derive(Clone, Copy, Debug)]
pub struct Shared<'a> {
    pub model: &'a Model,
    pub index: &'a Index,
    /// The model's path as given.
    pub label: &'a str,
    /// Where external data is read from.
    pub model_dir: Option<&'a PathBuf>,
    /// The checker's and inference's findings (`None` while checking).
    pub analysis: Option<&'a Analysis>,
    /// The worst finding on each node.
    pub marks: &'a HashMap<NodeId, Severity>,
    pub run: &'a RunState,
    /// The current scope (an index into `index.scopes`).
    pub scope: usize,
    pub focus: Focus,
}

impl<'a> Shared<'a> {
    /// The nodes of the current scope.
    pub fn nodes(&self) -> &'a [NodeId] {
        self.index.scopes.get(self.scope).map_or(&[], |s| s.nodes.as_slice())
    }

    /// What inference found (`None` while checking).
    pub fn types(&self) -> Option<&'a ModelTypes> {
        self.analysis.map(|a| &*a.types)
    }

    /// The finished run, if there is one.
    pub fn done(&self) -> Option<&'a RunOutcome> {
        match self.run {
            RunState::Done(o) => Some(o),
            _ => None,
        }
    }
}

/// Which pane of the Graph and Values screens the keys move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    List,
    Detail,
}

/// What a key asks of the app, beyond the component that read it: the app owns what
/// components share (the overlays, the scope and history, the status line, the queue of
/// work), so a component says what it wants and the app does it.
#[derive(Debug)]
pub enum Outcome {
    /// Nothing more to do.
    Stay,
    /// A message on the status line.
    Flash(String),
    /// Work for the event loop, and a message when there is one.
    Start { effect: Effect, saying: Option<String> },
    /// Close the overlay that read the key.
    Close,
    /// Close the overlay and say why on the status line.
    Dismiss(String),
    /// Close the overlay and go where it chose.
    Pick(Target),
    /// Close the search, keep its hits for `n`/`N` and go to hit `at`.
    Jump { hits: Vec<Hit>, at: usize },
    /// Show a node or a value (remembered for back).
    GoTo(Target),
    /// Make a scope current, on the Graph screen (remembered for back).
    EnterScope(usize),
    /// Select a node on the Graph screen while staying on this one (the Flow screen's
    /// centre, so that the list follows the drawing).
    Follow(NodeId),
    /// Move the keys to the detail pane.
    FocusDetail,
    /// Where a jump may go: none is said, one is gone to, several open a chooser titled
    /// by `what` ("producer of").
    Choose { what: &'static str, items: Vec<(String, Target)> },
    /// Open a value in the viewer: a run's value when there is one, else an initializer.
    OpenValue { name: Str, def: Option<Def> },
    /// Open a tensor in the viewer.
    View { name: String, tensor: Tensor },
    /// Open the run dialog.
    RunDialog,
    /// Close the command line and carry out the command it holds ([`crate::command`]).
    Command(String),
    /// Close the run dialog and run with these choices.
    Run { sources: BTreeMap<String, Source>, dims: BTreeMap<String, usize> },
}

/// The run: none yet, going on (with its progress counter and cancel flag), or its result.
/// Shared: the Graph and Values screens and the viewer show a finished run's values too.
#[derive(Debug)]
pub enum RunState {
    Idle,
    Running {
        started: Instant,
        progress: Arc<AtomicUsize>,
        cancel: Arc<AtomicBool>,
        total: usize,
    },
    Done(Box<RunOutcome>),
    /// Stopped with `x` before it ended: not a failure.
    Cancelled,
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

/// The selected row of a list and the first row shown; only the rows on screen are ever
/// formatted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    pub selected: usize,
    pub offset: usize,
    /// Where the list was last drawn (its box), so that a click finds its row.
    pub area: Rect,
}

impl Cursor {
    pub fn step(&mut self, delta: isize, len: usize) {
        if len == 0 {
            *self = Cursor::default();
            return;
        }
        self.selected = self.selected.saturating_add_signed(delta).min(len - 1);
    }

    /// [`Cursor::window`] for a list drawn in the box `area`, which a click then reads.
    pub fn shown_in(&mut self, area: Rect, len: usize) -> std::ops::Range<usize> {
        self.area = area;
        self.window(usize::from(area.height.saturating_sub(2)), len)
    }

    /// The row of the list under a click at `(x, y)`, if the click is on its rows.
    pub fn row_at(&self, x: u16, y: u16) -> Option<usize> {
        let a = self.area;
        let inside = x > a.x && x + 1 < a.x + a.width && y > a.y && y + 1 < a.y + a.height;
        inside.then(|| self.offset + usize::from(y - a.y - 1))
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
