//! What opens over a screen, each owning its state, the keys it reads while on top, and
//! its drawing: the help, the search picker, a chooser of jumps, the tensor viewer, the
//! run dialog and the `:` command line. Overlays stack; the top one reads every key.

mod chooser;
mod command;
mod dialog;
mod help;
mod search;
mod viewer;

pub use chooser::Chooser;
pub use command::CommandLine;
pub use dialog::RunDialog;
pub use help::Help;
pub use search::{LastHits, SearchBox};
pub use viewer::{Viewer, tensor_of};

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;

use crate::component::Outcome;
use crate::keys::{self, Action, Context};

#[derive(Debug)]
pub enum Overlay {
    Help(Help),
    Search(SearchBox),
    Chooser(Chooser),
    Viewer(Box<Viewer>),
    RunDialog(RunDialog),
    Command(CommandLine),
}

impl Overlay {
    /// A key, read by this overlay on top; `page` is the height of the screen's body.
    pub fn handle_key(&mut self, key: KeyEvent, page: usize) -> Outcome {
        match self {
            Overlay::Help(h) => h.handle_key(key, page),
            Overlay::Search(s) => s.handle_key(key),
            Overlay::Chooser(c) => c.handle_key(key, page),
            Overlay::Viewer(v) => v.handle_key(key, page),
            Overlay::RunDialog(d) => d.handle_key(key),
            Overlay::Command(c) => c.handle_key(key),
        }
    }

    /// Draws over `area` (the whole terminal); `search_ready`: the search's index is built.
    pub fn draw(&mut self, frame: &mut Frame<'_>, area: Rect, search_ready: bool) {
        match self {
            Overlay::Help(h) => h.draw(frame, area),
            Overlay::Search(s) => s.draw(frame, area, search_ready),
            Overlay::Chooser(c) => c.draw(frame, area),
            Overlay::Viewer(v) => v.draw(frame, area),
            Overlay::RunDialog(d) => d.draw(frame, area),
            Overlay::Command(c) => c.draw(frame, area),
        }
    }
}

/// The keys of the list overlays (help, chooser): the pickers' bindings, `j`/`k` as on
/// the screens, and `q` as Esc.
fn list_action(key: &KeyEvent) -> Option<Action> {
    keys::action(Context::Overlay, key)
        .or_else(|| keys::action(Context::Browse, key).filter(|a| matches!(a, Action::Down | Action::Up)))
        .or_else(|| (key.code == KeyCode::Char('q')).then_some(Action::Escape))
}

/// The rows a list overlay's action moves, `page` rows a page.
fn list_delta(a: Action, page: usize) -> isize {
    let page = page.max(1) as isize;
    match a {
        Action::Down => 1,
        Action::Up => -1,
        Action::PageDown => page,
        Action::PageUp => -page,
        _ => 0,
    }
}
