//! `onnx cost MODEL [SETTING…]`: multiply-accumulates, parameters and activation memory,
//! per operator (and per node with `--nodes`), from `onnx_core::cost`. Settings fix
//! symbolic dimensions first, as `onnx set-dims` takes them; without them a count that
//! depends on a symbol is a formula in it.

use std::fmt::Write as _;

use onnx_core::cost::{Count, Macs, ModelCost, grouped, model_cost};
use onnx_core::ir::{Model, Str};
use onnx_core::summary::human_bytes;
use serde_json::{Value, json};

use crate::failure::Failure;
use crate::io::{Input, ReadOptions, read_model};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model (`-` reads stdin).
    model: String,
    /// `NAME=SIZE` fixes every dimension named NAME; `INPUT:D0,D1,…` gives a graph input its
    /// whole shape (as `onnx set-dims` takes them). Without them, counts are formulas in the
    /// symbolic dimensions.
    #[arg(value_name = "SETTING")]
    settings: Vec<String>,
    /// List every node: its MACs, parameters and output bytes.
    #[arg(long)]
    nodes: bool,
    /// Print the counts as one JSON object on stdout (docs/json.md), every node included.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let input = Input::parse(&args.model);
    if args.json {
        crate::json::begin("cost");
        crate::json::set("file", input.label());
    }
    let mut model = read_model(&input, None, ReadOptions::default())?;
    crate::commands::set_dims::fix_first(&mut model, &args.settings, &input.label())?;
    let cost = model_cost(&model);
    let by_op = by_operator(&model, &cost);
    if args.json {
        crate::json::set_all(to_json(&model, &cost, &by_op));
        return Ok(());
    }
    let text = render(&input.label(), &model, &cost, &by_op, args.nodes);
    let out = crate::printable::printable(&text).into_owned();
    crate::io::write_output("-", out.as_bytes())
}

/// One operator's share: (domain::operator, nodes, MACs of the counted, parameters, output
/// bytes of known size).
struct OpTotal {
    op: String,
    nodes: usize,
    macs: Count,
    params: u64,
    output_bytes: Count,
}

fn op_name(model: &Model, cost: &onnx_core::cost::NodeCost) -> String {
    model.nodes[cost.node].op_label()
}

/// Per operator, biggest MACs first (at symbols of 1,000 where they are formulas).
fn by_operator(model: &Model, cost: &ModelCost) -> Vec<OpTotal> {
    let mut totals: Vec<OpTotal> = Vec::new();
    for n in &cost.nodes {
        let op = op_name(model, n);
        let i = match totals.iter().position(|t| t.op == op) {
            Some(i) => i,
            None => {
                totals.push(OpTotal { op, nodes: 0, macs: Count::zero(), params: 0, output_bytes: Count::zero() });
                totals.len() - 1
            }
        };
        let t = &mut totals[i];
        t.nodes += 1;
        if let Macs::Counted(m) = &n.macs {
            t.macs = t.macs.plus(m).unwrap_or_else(|| t.macs.clone());
        }
        t.params = t.params.saturating_add(n.params);
        if let Some(b) = &n.output_bytes {
            t.output_bytes = t.output_bytes.plus(b).unwrap_or_else(|| t.output_bytes.clone());
        }
    }
    totals.sort_by(|a, b| {
        b.macs.at(1000).cmp(&a.macs.at(1000)).then(b.params.cmp(&a.params)).then_with(|| a.op.cmp(&b.op))
    });
    totals
}

/// `1.48 G` (with the exact number beside it where a reader needs it).
fn short(count: &Count) -> String {
    match count.known() {
        Some(v) => {
            let v = v as f64;
            let (scaled, unit) = if v >= 1e12 {
                (v / 1e12, " T")
            } else if v >= 1e9 {
                (v / 1e9, " G")
            } else if v >= 1e6 {
                (v / 1e6, " M")
            } else if v >= 1e3 {
                (v / 1e3, " K")
            } else {
                return format!("{v}");
            };
            format!("{scaled:.2}{unit}")
        }
        None => count.to_string(),
    }
}

fn bytes(count: &Count) -> String {
    match count.known().and_then(|v| u64::try_from(v).ok()) {
        Some(v) => human_bytes(v),
        None => format!("({count}) B"),
    }
}

/// A share of the total, where both are numbers.
fn share(part: &Count, total: &Count) -> String {
    match (part.known(), total.known()) {
        (Some(p), Some(t)) if t > 0 => format!("{:.1}%", p as f64 * 100.0 / t as f64),
        _ => "-".to_owned(),
    }
}

fn macs_text(macs: &Macs) -> String {
    match macs {
        Macs::Counted(m) => exact_or_formula(m),
        Macs::ShapeUnknown => "? (shape unknown)".to_owned(),
        Macs::NoRule => "? (no rule)".to_owned(),
        Macs::Subgraphs => "? (subgraphs)".to_owned(),
    }
}

/// A number with thousands separators, or the formula it is.
fn exact_or_formula(count: &Count) -> String {
    match count.known() {
        Some(v) => grouped(v.unsigned_abs()),
        None => count.to_string(),
    }
}

/// Columns as wide as their widest cell, two spaces apart: the first `names` left-aligned,
/// the rest (counts) right-aligned.
fn table(out: &mut String, names: usize, header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.zip(&widths).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            text.push_str("  ");
            if i < names {
                text.push_str(cell);
                text.push_str(&" ".repeat(pad));
            } else {
                text.push_str(&" ".repeat(pad));
                text.push_str(cell);
            }
        }
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(&mut header.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
}

