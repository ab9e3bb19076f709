//! String operators: StringConcat, StringSplit, StringNormalizer, RegexFullMatch (RE2
//! syntax through the `regex` crate, whose linear-time matching is what RE2 promises).

use onnx_core::ir::AttributeValue;

use super::{Ctx, Kernel, input, one};
use crate::error::{KernelError, bad_attribute, bad_input, limit};
use crate::kernels::elementwise::zip;
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "StringConcat" => |ctx, i| {
            let (a, b) = (input(i, 0)?, input(i, 1)?);
            let (Data::Str(x), Data::Str(y)) = (&*a.data, &*b.data) else {
                return Err(bad_input!("StringConcat takes strings"));
            };
            let (xi, yi): (Vec<usize>, Vec<usize>) = ((0..x.len()).collect(), (0..y.len()).collect());
            let (shape, out) =
                zip(ctx, &xi, &a.shape, &yi, &b.shape, |p, q| [x[p].as_slice(), y[q].as_slice()].concat())?;
            one(Tensor::new(shape, Data::Str(out)))
        },
        "StringSplit" => string_split,
        "StringNormalizer" => string_normalizer,
        "RegexFullMatch" => |ctx, i| {
            let t = input(i, 0)?;
            let Data::Str(s) = &*t.data else { return Err(bad_input!("RegexFullMatch takes strings")) };
            let pattern = ctx.string("pattern").ok_or(bad_attribute!("pattern is required"))?;
            let re = regex::bytes::RegexBuilder::new(&format!("^(?:{pattern})$"))
                .size_limit(32 << 20)
                .build()
                .map_err(|e| match e {
                    regex::Error::CompiledTooBig(_) => limit!("pattern: {e}"),
                    _ => bad_attribute!("pattern: {e}"),
                })?;
            one(Tensor::new(t.shape.clone(), Data::Bool(s.iter().map(|x| re.is_match(x)).collect())))
        },
        _ => return None,
    };
    Some(k)
}

fn strings<'t>(t: &'t Tensor, what: &str) -> Result<&'t [Vec<u8>], KernelError> {
    match &*t.data {
        Data::Str(s) => Ok(s),
        _ => Err(bad_input!("{what} takes strings")),
    }
}

/// Each string split by `delimiter` (runs of whitespace when absent), at most `maxsplit`
/// times; the pieces padded with empty strings to the longest, and each string's count.
fn string_split(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let s = strings(t, "StringSplit")?;
    let delimiter = ctx
        .node
        .attribute("delimiter")
        .and_then(|a| a.s.as_ref())
        .map(|d| d.as_bytes().to_vec())
        .filter(|d| !d.is_empty());
    let maxsplit = ctx.int("maxsplit").and_then(|m| usize::try_from(m).ok());
    let pieces: Vec<Vec<Vec<u8>>> = s
        .iter()
        .map(|text| {
            let mut out: Vec<Vec<u8>> = Vec::new();
            match &delimiter {
                Some(d) => {
                    let mut rest: &[u8] = text;
                    while let Some(at) = rest.windows(d.len()).position(|w| w == d.as_slice()) {
                        if maxsplit.is_some_and(|m| out.len() >= m) {
                            break;
                        }
                        out.push(rest[..at].to_vec());
                        rest = &rest[at + d.len()..];
                    }
                    out.push(rest.to_vec());
                }
                None => {
                    let words: Vec<&[u8]> = text.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty()).collect();
                    match maxsplit {
                        Some(m) if words.len() > m + 1 => {
                            out.extend(words[..m].iter().map(|w| w.to_vec()));
                            // The rest keeps its inner whitespace, without the leading run.
                            let consumed = text.len() - {
                                let mut seen = 0;
                                let mut at = 0;
                                while seen < m {
                                    while text[at].is_ascii_whitespace() {
                                        at += 1;
                                    }
                                    while at < text.len() && !text[at].is_ascii_whitespace() {
                                        at += 1;
                                    }
                                    seen += 1;
                                }
                                while at < text.len() && text[at].is_ascii_whitespace() {
                                    at += 1;
                                }
                                text.len() - at
                            };
                            out.push(text[consumed..].to_vec());
                        }
                        _ => out.extend(words.iter().map(|w| w.to_vec())),
                    }
                }
            }
            out
        })
        .collect();
    let widest = pieces.iter().map(Vec::len).max().unwrap_or(0);
    // Every string padded to the most pieces: one long string among many makes a large
    // result.
    let total = pieces.len().checked_mul(widest).ok_or(limit!("the split strings overflow"))?;
    ctx.check_grown(total, t.len())?;
    let mut flat = Vec::with_capacity(total);
    let mut counts = Vec::with_capacity(pieces.len());
    for p in pieces {
        counts.push(p.len() as i64);
        let n = p.len();
        flat.extend(p);
        flat.extend(std::iter::repeat_n(Vec::new(), widest - n));
    }
    let mut shape = t.shape.clone();
    shape.push(widest);
    Ok(vec![
        Value::Tensor(Tensor::new(shape, Data::Str(flat))),
        Value::Tensor(Tensor::new(t.shape.clone(), Data::I64(counts.into()))),
    ])
}

fn string_normalizer(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let s = strings(t, "StringNormalizer")?;
    let sensitive = ctx.int("is_case_sensitive").unwrap_or(0) != 0;
    let stopwords: Vec<Vec<u8>> = match ctx.node.attribute("stopwords").and_then(|a| a.value()) {
        Some(AttributeValue::Strings(w)) => w.iter().map(|x| x.as_bytes().to_vec()).collect(),
        _ => Vec::new(),
    };
    let fold = |x: &[u8]| String::from_utf8_lossy(x).to_lowercase().into_bytes();
    let is_stop = |x: &[u8]| stopwords.iter().any(|w| if sensitive { w.as_slice() == x } else { fold(w) == fold(x) });
    let action = ctx.string("case_change_action").unwrap_or("NONE");
    let change = |x: &[u8]| -> Vec<u8> {
        let text = String::from_utf8_lossy(x);
        match action {
            "LOWER" => text.to_lowercase().into_bytes(),
            "UPPER" => text.to_uppercase().into_bytes(),
            _ => x.to_vec(),
        }
    };
    let kept: Vec<Vec<u8>> = s.iter().filter(|x| !is_stop(x)).map(|x| change(x)).collect();
    // All filtered out: one empty string, as the spec says.
    let kept = if kept.is_empty() { vec![Vec::new()] } else { kept };
    let shape = if t.rank() == 2 { vec![1, kept.len()] } else { vec![kept.len()] };
    one(Tensor::new(shape, Data::Str(kept)))
}
