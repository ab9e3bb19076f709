//! Our shape inference against onnx 1.23.2's `infer_shapes(strict_mode=True, data_prop=True)`
//! on every corpus model, value by value (expected types in tests/fixtures/infer/expected.tsv,
//! generated with declared output types removed so that both sides infer from scratch).
//!
//! Every value must agree (the same type, or ours more precise: a known or named dim where
//! onnx has an unknown one, a rank where onnx has none, a type where onnx inferred nothing),
//! or be listed in `EXPLAINED` with the reason ours differs. The test prints the operators
//! that differ, so a regression names its rule.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use onnx_core::binary;
use onnx_core::infer::infer_main_graph;

/// Per mille of values whose inferred type equals onnx's (or is more precise).
const AGREEMENT_FLOOR: usize = 999;

/// Values where ours differs from onnx 1.23.2 on purpose, with the reason; the test fails
/// if one of these agrees again (remove it) or a difference is not listed here.
const EXPLAINED: &[(&str, &str, &str)] = &[(
    "corpus/node/test_loop13_seq/model.onnx",
    "seq_res",
    "onnx gives a loop-carried sequence the element shape of its initial value (here scalars, \
     seq(float)) whatever the body inserts; the body inserts 1-D slices, so the elements' rank \
     is not 0 and ours, seq(float[]) (unknown rank), is the sound answer",
)];

/// How `gen_expected.py` spells a name that is not UTF-8: Python's `repr` of its bytes.
fn python_bytes_repr(bytes: &[u8]) -> String {
    let mut out = String::from("b'");
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('\'');
    out
}

/// A value's name as expected.tsv spells it.
fn tsv_name(name: &[u8]) -> String {
    match std::str::from_utf8(name) {
        Ok(s) => s.to_owned(),
        Err(_) => python_bytes_repr(name),
    }
}

