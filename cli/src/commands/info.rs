//! `onnx info MODEL [--json]`.

use std::fmt::Write as _;

use onnx_core::ir::Str;
use onnx_core::summary::{Parameters, Summary, Value, human_bytes};

use crate::failure::Failure;
use crate::io::{Input, ReadOptions, read_model};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model (`-` reads stdin).
    model: String,
    /// Print the facts as one JSON object on stdout (docs/json.md).
    #[arg(long)]
    json: bool,
    /// Show long doc strings and metadata values whole (they are shortened otherwise).
    #[arg(long)]
    full: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let input = Input::parse(&args.model);
    if args.json {
        crate::json::begin("info");
        crate::json::set("file", input.label());
    }
    let model = read_model(&input, None, ReadOptions::default())?;
    let summary = Summary::of(&model);
    if args.json {
        let facts = serde_json::to_value(&summary).map_err(|e| Failure::Usage(format!("cannot format JSON: {e}")))?;
        crate::json::set_all(facts);
        return Ok(());
    }
    // Names and metadata come from the model: no control character reaches the terminal.
    let out = crate::printable::printable(&render(&input.label(), &summary, args.full)).into_owned();
    crate::io::write_output("-", out.as_bytes())
}

fn opt(s: &Option<Str>) -> String {
    s.as_ref().map_or_else(|| "-".to_owned(), Str::escaped)
}

fn values(out: &mut String, label: &str, list: &[Value]) {
    if list.is_empty() {
        let _ = writeln!(out, "  {label:<15} -");
    }
    for (i, v) in list.iter().enumerate() {
        let ty = v.ty.as_ref().map_or_else(|| "<no type>".to_owned(), ToString::to_string);
        let head = if i == 0 { label } else { "" };
        let _ = writeln!(out, "  {head:<15} {}: {ty}", opt(&v.name));
    }
}

/// Thousands separated by commas: parameter counts are read at a glance.
fn grouped(n: u64) -> String {
    onnx_core::cost::grouped(n.into())
}

/// `12,345,678 (float 12,000,000 = 45.8 MiB, int64 345,678 = 2.6 MiB)`.
fn parameters(list: &[Parameters]) -> String {
    let total: u64 = list.iter().map(|p| p.elements).fold(0, u64::saturating_add);
    let parts: Vec<String> =
        list.iter().map(|p| format!("{} {} = {}", p.elem_type, grouped(p.elements), human_bytes(p.bytes))).collect();
    format!("{} ({})", grouped(total), parts.join(", "))
}

/// Text of at most `MAX_SHOWN` characters on one line, unless `full`; says how much is left.
fn shortened(text: &str, full: bool) -> String {
    const MAX_SHOWN: usize = 120;
    if full {
        return text.to_owned();
    }
    let first_line = text.lines().next().unwrap_or("");
    let mut shown: String = first_line.chars().take(MAX_SHOWN).collect();
    if shown.len() < text.len() {
        let lines = text.lines().count();
        let rest = if lines > 1 { format!("{lines} lines") } else { format!("{} characters", text.chars().count()) };
        shown.push_str(&format!(" … ({rest}; --full shows it whole)"));
    }
    shown
}

fn render(label: &str, s: &Summary, full: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{label}");
    let num = |v: Option<i64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    let _ = writeln!(out, "  {:<15} {}", "ir_version", num(s.ir_version));
    let opsets: Vec<String> = s
        .opset_import
        .iter()
        .map(|o| format!("{} {}", if o.domain.is_empty() { "ai.onnx" } else { &o.domain }, num(o.version)))
        .collect();
    let _ = writeln!(
        out,
        "  {:<15} {}",
        "opset_import",
        if opsets.is_empty() { "-".to_owned() } else { opsets.join(", ") }
    );
    let producer = match (&s.producer_name, &s.producer_version) {
        (None, None) => "-".to_owned(),
        (name, version) => format!("{} {}", opt(name), opt(version)).trim_end_matches(" -").to_owned(),
    };
    let _ = writeln!(out, "  {:<15} {producer}", "producer");
    if s.domain.is_some() || s.model_version.is_some() {
        let _ = writeln!(out, "  {:<15} {} version {}", "model", opt(&s.domain), num(s.model_version));
    }
    if let Some(doc) = &s.doc_string {
        let _ = writeln!(out, "  {:<15} {}", "doc_string", shortened(&doc.escaped(), full));
    }
    let _ = writeln!(out, "  {:<15} {}", "graph", opt(&s.graph_name));
    values(&mut out, "inputs", &s.inputs);
    values(&mut out, "outputs", &s.outputs);
    let c = &s.counts;
    let _ = writeln!(out, "  {:<15} {} in the main graph, {} in all", "nodes", c.main_graph_nodes, c.nodes);
    let mut init = format!("{} ({})", c.initializers, human_bytes(s.initializer_bytes));
    if c.sparse_initializers > 0 {
        let _ = write!(init, ", {} sparse", c.sparse_initializers);
    }
    let _ = writeln!(out, "  {:<15} {init}", "initializers");
    if !s.initializer_parameters.is_empty() {
        let _ = writeln!(out, "  {:<15} {} in initializers", "parameters", parameters(&s.initializer_parameters));
    }
    if !s.constant_parameters.is_empty() {
        let head = if s.initializer_parameters.is_empty() { "parameters" } else { "" };
        let _ = writeln!(out, "  {head:<15} {} in Constant nodes", parameters(&s.constant_parameters));
    }
    if c.external_tensors > 0 {
        let _ = writeln!(
            out,
            "  {:<15} {} tensors, {}",
            "external data",
            c.external_tensors,
            human_bytes(s.external_tensor_bytes)
        );
    }
    let _ = writeln!(out, "  {:<15} {}", "functions", c.functions);
    let _ = writeln!(out, "  {:<15} {}", "subgraphs", c.subgraphs);
    if c.training_infos > 0 {
        let _ = writeln!(out, "  {:<15} {}", "training_info", c.training_infos);
    }
    for (i, (k, v)) in s.metadata.iter().enumerate() {
        let head = if i == 0 { "metadata" } else { "" };
        let value = v.as_ref().map_or_else(|| "-".to_owned(), |v| shortened(&v.escaped(), full));
        let _ = writeln!(out, "  {head:<15} {} = {value}", opt(k));
    }
    // Nodes without an operator type (invalid, but a model may hold them) are counted under
    // a label, not a blank.
    let label = |op: &str| if op.is_empty() { "(no op_type)".to_owned() } else { op.to_owned() };
    let ops: Vec<String> = s.op_types.iter().map(|o| format!("{} {}", label(&o.op_type), o.count)).collect();
    let _ = writeln!(out, "  {:<15} {}", "op types", if ops.is_empty() { "-".to_owned() } else { ops.join(", ") });
    out
}
