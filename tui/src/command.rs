//! `:` commands, typed on the status line as in vim or k9s: what a key cannot say in one
//! letter (a name, a path). Parsed here; the app carries them out.

use std::path::PathBuf;

/// The commands and what each takes.
pub const HELP: &str =
    ":goto NAME · :run · :compare DIR · :export VALUE [FILE] · :simplify [FILE] · :diff FILE · :opset N [FILE]";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Go to the node or value of this name (in any scope).
    GoTo(String),
    /// Run the model, as `r` does.
    Run,
    /// Run and compare every intermediate value with the files of a directory that
    /// `onnx run --all-values` wrote (from onnxruntime or another build), as
    /// `onnx run --compare-values` does: the first node that differs is found and selected.
    Compare(PathBuf),
    /// Write a value (a run's, an initializer or a Constant) as `.npy`, never over a file.
    Export { value: String, file: Option<PathBuf> },
    /// Write the model simplified as `onnx simplify` makes it (a new binary file, never over
    /// one), and say how many nodes it has.
    Simplify(Option<PathBuf>),
    /// List what changed from this model to another (`onnx diff`), each change a place to
    /// go to.
    Diff(PathBuf),
    /// Write the model converted to default-domain opset N (`onnx opset`; a new binary file,
    /// never over one), or list the nodes that block it, each a place to go to.
    Opset { target: i64, file: Option<PathBuf> },
}

/// The command a line spells, or what is wrong with it.
pub fn parse(line: &str) -> Result<Command, String> {
    let line = line.trim().trim_start_matches(':').trim();
    let (word, rest) = line.split_once(char::is_whitespace).map_or((line, ""), |(w, r)| (w, r.trim()));
    let needs = |what: &str| format!(":{word} needs {what} ({HELP})");
    match word {
        "goto" | "g" if !rest.is_empty() => Ok(Command::GoTo(rest.to_owned())),
        "goto" | "g" => Err(needs("a node or value name")),
        "run" | "r" if rest.is_empty() => Ok(Command::Run),
        "compare" if !rest.is_empty() => Ok(Command::Compare(PathBuf::from(rest))),
        "compare" => Err(needs("a directory of values (onnx run --all-values writes one)")),
        "export" | "e" => {
            let mut parts = rest.split_whitespace();
            match (parts.next(), parts.next(), parts.next()) {
                (Some(value), file, None) => {
                    Ok(Command::Export { value: value.to_owned(), file: file.map(PathBuf::from) })
                }
                (None, _, _) => Err(needs("a value name")),
                _ => Err(needs("a value name and at most one file")),
            }
        }
        "simplify" if !rest.contains(char::is_whitespace) => {
            Ok(Command::Simplify((!rest.is_empty()).then(|| PathBuf::from(rest))))
        }
        "simplify" => Err(needs("at most one file")),
        "diff" if !rest.is_empty() => Ok(Command::Diff(PathBuf::from(rest))),
        "diff" => Err(needs("the model to compare with")),
        "opset" => {
            let mut parts = rest.split_whitespace();
            match (parts.next().map(str::parse::<i64>), parts.next(), parts.next()) {
                (Some(Ok(target)), file, None) => Ok(Command::Opset { target, file: file.map(PathBuf::from) }),
                _ => Err(needs("an opset number and at most one file")),
            }
        }
        "" => Err(format!("commands: {HELP}")),
        other => Err(format!("no command :{other} ({HELP})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_into_commands() {
        assert_eq!(parse("goto Conv_12"), Ok(Command::GoTo("Conv_12".into())));
        assert_eq!(parse(":run"), Ok(Command::Run));
        assert_eq!(parse("compare ort values"), Ok(Command::Compare("ort values".into())));
        assert_eq!(parse("export logits"), Ok(Command::Export { value: "logits".into(), file: None }));
        assert_eq!(
            parse("export logits out/l.npy"),
            Ok(Command::Export { value: "logits".into(), file: Some("out/l.npy".into()) })
        );
        assert!(parse("goto").is_err_and(|e| e.contains("needs a node or value name")));
        assert!(parse("frobnicate").is_err_and(|e| e.starts_with("no command :frobnicate")));
        assert!(parse("run now").is_err());
        assert_eq!(parse("simplify"), Ok(Command::Simplify(None)));
        assert_eq!(parse(":simplify small.onnx"), Ok(Command::Simplify(Some("small.onnx".into()))));
        assert!(parse("simplify a b").is_err_and(|e| e.contains("at most one file")));
        assert_eq!(parse(":diff other.onnx"), Ok(Command::Diff("other.onnx".into())));
        assert!(parse("diff").is_err_and(|e| e.contains("the model to compare with")));
        assert_eq!(parse(":opset 17"), Ok(Command::Opset { target: 17, file: None }));
        assert_eq!(parse("opset 13 old.onnx"), Ok(Command::Opset { target: 13, file: Some("old.onnx".into()) }));
        assert!(parse("opset latest").is_err_and(|e| e.contains("an opset number")));
    }
}