#[test]
fn inferred_types_agree_with_onnx() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = std::fs::read_to_string(tests.join("fixtures/infer/expected.tsv")).expect("expected.tsv");
    let mut by_model: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for line in table.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() >= 3 && cols[2] != "!" {
            by_model.entry(cols[0]).or_default().push((cols[1], cols[2]));
        }
    }
    let (mut total, mut agree, mut more_precise) = (0usize, 0usize, 0usize);
    let mut explained_seen: Vec<(String, String)> = Vec::new();
    let mut differing_ops: HashMap<String, usize> = HashMap::new();
    let mut examples: Vec<String> = Vec::new();
    for (rel, rows) in &by_model {
        let model = binary::read_model(&tests.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let inferred = infer_main_graph(&model);
        let producers: HashMap<String, String> = model
            .main_graph()
            .map(|g| {
                g.nodes
                    .iter()
                    .flat_map(|&n| {
                        let node = &model.nodes[n];
                        let op = node.op_type.as_ref().map_or_else(String::new, |o| o.escaped());
                        node.outputs.iter().map(move |o| (tsv_name(o.as_bytes()), op.clone()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        for &(name, expected) in rows {
            total += 1;
            let ours = inferred
                .types
                .iter()
                .find(|(k, _)| tsv_name(k.as_bytes()) == name)
                .map_or_else(|| "-".to_owned(), |(_, t)| t.to_string());
            match compare(&ours, expected) {
                Agreement::Same => agree += 1,
                Agreement::MorePrecise => {
                    agree += 1;
                    more_precise += 1;
                }
                Agreement::Different if EXPLAINED.iter().any(|&(m, v, _)| m == *rel && v == name) => {
                    explained_seen.push((rel.to_string(), name.to_owned()));
                }
                Agreement::Different => {
                    let op = producers.get(name).cloned().unwrap_or_default();
                    if examples.len() < 400 {
                        examples.push(format!("{op}: {rel} {name}: ours {ours}, onnx {expected}"));
                    }
                    *differing_ops.entry(op).or_default() += 1;
                }
            }
        }
    }
    let per_mille = agree * 1000 / total.max(1);
    let mut ops: Vec<(String, usize)> = differing_ops.into_iter().collect();
    ops.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!("agreement: {agree}/{total} values ({:.1}%)", agree as f64 * 100.0 / total.max(1) as f64);
    println!("of which ours is more precise: {more_precise} (a dim, rank or type where onnx has none)");
    println!("operators that differ most: {:?}", &ops[..ops.len().min(40)]);
    println!("examples:\n{}", examples.join("\n"));
    assert!(total >= 14_000, "expected.tsv is incomplete: {total} values");
    assert!(per_mille >= AGREEMENT_FLOOR, "agreement fell to {per_mille}‰, below the floor of {AGREEMENT_FLOOR}‰");
    assert!(examples.is_empty(), "{} value(s) differ from onnx without an explanation in EXPLAINED", examples.len());
    for (model, value, _) in EXPLAINED {
        assert!(
            explained_seen.iter().any(|(m, v)| m == model && v == value),
            "{model} {value} is listed in EXPLAINED but no longer differs: remove it"
        );
    }
}

enum Agreement {
    Same,
    /// Same element type and rank; every dim equal, or known to us where onnx left it unknown.
    MorePrecise,
    Different,
}

/// Splits `float[2,N]` into `float` and its dims (`None` when there are no brackets); a
/// comma inside parentheses is part of its dim (`min(64, seq)`).
fn split_type(t: &str) -> (&str, Option<Vec<&str>>) {
    match t.split_once('[') {
        Some((elem, rest)) => {
            let inner = rest.strip_suffix(']').unwrap_or(rest);
            let mut dims = Vec::new();
            let (mut depth, mut start) = (0i32, 0);
            for (i, c) in inner.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    ',' if depth == 0 => {
                        dims.push(&inner[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            if !inner.is_empty() {
                dims.push(&inner[start..]);
            }
            (elem, Some(dims))
        }
        None => (t, None),
    }
}

/// onnx names the unknown dims of its result `unk__0`, `unk__1`, …; those mean "unknown".
fn is_unknown(dim: &str) -> bool {
    dim == "?" || dim.strip_prefix("unk__").is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

fn compare(ours: &str, onnx: &str) -> Agreement {
    if ours == onnx {
        return Agreement::Same;
    }
    // onnx inferred nothing for this value; ours typed it.
    if onnx == "-" {
        return Agreement::MorePrecise;
    }
    for wrapper in ["seq(", "optional("] {
        if let (Some(a), Some(b)) = (ours.strip_prefix(wrapper), onnx.strip_prefix(wrapper)) {
            return compare(a.strip_suffix(')').unwrap_or(a), b.strip_suffix(')').unwrap_or(b));
        }
    }
    let ((our_elem, our_dims), (onnx_elem, onnx_dims)) = (split_type(ours), split_type(onnx));
    if our_elem != onnx_elem {
        return Agreement::Different;
    }
    match (our_dims, onnx_dims) {
        (Some(a), Some(b)) if a.len() == b.len() && !b.is_empty() => {
            let mut precise = false;
            for (x, y) in a.iter().zip(&b) {
                match (is_unknown(x), is_unknown(y)) {
                    (true, true) => {}
                    (false, true) => precise = true,
                    _ if x == y => {}
                    _ => return Agreement::Different,
                }
            }
            if precise { Agreement::MorePrecise } else { Agreement::Same }
        }
        // A rank where onnx has an unknown rank.
        (Some(a), Some(b)) if b.is_empty() && !a.is_empty() && onnx.ends_with("[]") => Agreement::MorePrecise,
        // A scalar (no brackets) where onnx has an unknown rank.
        (None, Some(b)) if b.is_empty() => Agreement::MorePrecise,
        _ => Agreement::Different,
    }
}

/// onnx's `check_model(full_check=True)` runs strict shape inference, which rejects a model
/// whose declared types contradict inference; so on every corpus model onnx finds valid, a
/// `type-conflict` of ours is a fault of our inference.
#[test]
fn declared_types_never_conflict_on_models_onnx_accepts() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    let verdicts = std::fs::read_to_string(tests.join("fixtures/check/verdicts.tsv")).expect("verdicts.tsv");
    let mut checked = 0;
    let mut conflicts = Vec::new();
    for line in verdicts.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 2 || cols[1] != "valid" || !cols[0].starts_with("corpus/") {
            continue;
        }
        let model = binary::read_model(&tests.join(cols[0])).unwrap_or_else(|e| panic!("{}: {e}", cols[0]));
        checked += 1;
        for d in onnx_core::infer::conflicts(&model, &onnx_core::infer::infer_model(&model)) {
            conflicts.push(format!("{}: {}", cols[0], d.message));
        }
    }
    assert!(checked > 1500, "only {checked} valid corpus models");
    assert!(conflicts.is_empty(), "{} conflict(s):\n{}", conflicts.len(), conflicts.join("\n"));
}
