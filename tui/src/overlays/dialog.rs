//! The run dialog: for each model input, where its value comes from (the test data given
//! with `--test-data`, zeros, seeded random numbers, a `.pb` or `.npy` file), and a number
//! for each symbolic dimension. Rows are the inputs, then the dimensions; Space (or ←/→)
//! changes an input's source, typing edits its seed, path or dimension (the first key
//! replaces the value shown; Ctrl-U, Ctrl-W as in readline), Enter runs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use onnx_core::ir::Model;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::component::Outcome;
use crate::field::Field;
use crate::inputs::Source;
use crate::style::{centred, dim, focus_block, heading, row};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    /// What the test-data directory holds for the input (offered only with one).
    TestData,
    Zeros,
    Random,
    File,
}

#[derive(Debug, Clone)]
pub struct InputRow {
    name: String,
    /// The declared type, as text.
    ty: String,
    choice: Choice,
    seed: Field,
    path: Field,
}

#[derive(Debug)]
pub struct RunDialog {
    pub inputs: Vec<InputRow>,
    /// Symbolic dimensions and the number typed for each.
    pub dims: Vec<(String, Field)>,
    selected: usize,
    /// Whether a test-data directory was given: its inputs are a choice, and the default.
    test_data: bool,
}

/// The main graph's inputs that no initializer gives, with their declared types.
fn needed_inputs(model: &Model) -> Vec<(String, Option<&onnx_core::ir::Type>)> {
    let Some(graph) = model.main_graph() else { return Vec::new() };
    let initialized: Vec<_> = graph.initializers.iter().filter_map(|&t| model.tensors[t].name.as_ref()).collect();
    graph
        .inputs
        .iter()
        .filter(|v| v.name.as_ref().is_some_and(|n| !initialized.contains(&n)))
        .map(|v| (v.name.as_ref().map(ToString::to_string).unwrap_or_default(), v.ty.as_ref()))
        .collect()
}

impl RunDialog {
    /// The dialog for `model`, showing the choices made last time; with `test_data`, an
    /// input not chosen otherwise comes from the test data.
    pub fn new(
        model: &Model,
        sources: &BTreeMap<String, Source>,
        dims: &BTreeMap<String, usize>,
        test_data: bool,
    ) -> RunDialog {
        let needed = needed_inputs(model);
        let inputs = needed
            .iter()
            .map(|(name, ty)| {
                let mut row = InputRow {
                    name: name.clone(),
                    ty: ty.map(crate::view::type_text).unwrap_or_else(|| "(no type)".into()),
                    choice: if test_data { Choice::TestData } else { Choice::Random },
                    seed: Field::given("0"),
                    path: Field::default(),
                };
                match sources.get(name) {
                    Some(Source::Zeros) => row.choice = Choice::Zeros,
                    Some(Source::Random { seed }) => {
                        (row.choice, row.seed) = (Choice::Random, Field::given(seed.to_string()))
                    }
                    Some(Source::File(p)) => {
                        (row.choice, row.path) = (Choice::File, Field::given(p.display().to_string()))
                    }
                    None => {}
                }
                row
            })
            .collect();
        let dims = crate::inputs::symbolic_dims(needed.iter().filter_map(|(_, t)| *t))
            .into_iter()
            .map(|d| {
                let typed = dims.get(&d).map_or_else(|| "1".to_owned(), ToString::to_string);
                (d, Field::given(typed))
            })
            .collect();
        RunDialog { inputs, dims, selected: 0, test_data }
    }

