//! onnx-view: a terminal browser for ONNX models, on the shared core (reading, checking,
//! inference) and the evaluator (running).
//!
//! Shape (Elm-like, on plain threads): keys and worker reports change the [`app::App`]
//! state; [`ui::draw`] draws it; anything slow leaves the state as an [`app::Effect`] that
//! the event loop (`main.rs`) starts on a worker thread ([`worker`]). The state tests and
//! the screen snapshots drive the same `App` without a terminal.
//!
//! * [`load`]: binary or text model from a path;
//! * [`index`]: scopes, node positions, definitions and uses per scope (built before the
//!   first frame);
//! * [`app`]: the shared state, and the routing of keys and reports; [`keys`]: the keymap,
//!   which the help shows;
//! * [`screens`] (Graph, Values, Tree, Diagnostics, Run, Model) and [`overlays`] (help,
//!   search, chooser, tensor viewer, run dialog): components, each owning its state, its
//!   keys and its drawing; [`component`]: what they share and what they ask of the app;
//! * [`view`]: rows and detail lines as data; [`ui`]: the frame's layout; [`style`]:
//!   colours and the pieces every component draws with;
//! * [`flow`]: a node's neighbourhood drawn in lanes (the Flow screen);
//! * [`worker`]: checking, running, statistics, search off the UI thread;
//! * [`search`], [`stats`], [`inputs`]: fuzzy search, tensor statistics, made-up run
//!   inputs;
//! * [`command`]: the `:` commands;
//! * [`export`]: `.npy` files that never replace one; [`field`]: one-line text editing
//!   with readline's keys;
//! * [`sanitize`]: the one boundary model strings cross before reaching the terminal.

pub mod app;
pub mod command;
pub mod component;
pub mod export;
pub mod field;
pub mod flow;
pub mod index;
pub mod inputs;
pub mod keys;
pub mod load;
pub mod overlays;
pub mod sanitize;
pub mod screens;
pub mod search;
pub mod stats;
pub mod style;
pub mod ui;
pub mod view;
pub mod worker;

use app::{App, Effect};
use crossbeam_channel::Sender;
use worker::Report;

/// Starts the work an update asked for. `search` is the search thread's query channel.
pub fn start_effects(app: &mut App, reports: &Sender<Report>, search: &Sender<worker::SearchQuery>) {
    for effect in std::mem::take(&mut app.effects) {
        match effect {
            Effect::Run(request) => {
                let (model, dir) = (std::sync::Arc::clone(&app.model), app.model_dir.clone());
                worker::spawn(reports, "run", move || Report::Ran(worker::run(&model, dir, &request)));
            }
            Effect::Stats { key, tensor } => worker::spawn(reports, "statistics", worker::stats_job(key, tensor)),
            Effect::Search { generation, query } => {
                let types = app.analysis.as_ref().map(|a| std::sync::Arc::clone(&a.types));
                let _ = search.send(worker::SearchQuery { generation, query, types });
            }
            Effect::Export { path, tensor } => app.flash = Some(export::export(&path, &tensor)),
        }
    }
}

/// Does every pending effect on this thread and applies its report (for tests, which want
/// the state after the work without a terminal or timing).
pub fn settle(app: &mut App) {
    let mut hay = search::Haystack::new(&app.model, &app.index);
    app.search_ready = true;
    while !app.effects.is_empty() {
        for effect in std::mem::take(&mut app.effects) {
            let report = match effect {
                Effect::Run(request) => Report::Ran(worker::run(&app.model, app.model_dir.clone(), &request)),
                Effect::Stats { key, tensor } => worker::stats_job(key, tensor)(),
                Effect::Search { generation, query } => {
                    let types = app.analysis.as_ref().map(|a| std::sync::Arc::clone(&a.types));
                    Report::Found { generation, hits: hay.find(&app.model, types.as_ref(), &query) }
                }
                Effect::Export { path, tensor } => {
                    app.flash = Some(export::export(&path, &tensor));
                    continue;
                }
            };
            app.report(report);
        }
    }
}

/// Checks the model on a worker (after the first frame; the text it was read from goes
/// with the job, for the findings' places).
pub fn start_check(app: &mut App, reports: &Sender<Report>) {
    let (model, text, dir) = (std::sync::Arc::clone(&app.model), app.text.take(), app.model_dir.clone());
    worker::spawn(reports, "check", move || Report::Checked(worker::analyse(&model, text.as_ref(), dir)));
}

/// Checks the model on this thread (what the worker does after the first frame).
pub fn check_now(app: &mut App) {
    let analysis = worker::analyse(&app.model, app.text.as_ref(), app.model_dir.clone());
    app.report(Report::Checked(analysis));
}
