//! `--json`: one JSON object on stdout per command, the same envelope for every subcommand,
//! so a script reads every result the same way (documented in `docs/json.md`):
//!
//! ```json
//! {"schema_version": 1, "command": "check", "ok": false, "exit_code": 1,
//!  "error": "m.onnx: invalid, 2 errors", "diagnostics": [...], ...the command's fields}
//! ```
//!
//! A command that takes `--json` calls [`begin`], adds its fields with [`set`], and its
//! diagnostics arrive through [`crate::report`]; `main` writes the object when the command
//! ends, whether it succeeded or not ([`finish`]). The version goes up when a field changes
//! meaning or goes away (new fields may be added within a version).

use std::sync::Mutex;

use serde_json::{Map, Value};

/// The envelope's version (`schema_version`).
pub const SCHEMA_VERSION: u32 = 1;

struct Output {
    command: &'static str,
    fields: Map<String, Value>,
    diagnostics: Vec<Value>,
}

static OUTPUT: Mutex<Option<Output>> = Mutex::new(None);

fn with<T>(f: impl FnOnce(&mut Option<Output>) -> T) -> T {
    f(&mut OUTPUT.lock().unwrap_or_else(|p| p.into_inner()))
}

/// JSON output is wanted for this run of `command`.
pub fn begin(command: &'static str) {
    with(|o| *o = Some(Output { command, fields: Map::new(), diagnostics: Vec::new() }));
}

/// Whether [`begin`] was called: reports then go into the object instead of to stderr.
pub fn active() -> bool {
    with(|o| o.is_some())
}

/// `--json` owns stdout: a command whose data would go there too is refused.
pub fn refuse_stdout(output: &str) -> Result<(), crate::failure::Failure> {
    if output == "-" {
        return Err(crate::failure::Failure::Usage(
            "--json writes its object on stdout: give the output a file name, not `-`".into(),
        ));
    }
    Ok(())
}

/// Sets one field of the object.
pub fn set(key: &str, value: impl Into<Value>) {
    with(|o| {
        if let Some(o) = o {
            o.fields.insert(key.to_owned(), value.into());
        }
    });
}

/// Sets every field of `object` (a serialised struct) at the top level.
pub fn set_all(object: Value) {
    if let Value::Object(map) = object {
        for (key, value) in map {
            set(&key, value);
        }
    }
}

/// Adds diagnostics, in the shape `crate::report` gives them.
pub fn add_diagnostics(items: Vec<Value>) {
    with(|o| {
        if let Some(o) = o {
            o.diagnostics.extend(items);
        }
    });
}

/// Writes the object on stdout, if one was begun: `error` is the failure's message, if the
/// command failed.
pub fn finish(exit_code: u8, error: Option<&str>) {
    let Some(output) = with(Option::take) else { return };
    let mut object = Map::new();
    object.insert("schema_version".into(), SCHEMA_VERSION.into());
    object.insert("command".into(), output.command.into());
    object.insert("ok".into(), (exit_code == 0).into());
    object.insert("exit_code".into(), exit_code.into());
    object.insert("error".into(), error.map_or(Value::Null, Value::from));
    object.insert("diagnostics".into(), Value::Array(output.diagnostics));
    object.extend(output.fields);
    let text = serde_json::to_string_pretty(&Value::Object(object)).unwrap_or_default();
    // Not through `outln!`: JSON escapes control characters itself, and its backslashes
    // must stay as they are.
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout(), "{text}");
}