    /// The sources an input's choice steps through (Space, →), in order.
    fn choices(&self) -> &'static [Choice] {
        if self.test_data {
            &[Choice::TestData, Choice::Zeros, Choice::Random, Choice::File]
        } else {
            &[Choice::Zeros, Choice::Random, Choice::File]
        }
    }

    /// The choice `step` places after (or before) `choice`, going round.
    fn stepped(&self, choice: Choice, step: isize) -> Choice {
        let choices = self.choices();
        let at = choices.iter().position(|c| *c == choice).unwrap_or(0) as isize;
        choices[(at + step).rem_euclid(choices.len() as isize) as usize]
    }

    fn rows(&self) -> usize {
        self.inputs.len() + self.dims.len()
    }

    /// A key: edits the selected row, or Esc closes, or Enter runs with the choices (or
    /// says on the status line what cannot be used).
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        let at = self.selected;
        let input = at < self.inputs.len();
        match key.code {
            KeyCode::Esc => return Outcome::Close,
            KeyCode::Enter => return self.finish(),
            KeyCode::Down | KeyCode::Tab => self.selected = (at + 1).min(self.rows().saturating_sub(1)),
            KeyCode::Up | KeyCode::BackTab => self.selected = at.saturating_sub(1),
            KeyCode::Char(' ') | KeyCode::Right if input => {
                self.inputs[at].choice = self.stepped(self.inputs[at].choice, 1);
            }
            KeyCode::Left if input => {
                self.inputs[at].choice = self.stepped(self.inputs[at].choice, -1);
            }
            _ => {
                let digits_only = !(input && self.inputs[at].choice == Choice::File);
                if let Some(field) = self.field_at(at) {
                    field.edit(key, |c| !digits_only || c.is_ascii_digit());
                }
            }
        }
        Outcome::Stay
    }

    /// The field a row edits: a seed, a path or a dimension (none for zeros and test data).
    fn field_at(&mut self, at: usize) -> Option<&mut Field> {
        let inputs = self.inputs.len();
        if at >= inputs {
            return self.dims.get_mut(at - inputs).map(|(_, typed)| typed);
        }
        let row = &mut self.inputs[at];
        match row.choice {
            Choice::TestData | Choice::Zeros => None,
            Choice::Random => Some(&mut row.seed),
            Choice::File => Some(&mut row.path),
        }
    }

    fn finish(&self) -> Outcome {
        let mut sources = BTreeMap::new();
        for row in &self.inputs {
            let source = match row.choice {
                // Not listed: the run takes it from the test data.
                Choice::TestData => continue,
                Choice::Zeros => Source::Zeros,
                Choice::Random => match row.seed.text.parse() {
                    Ok(seed) => Source::Random { seed },
                    Err(_) => return Outcome::Flash(format!("the seed of '{}' needs a number", row.name)),
                },
                Choice::File if row.path.text.trim().is_empty() => {
                    return Outcome::Flash(format!("'{}' needs a file (.pb or .npy)", row.name));
                }
                Choice::File => Source::File(PathBuf::from(row.path.text.trim())),
            };
            sources.insert(row.name.clone(), source);
        }
        let mut dims = BTreeMap::new();
        for (name, typed) in &self.dims {
            match typed.text.parse::<usize>() {
                Ok(v) => dims.insert(name.clone(), v),
                Err(_) => return Outcome::Flash(format!("the dimension '{name}' needs a number")),
            };
        }
        Outcome::Run { sources, dims }
    }

    pub fn draw(&self, frame: &mut Frame<'_>, area: Rect) {
        let area = centred(area, 80, 70);
        frame.render_widget(Clear, area);
        let mut lines = vec![Line::styled("inputs (Space or ←/→ changes where a value comes from)", heading())];
        for (k, input) in self.inputs.iter().enumerate() {
            let source = match input.choice {
                Choice::TestData => "from the test data".to_owned(),
                Choice::Zeros => "zeros".to_owned(),
                Choice::Random => format!("random, seed {}", input.seed.text),
                Choice::File => format!("file {}▏", input.path.text),
            };
            let text = format!("  {} {}: {source}", crate::sanitize::str(&input.name), input.ty);
            lines.push(row(vec![Span::raw(text)], self.selected == k));
        }
        if self.inputs.is_empty() {
            lines.push(Line::from("  every input has an initializer"));
        }
        if !self.dims.is_empty() {
            lines.push(Line::styled("symbolic dimensions (type a number)", heading()));
        }
        for (k, (name, typed)) in self.dims.iter().enumerate() {
            let text = format!("  {} = {}", crate::sanitize::str(name), typed.text);
            lines.push(row(vec![Span::raw(text)], self.selected == self.inputs.len() + k));
        }
        lines.push(Line::styled("Enter runs · ↑/↓ move · files: .pb (TensorProto) or .npy · Esc closes", dim()));
        frame.render_widget(Paragraph::new(lines).block(focus_block(" run ".into(), true)), area);
    }
}