fn render(label: &str, model: &Model, cost: &ModelCost, by_op: &[OpTotal], nodes: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{label}");
    let uncounted = cost.uncounted().count();
    // A total that leaves nodes out says so on its own line, not only further down.
    let partial = if uncounted > 0 { format!(", and {uncounted} node(s) not counted") } else { String::new() };
    match cost.macs.known() {
        Some(_) => {
            let _ = writeln!(out, "  MACs          {} ({}){partial}", short(&cost.macs), exact_or_formula(&cost.macs));
        }
        None => {
            let _ = writeln!(out, "  MACs          {}{partial}", cost.macs);
        }
    }
    let _ = writeln!(out, "  parameters    {} ({})", grouped(cost.params.into()), human_bytes(cost.param_bytes));
    let _ = writeln!(out, "  activations   {} made in all", bytes(&cost.activation_bytes));
    match cost.peak {
        Some((peak, at)) => {
            let node = cost.nodes.get(at).map(|n| &model.nodes[n.node]);
            let name = node.and_then(|n| n.name.as_ref()).map_or_else(|| format!("#{at}"), Str::escaped);
            let _ = writeln!(
                out,
                "  peak          {} live at once (at node {name})",
                human_bytes(u64::try_from(peak).unwrap_or(u64::MAX))
            );
        }
        None => {
            let _ =
                writeln!(out, "  peak          - (sizes are symbolic or unknown; fix them: onnx cost MODEL batch=1)");
        }
    }
    let uncounted: Vec<&onnx_core::cost::NodeCost> = cost.uncounted().collect();
    if !uncounted.is_empty() {
        let mut reasons: Vec<(String, usize)> = Vec::new();
        for n in &uncounted {
            let why = match n.macs {
                Macs::ShapeUnknown => "shape unknown",
                Macs::NoRule => "no rule",
                _ => "subgraphs",
            };
            let key = format!("{} ({why})", op_name(model, n));
            match reasons.iter_mut().find(|(k, _)| *k == key) {
                Some((_, c)) => *c += 1,
                None => reasons.push((key, 1)),
            }
        }
        let list: Vec<String> = reasons.iter().map(|(k, c)| format!("{k} ×{c}")).collect();
        let _ = writeln!(out, "  not counted   {} node(s): {}", uncounted.len(), list.join(", "));
        if reasons.iter().any(|(k, _)| k.ends_with("(shape unknown)")) {
            let _ = writeln!(
                out,
                "                (shapes inference leaves unknown: give the inputs' sizes, e.g. onnx cost MODEL x:1,3,224,224)"
            );
        }
    }
    let _ = writeln!(out);
    let rows: Vec<Vec<String>> = by_op
        .iter()
        .map(|t| {
            vec![
                t.op.clone(),
                t.nodes.to_string(),
                exact_or_formula(&t.macs),
                share(&t.macs, &cost.macs),
                grouped(t.params.into()),
                bytes(&t.output_bytes),
            ]
        })
        .collect();
    table(&mut out, 1, &["operator", "nodes", "MACs", "share", "parameters", "outputs"], &rows);
    if nodes {
        let _ = writeln!(out);
        let rows: Vec<Vec<String>> = cost
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let node = &model.nodes[n.node];
                vec![
                    node.name.as_ref().filter(|s| !s.is_empty()).map_or_else(|| format!("#{i}"), Str::escaped),
                    op_name(model, n),
                    macs_text(&n.macs),
                    grouped(n.params.into()),
                    n.output_bytes.as_ref().map_or_else(|| "?".to_owned(), bytes),
                ]
            })
            .collect();
        table(&mut out, 2, &["node", "operator", "MACs", "parameters", "outputs"], &rows);
    }
    out
}

/// A count in JSON: a number when it is one, else its formula as a string.
fn count_json(count: &Count) -> Value {
    match count.known() {
        Some(v) => i64::try_from(v).map_or_else(|_| Value::String(v.to_string()), Value::from),
        None => Value::String(count.to_string()),
    }
}

fn to_json(model: &Model, cost: &ModelCost, by_op: &[OpTotal]) -> Value {
    let nodes: Vec<Value> = cost
        .nodes
        .iter()
        .map(|n| {
            let node = &model.nodes[n.node];
            let (macs, why) = match &n.macs {
                Macs::Counted(m) => (count_json(m), Value::Null),
                Macs::ShapeUnknown => (Value::Null, json!("shape unknown")),
                Macs::NoRule => (Value::Null, json!("no rule")),
                Macs::Subgraphs => (Value::Null, json!("subgraphs")),
            };
            json!({
                "name": node.name.as_ref().map(Str::escaped),
                "op": op_name(model, n),
                "output": node.outputs.first().map(Str::escaped),
                "macs": macs,
                "not_counted": why,
                "params": n.params,
                "param_bytes": n.param_bytes,
                "output_bytes": n.output_bytes.as_ref().map(count_json),
            })
        })
        .collect();
    let ops: Vec<Value> = by_op
        .iter()
        .map(|t| {
            json!({
                "op": t.op,
                "nodes": t.nodes,
                "macs": count_json(&t.macs),
                "params": t.params,
                "output_bytes": count_json(&t.output_bytes),
            })
        })
        .collect();
    json!({
        "macs": count_json(&cost.macs),
        "params": cost.params,
        "param_bytes": cost.param_bytes,
        "activation_bytes": count_json(&cost.activation_bytes),
        "peak_bytes": cost.peak.map(|(b, _)| u64::try_from(b).unwrap_or(u64::MAX)),
        "peak_at": cost.peak.map(|(_, at)| at),
        "peak_node": cost.peak.and_then(|(_, at)| cost.nodes.get(at)).and_then(|n| model.nodes[n.node].name.as_ref().map(Str::escaped)),
        "not_counted": cost.uncounted().count(),
        "by_op": ops,
        "nodes": nodes,
    })
}
