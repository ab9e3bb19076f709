//! Editing a one-line text field (the search query, the run dialog's seeds, paths and
//! dimensions) with the keys a terminal user's fingers expect from readline: Backspace,
//! Ctrl-U (clear), Ctrl-W and Alt-Backspace (the word before). Letters typed with Ctrl or
//! Alt held are commands, never text.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The longest text a field holds.
pub const MAX_LEN: usize = 4096;

/// A field's text, and whether it still shows what it was given: the first character typed
/// then replaces it (a dimension's `1` becomes `4`, not `14`), as a selected field would.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Field {
    pub text: String,
    pub untouched: bool,
}

impl Field {
    /// A field showing `text` until the user types.
    pub fn given(text: impl Into<String>) -> Field {
        Field { text: text.into(), untouched: true }
    }

    /// Applies an editing key; whether the text changed. `accepts` says which characters
    /// the field takes (digits only for numbers). Keys that do not edit are left alone.
    pub fn edit(&mut self, key: KeyEvent, accepts: impl Fn(char) -> bool) -> bool {
        let before = self.text.clone();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('u') if ctrl => self.text.clear(),
            KeyCode::Char('w') if ctrl => self.delete_word(),
            KeyCode::Char('h') if ctrl => drop(self.text.pop()),
            KeyCode::Backspace if alt || ctrl => self.delete_word(),
            KeyCode::Backspace => drop(self.text.pop()),
            KeyCode::Char(c) if !ctrl && !alt && !c.is_control() && accepts(c) => {
                if self.untouched {
                    self.text.clear();
                }
                if self.text.len() < MAX_LEN {
                    self.text.push(c);
                }
            }
            _ => return false,
        }
        self.untouched = false;
        self.text != before
    }

    /// Deletes the word before the end and what separates it from the end, as readline's
    /// Ctrl-W does (a word ends at white space or a path separator, so a path loses one
    /// part at a time).
    fn delete_word(&mut self) {
        let separator = |c: char| c.is_whitespace() || c == '/';
        let end = self.text.trim_end_matches(separator).len();
        let start = self.text[..end].trim_end_matches(|c: char| !separator(c)).len();
        self.text.truncate(start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    fn typed(field: &mut Field, text: &str) {
        for c in text.chars() {
            field.edit(key(KeyCode::Char(c), KeyModifiers::NONE), |_| true);
        }
    }

    #[test]
    fn readline_keys_edit_and_never_type_letters() {
        let mut f = Field::default();
        typed(&mut f, "models/bert base");
        assert!(f.edit(key(KeyCode::Char('w'), KeyModifiers::CONTROL), |_| true));
        assert_eq!(f.text, "models/bert ");
        f.edit(key(KeyCode::Char('w'), KeyModifiers::CONTROL), |_| true);
        assert_eq!(f.text, "models/");
        f.edit(key(KeyCode::Backspace, KeyModifiers::ALT), |_| true);
        assert_eq!(f.text, "");
        typed(&mut f, "abc");
        assert!(f.edit(key(KeyCode::Char('u'), KeyModifiers::CONTROL), |_| true));
        assert_eq!(f.text, "");
        assert!(!f.edit(key(KeyCode::Char('x'), KeyModifiers::CONTROL), |_| true), "Ctrl-X types nothing");
        assert!(!f.edit(key(KeyCode::Char('b'), KeyModifiers::ALT), |_| true), "Alt-B types nothing");
        assert_eq!(f.text, "");
    }

    #[test]
    fn the_first_key_replaces_a_given_value() {
        let mut f = Field::given("1");
        typed(&mut f, "4");
        assert_eq!(f.text, "4");
        typed(&mut f, "2");
        assert_eq!(f.text, "42");
        let mut g = Field::given("16");
        g.edit(key(KeyCode::Backspace, KeyModifiers::NONE), |_| true);
        assert_eq!(g.text, "1", "Backspace edits the value rather than replacing it");
        let mut digits = Field::given("7");
        assert!(!digits.edit(key(KeyCode::Char('x'), KeyModifiers::NONE), |c| c.is_ascii_digit()));
        assert_eq!(digits.text, "7");
    }
}
