//! The keymap: one table from keys to actions, per context, which `?` shows as help and
//! the status line draws hints from, so what is documented is what is bound.
//!
//! Keys are spelled `j`, `G`, `Enter`, `Esc`, `Tab`, `BackTab`, `Up`, `PageDown`, `C-d`.
//! `Ctrl-i`, `Ctrl-m`, `Ctrl-h` and `Ctrl-[` are never bound: legacy terminals send the
//! bytes of Tab, Enter, Backspace and Esc for them.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Up,
    Down,
    PageUp,
    PageDown,
    HalfUp,
    HalfDown,
    Top,
    /// The first `g` of `gg`.
    G,
    Bottom,
    NextPane,
    PrevPane,
    Enter,
    Escape,
    Screen(u8),
    Producer,
    Consumers,
    Back,
    Forward,
    Search,
    NextHit,
    PrevHit,
    Help,
    Quit,
    Run,
    RunDialog,
    Cancel,
    NextTab,
    PrevTab,
    CycleFilter,
    Left,
    Right,
    AxisPrev,
    AxisNext,
    Export,
    ViewOutput,
    Command,
    SortValues,
}

/// Where a key is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Context {
    /// Screens and panes, when no overlay is open.
    Browse,
    /// The full-screen tensor viewer.
    Viewer,
    /// Lists in overlays (search hits, choosers, help).
    Overlay,
}

#[derive(Debug)]
pub struct Binding {
    pub context: Context,
    pub keys: &'static [&'static str],
    pub action: Action,
    pub what: &'static str,
}

const fn b(context: Context, keys: &'static [&'static str], action: Action, what: &'static str) -> Binding {
    Binding { context, keys, action, what }
}

use Action as A;
use Context::{Browse, Overlay, Viewer};

pub const BINDINGS: &[Binding] = &[
    b(Browse, &["j", "Down"], A::Down, "next row"),
    b(Browse, &["k", "Up"], A::Up, "previous row"),
    b(Browse, &["PageDown", "C-f"], A::PageDown, "page down"),
    b(Browse, &["PageUp", "C-b"], A::PageUp, "page up"),
    b(Browse, &["C-d"], A::HalfDown, "half a page down"),
    b(Browse, &["C-u"], A::HalfUp, "half a page up"),
    b(Browse, &["Home"], A::Top, "first row"),
    b(Browse, &["g"], A::G, "gg: first row"),
    b(Browse, &["G", "End"], A::Bottom, "last row"),
    b(Browse, &["Tab", "l"], A::NextPane, "next pane"),
    b(Browse, &["BackTab", "h"], A::PrevPane, "previous pane"),
    b(Browse, &["Enter"], A::Enter, "open: subgraph as scope, value in the viewer, diagnostic's node"),
    b(Browse, &["Esc"], A::Escape, "close, or leave the scope"),
    b(
        Browse,
        &["1", "2", "3", "4", "5", "6", "7"],
        A::Screen(0),
        "screens: Graph Values Tree Diagnostics Run Model Flow",
    ),
    b(Browse, &["p"], A::Producer, "jump to the producer of an input"),
    b(Browse, &["c"], A::Consumers, "jump to a consumer of an output"),
    b(Browse, &["H", "Backspace"], A::Back, "back in history"),
    b(Browse, &["L"], A::Forward, "forward in history"),
    b(Browse, &["/"], A::Search, "search nodes and values in all scopes"),
    b(Browse, &[":"], A::Command, "commands: :goto NAME, :run, :compare DIR, :export VALUE [FILE]"),
    b(Browse, &["n"], A::NextHit, "next search hit"),
    b(Browse, &["N"], A::PrevHit, "previous search hit"),
    b(Browse, &["[", "]"], A::NextTab, "detail tab: Node, Schema, Text"),
    b(Browse, &["v"], A::ViewOutput, "open the selected node's output in the viewer (after a run)"),
    b(Browse, &["e"], A::CycleFilter, "diagnostics: all, errors, warnings"),
    b(Browse, &["s"], A::SortValues, "values: model order or largest first"),
    b(Browse, &["r"], A::Run, "run the model (test data, or the run dialog)"),
    b(Browse, &["R"], A::RunDialog, "run dialog: how inputs are made"),
    b(Browse, &["x"], A::Cancel, "cancel the run"),
    b(Browse, &["?"], A::Help, "this help"),
    b(Browse, &["q", "C-c"], A::Quit, "quit"),
    b(Viewer, &["j", "Down"], A::Down, "rows down"),
    b(Viewer, &["k", "Up"], A::Up, "rows up"),
    b(Viewer, &["PageDown"], A::PageDown, "page down"),
    b(Viewer, &["PageUp"], A::PageUp, "page up"),
    b(Viewer, &["h", "Left"], A::Left, "columns left"),
    b(Viewer, &["l", "Right"], A::Right, "columns right"),
    b(Viewer, &["<"], A::AxisPrev, "previous slice of the leading axes"),
    b(Viewer, &[">"], A::AxisNext, "next slice of the leading axes"),
    b(Viewer, &["E"], A::Export, "export the tensor as .npy"),
    b(Viewer, &["Esc", "q"], A::Escape, "close the viewer"),
    b(Overlay, &["Down", "C-n"], A::Down, "next"),
    b(Overlay, &["Up", "C-p"], A::Up, "previous"),
    b(Overlay, &["PageDown"], A::PageDown, "page down"),
    b(Overlay, &["PageUp"], A::PageUp, "page up"),
    b(Overlay, &["Enter"], A::Enter, "choose"),
    b(Overlay, &["Esc"], A::Escape, "close"),
];

