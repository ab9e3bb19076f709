//! Frame times of the browser on a model, for `bench/view_frames.py`: loading and
//! indexing, the first frame, a key's update and redraw (scrolling, jumping, paging, screen
//! switches) into a 200x60 test terminal, and search (building the haystack, then matching
//! each keystroke of a query). Prints one JSON object.
//!
//! With a second query (`op:Add shape:64`), also the keystrokes of that one, with the types
//! inference found (as the browser has them once the model is checked); its first
//! keystroke with `shape:` builds the type texts of every item once.
//!
//! Usage: cargo run --release -p onnx-view --example frame_times -- MODEL [QUERY [SCOPED_QUERY]]

use std::time::{Duration, Instant};

use onnx_view::app::App;
use onnx_view::{keys, search, ui};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Median and worst of a list of times, in milliseconds.
fn spread(mut times: Vec<Duration>) -> String {
    times.sort();
    let median = times.get(times.len() / 2).copied().unwrap_or_default();
    let worst = times.last().copied().unwrap_or_default();
    format!("{{\"median_ms\": {:.3}, \"max_ms\": {:.3}, \"n\": {}}}", ms(median), ms(worst), times.len())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: frame_times MODEL [QUERY]");
        std::process::exit(2);
    };
    let query = args.next().unwrap_or_else(|| "Add_99".to_owned());
    let scoped = args.next();
    let started = Instant::now();
    let loaded = onnx_view::load::load(std::path::Path::new(&path)).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let load = started.elapsed();
    let mut app = App::new(loaded, None);
    let index = started.elapsed() - load;
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("a test terminal");
    let draw_started = Instant::now();
    terminal.draw(|f| ui::draw(f, &mut app)).expect("draws");
    let first_draw = draw_started.elapsed();
    let first_frame = started.elapsed();

    let mut press = |app: &mut App, key: &str| {
        let t = Instant::now();
        app.key(keys::parse(key));
        terminal.draw(|f| ui::draw(f, app)).expect("draws");
        t.elapsed()
    };
    let scroll: Vec<Duration> = (0..300).map(|_| press(&mut app, "j")).collect();
    let page: Vec<Duration> = (0..50).map(|_| press(&mut app, "PageDown")).collect();
    let ends: Vec<Duration> = (0..20).map(|k| press(&mut app, if k % 2 == 0 { "G" } else { "Home" })).collect();
    let screens: Vec<Duration> = (0..24).map(|k| press(&mut app, &((k % 6) + 1).to_string())).collect();
    press(&mut app, "1");

    let built = Instant::now();
    let mut hay = search::Haystack::new(&app.model, &app.index);
    let haystack = built.elapsed();
    let mut typed = String::new();
    let mut matching = Vec::new();
    let mut hits = 0;
    for c in query.chars() {
        typed.push(c);
        let t = Instant::now();
        hits = hay.find(&app.model, None, &typed).len();
        matching.push(t.elapsed());
    }
    let mut scoped_json = String::new();
    if let Some(scoped) = scoped {
        let inferred = Instant::now();
        let types = std::sync::Arc::new(onnx_core::infer::infer_model(&app.model));
        let infer = inferred.elapsed();
        let (mut typed, mut times, mut first_shape, mut hits) = (String::new(), Vec::new(), None, 0);
        for c in scoped.chars() {
            typed.push(c);
            let t = Instant::now();
            hits = hay.find(&app.model, Some(&types), &typed).len();
            let took = t.elapsed();
            // The first keystroke with a `shape:` value builds the type texts.
            if first_shape.is_none() && search::Query::parse(&typed).shapes.len() == 1 {
                first_shape = Some(took);
            } else {
                times.push(took);
            }
        }
        scoped_json = format!(
            ", \"infer_ms\": {:.1}, \"scoped_query\": {:?}, \"first_shape_keystroke_ms\": {:.2},              \"scoped_keystroke\": {}, \"scoped_hits\": {}",
            ms(infer),
            scoped,
            ms(first_shape.unwrap_or_default()),
            spread(times),
            hits
        );
    }
    println!(
        "{{\"model\": {:?}, \"nodes\": {}, \"load_ms\": {:.1}, \"index_ms\": {:.1}, \"first_draw_ms\": {:.2}, \
         \"first_frame_ms\": {:.1}, \"scroll\": {}, \"page\": {}, \"ends\": {}, \"screens\": {}, \
         \"haystack_ms\": {:.1}, \"haystack_items\": {}, \"search_keystroke\": {}, \"query\": {:?}, \"hits\": {}{}}}",
        path,
        app.index.node_count(),
        ms(load),
        ms(index),
        ms(first_draw),
        ms(first_frame),
        spread(scroll),
        spread(page),
        spread(ends),
        spread(screens),
        ms(haystack),
        hay.len(),
        spread(matching),
        query,
        hits,
        scoped_json
    );
}