/// The spelling of a key event in [`BINDINGS`].
pub fn spell(key: &KeyEvent) -> Option<String> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    Some(match key.code {
        KeyCode::Char(c) if ctrl => format!("C-{}", c.to_ascii_lowercase()),
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Enter => "Enter".into(),
        KeyCode::Esc => "Esc".into(),
        KeyCode::Tab => "Tab".into(),
        KeyCode::BackTab => "BackTab".into(),
        KeyCode::Backspace => "Backspace".into(),
        KeyCode::Up => "Up".into(),
        KeyCode::Down => "Down".into(),
        KeyCode::Left => "Left".into(),
        KeyCode::Right => "Right".into(),
        KeyCode::PageUp => "PageUp".into(),
        KeyCode::PageDown => "PageDown".into(),
        KeyCode::Home => "Home".into(),
        KeyCode::End => "End".into(),
        _ => return None,
    })
}

/// The action a key has in a context.
pub fn action(context: Context, key: &KeyEvent) -> Option<Action> {
    let spelled = spell(key)?;
    let binding = BINDINGS.iter().find(|b| b.context == context && b.keys.contains(&spelled.as_str()))?;
    Some(match binding.action {
        A::Screen(_) => A::Screen(spelled.parse().ok()?),
        A::NextTab if spelled == "[" => A::PrevTab,
        other => other,
    })
}

/// A key event from its spelling (for key scripts in tests and the help's round trip).
pub fn parse(spelled: &str) -> KeyEvent {
    let code = match spelled {
        "Enter" => KeyCode::Enter,
        "Esc" => KeyCode::Esc,
        "Tab" => KeyCode::Tab,
        "BackTab" => KeyCode::BackTab,
        "Backspace" => KeyCode::Backspace,
        "Up" => KeyCode::Up,
        "Down" => KeyCode::Down,
        "Left" => KeyCode::Left,
        "Right" => KeyCode::Right,
        "PageUp" => KeyCode::PageUp,
        "PageDown" => KeyCode::PageDown,
        "Home" => KeyCode::Home,
        "End" => KeyCode::End,
        s if s.starts_with("C-") && s.len() == 3 => {
            return KeyEvent::new(KeyCode::Char(s.chars().nth(2).unwrap_or(' ')), KeyModifiers::CONTROL);
        }
        s => KeyCode::Char(s.chars().next().unwrap_or(' ')),
    };
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Splits a key script into key spellings: `<Enter>`, `<C-d>` in angle brackets, any other
/// character as itself (`/Relu<Enter>p`).
pub fn script(keys: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = keys;
    while let Some(c) = rest.chars().next() {
        if c == '<'
            && let Some(end) = rest.find('>')
            && end > 1
        {
            out.push(rest[1..end].to_owned());
            rest = &rest[end + 1..];
            continue;
        }
        out.push(c.to_string());
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_key_reads_back_as_its_action() {
        for binding in BINDINGS {
            for key in binding.keys {
                let got = action(binding.context, &parse(key));
                assert!(got.is_some(), "{key} in {:?} reads as no action", binding.context);
            }
        }
        assert_eq!(action(Browse, &parse("3")), Some(A::Screen(3)));
        assert_eq!(action(Browse, &parse("[")), Some(A::PrevTab));
        assert_eq!(script("/Re<Enter>p<C-d>"), ["/", "R", "e", "Enter", "p", "C-d"]);
    }

    #[test]
    fn no_key_is_bound_twice_in_one_context() {
        let mut seen = std::collections::HashSet::new();
        for binding in BINDINGS {
            for key in binding.keys {
                assert!(seen.insert((binding.context, *key)), "{key} bound twice in {:?}", binding.context);
            }
        }
    }
}
