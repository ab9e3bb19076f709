//! `onnx_text._onnx_text`: the native half of the `onnx_text` Python module.
//!
//! It speaks bytes and strings only (a model as its protobuf bytes, a tensor as the bytes of
//! a `.npy` file), so that it needs neither onnx nor NumPy to load; `onnx_text/__init__.py`
//! turns those into `onnx.ModelProto` and `numpy.ndarray` when they are installed. The work
//! is the workspace's core and evaluator, the same code the `onnx` command runs, and it runs
//! with the interpreter's lock released, so other Python threads go on meanwhile.

use std::path::PathBuf;

use bytes::Bytes;
use onnx_core::analysis::{analyze_text, span_of};
use onnx_core::check::{CheckOptions, Profile};
use onnx_core::diagnostic::{Diagnostic as CoreDiagnostic, Severity};
use onnx_core::ir::Model;
use onnx_core::pipeline::{check_model, check_text};
use onnx_core::proto_path::ProtoPaths;
use onnx_core::source_map::LineStarts;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One finding about a model: its stable code (docs/diagnostics.md), severity, message and
/// place — a line and column for a text model, a protobuf field path for a binary one.
#[pyclass(frozen, get_all, module = "onnx_text")]
#[derive(Clone, Debug)]
struct Diagnostic {
    /// The stable kebab-case code, such as `undefined-value`.
    code: String,
    /// `"error"` or `"warning"`.
    severity: String,
    message: String,
    /// 1-based line and column (in characters) of the start, for a text model.
    line: Option<usize>,
    column: Option<usize>,
    /// 1-based line and column just past the end, for a text model.
    end_line: Option<usize>,
    end_column: Option<usize>,
    /// Where in the protobuf message it is, for a binary model (`graph.node[3].input[1]`).
    path: Option<String>,
    /// Other places the finding names ("first defined here"), each as (place, what it is);
    /// a place is `line:column` in a text, a field path in a binary model.
    related: Vec<(String, String)>,
}

#[pymethods]
impl Diagnostic {
    fn __repr__(&self) -> String {
        format!("Diagnostic({} [{}] at {}: {:?})", self.severity, self.code, self.place(), self.message)
    }

    fn __str__(&self) -> String {
        format!("{}: {}[{}]: {}", self.place(), self.severity, self.code, self.message)
    }

    /// `line:column` for a text model, the field path for a binary one.
    #[getter]
    fn place(&self) -> String {
        match (self.line, self.column, &self.path) {
            (Some(line), Some(column), _) => format!("{line}:{column}"),
            (_, _, Some(path)) => path.clone(),
            _ => String::new(),
        }
    }
}

fn severity_name(s: Severity) -> String {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
    .to_owned()
}

/// A text and where its lines start: its diagnostics placed by line and column.
struct Lines<'a> {
    source: &'a str,
    starts: LineStarts,
}

impl<'a> Lines<'a> {
    fn new(source: &'a str) -> Self {
        Lines { source, starts: LineStarts::new(source) }
    }

    fn at(&self, offset: usize) -> (usize, usize) {
        self.starts.line_column(self.source, offset)
    }

    fn diagnostic(&self, d: &CoreDiagnostic) -> Diagnostic {
        let span = span_of(d.anchor);
        let (line, column) = self.at(span.start as usize);
        let (end_line, end_column) = self.at(span.end as usize);
        let related = d
            .related
            .iter()
            .map(|(anchor, what)| {
                let (l, c) = self.at(span_of(*anchor).start as usize);
                (format!("{l}:{c}"), what.clone())
            })
            .collect();
        Diagnostic {
            code: d.code.to_owned(),
            severity: severity_name(d.severity),
            message: d.message.clone(),
            line: Some(line),
            column: Some(column),
            end_line: Some(end_line),
            end_column: Some(end_column),
            path: None,
            related,
        }
    }
}

/// A text's diagnostics, placed.
fn text_diagnostics<'d>(source: &str, all: impl IntoIterator<Item = &'d CoreDiagnostic>) -> Vec<Diagnostic> {
    let lines = Lines::new(source);
    all.into_iter().map(|d| lines.diagnostic(d)).collect()
}

fn binary_diagnostic(paths: &ProtoPaths, d: &CoreDiagnostic) -> Diagnostic {
    Diagnostic {
        code: d.code.to_owned(),
        severity: severity_name(d.severity),
        message: d.message.clone(),
        line: None,
        column: None,
        end_line: None,
        end_column: None,
        path: Some(paths.path(d.anchor)),
        related: d.related.iter().map(|(a, what)| (paths.path(*a), what.clone())).collect(),
    }
}

/// The exception every failure raises: `onnx_text.OnnxTextError(message, diagnostics)`,
/// defined in Python (onnx_text/_errors.py) so that it is an ordinary class users can catch
/// and subclass. The message ends with the first diagnostic, when there is one.
fn failure(py: Python<'_>, message: String, diagnostics: Vec<Diagnostic>) -> PyErr {
    let message = match diagnostics.first() {
        Some(first) => format!("{message}: {}", first.__str__()),
        None => message,
    };
    let made = py.import("onnx_text._errors").and_then(|m| m.getattr("OnnxTextError")).and_then(|class| {
        let list = diagnostics.into_iter().map(|d| Py::new(py, d)).collect::<PyResult<Vec<_>>>()?;
        class.call1((message.clone(), list))
    });
    match made {
        Ok(instance) => PyErr::from_value(instance),
        // The Python half is missing (the native module imported on its own): still an error.
        Err(_) => PyValueError::new_err(message),
    }
}

fn decode(py: Python<'_>, model: &[u8]) -> PyResult<Model> {
    let data = Bytes::copy_from_slice(model);
    py.detach(|| onnx_core::binary::decode_model(data, "<model>"))
        .map_err(|e| failure(py, format!("not a readable ONNX model: {e}"), Vec::new()))
}

fn errors_only(diagnostics: &[Diagnostic]) -> usize {
    diagnostics.iter().filter(|d| d.severity == "error").count()
}

/// Parses ONNX text into the protobuf bytes of its model. With `strict`, a text that reads
/// but breaks a rule of meaning (an undefined value, a name defined twice) is refused too;
/// without it such a text converts, as onnx's parser converts it.
#[pyfunction]
#[pyo3(signature = (text, *, strict = false))]
fn parse<'py>(py: Python<'py>, text: &str, strict: bool) -> PyResult<Bound<'py, PyBytes>> {
    let (model, diagnostics) = py.detach(|| {
        let analysis = analyze_text(text);
        let fatal = !analysis.readable || (strict && analysis.has_errors());
        let shown = |d: &&CoreDiagnostic| fatal && d.severity == Severity::Error;
        let diagnostics = text_diagnostics(text, analysis.diagnostics.iter().filter(shown));
        ((!fatal).then_some(analysis.model), diagnostics)
    });
    let Some(model) = model else {
        let n = errors_only(&diagnostics);
        return Err(failure(py, format!("{n} error{} in the text", if n == 1 { "" } else { "s" }), diagnostics));
    };
    model_bytes(py, &model)
}

/// A model's protobuf bytes, encoded straight into the Python `bytes` (no copy of a big
/// model's tensors in between); a model protobuf cannot hold (2 GiB and more) is refused.
fn model_bytes<'py>(py: Python<'py>, model: &Model) -> PyResult<Bound<'py, PyBytes>> {
    let encoded = py.detach(|| onnx_core::binary::encode_model_spliced(model));
    if let Some(why) = onnx_core::binary::unwritable(model, encoded.len()) {
        return Err(failure(py, format!("the model cannot be encoded: {why}"), Vec::new()));
    }
    PyBytes::new_with(py, encoded.len(), |buffer| {
        let mut sink: &mut [u8] = buffer;
        py.detach(|| encoded.write_to(&mut sink)).map_err(|e| PyValueError::new_err(e.to_string()))
    })
}

/// Prints a model (protobuf bytes) as text: `canonical` reads back to exactly the same model;
/// `onnx` is byte for byte what `onnx.printer.to_text` prints. `part` `"graph"` prints only
/// the main graph, `"function"` only the first function, as onnx prints a `GraphProto` or a
/// `FunctionProto` (the onnx style only).
#[pyfunction]
#[pyo3(signature = (model, *, style = "canonical", part = "model"))]
fn to_text(py: Python<'_>, model: &[u8], style: &str, part: &str) -> PyResult<String> {
    if !matches!(style, "canonical" | "onnx") {
        return Err(PyValueError::new_err(format!("unknown style {style:?}: \"canonical\" or \"onnx\"")));
    }
    if !matches!(part, "model" | "graph" | "function") {
        return Err(PyValueError::new_err(format!("unknown part {part:?}: \"model\", \"graph\" or \"function\"")));
    }
    if part != "model" && style != "onnx" {
        return Err(PyValueError::new_err(format!(
            "a {part} alone prints in the onnx style only (style=\"onnx\"); the canonical style prints whole models"
        )));
    }
    let model = decode(py, model)?;
    let printed = py.detach(|| match (style, part) {
        ("canonical", _) => Some(onnx_core::print::canonical::model(&model)),
        (_, "graph") => Some(onnx_core::print::onnx_style::main_graph(&model)),
        (_, "function") => model.functions.first().map(|&f| onnx_core::print::onnx_style::function(&model, f)),
        _ => Some(onnx_core::print::onnx_style::model(&model)),
    });
    printed.ok_or_else(|| PyValueError::new_err("the model holds no function to print"))
}

/// Formats ONNX text (what `onnx fmt` writes); a text with syntax errors is refused.
#[pyfunction]
fn format(py: Python<'_>, text: &str) -> PyResult<String> {
    let formatted = py.detach(|| onnx_syntax::format::format_model(text));
    formatted.map_err(|_| {
        let diagnostics: Vec<_> = py.detach(|| {
            let analysis = analyze_text(text);
            text_diagnostics(text, analysis.diagnostics.iter().filter(|d| d.severity == Severity::Error))
        });
        failure(py, "the text cannot be formatted".to_owned(), diagnostics)
    })
}

/// Checks a model given as protobuf bytes or as text: every rule of onnx's checker, name
/// resolution and (with `full_check`) inference. Returns every diagnostic, errors and
/// warnings; an empty list is a valid model.
#[pyfunction]
#[pyo3(signature = (model, *, full_check = true, check_custom_domain = false, base_dir = None))]
fn check(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    full_check: bool,
    check_custom_domain: bool,
    base_dir: Option<PathBuf>,
) -> PyResult<Vec<Diagnostic>> {
    let options = CheckOptions { model_dir: base_dir, check_custom_domain, full_check, profile: Profile::None };
    if let Ok(text) = model.cast::<PyString>() {
        let text = text.to_cow()?;
        let text: &str = &text;
        return Ok(py.detach(|| {
            let checked = check_text(text, &options);
            text_diagnostics(text, &checked.diagnostics)
        }));
    }
    let Ok(data) = model.cast::<PyBytes>() else {
        return Err(PyTypeError::new_err("check takes a model's protobuf bytes or its text (str)"));
    };
    let decoded = decode(py, data.as_bytes())?;
    Ok(py.detach(|| {
        let diagnostics = check_model(&decoded, &options).diagnostics;
        let paths = if diagnostics.is_empty() { ProtoPaths::default() } else { ProtoPaths::new(&decoded) };
        diagnostics.iter().map(|d| binary_diagnostic(&paths, d)).collect()
    }))
}

/// Infers the type and shape of every value and returns the model (protobuf bytes) with them
/// recorded in its value_info, as `onnx.shape_inference.infer_shapes` does.
#[pyfunction]
fn infer<'py>(py: Python<'py>, model: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let mut decoded = decode(py, model)?;
    py.detach(|| onnx_core::infer::annotate(&mut decoded));
    model_bytes(py, &decoded)
}

/// Runs a model (protobuf bytes) on inputs given as (name, `.npy` bytes) pairs and returns
/// its outputs the same way, in the model's order. External data is read relative to
/// `base_dir`.
#[pyfunction]
#[pyo3(signature = (model, inputs, *, base_dir = None))]
fn run(
    py: Python<'_>,
    model: &[u8],
    inputs: Vec<(String, Vec<u8>)>,
    base_dir: Option<PathBuf>,
) -> PyResult<Vec<(String, Py<PyBytes>)>> {
    let mut decoded = decode(py, model)?;
    let outcome: Result<Vec<(String, Vec<u8>)>, String> = py.detach(|| {
        onnx_core::external::embed_all(&mut decoded, base_dir).map_err(|e| format!("external data: {e}"))?;
        onnx_core::order::sort_nodes(&mut decoded);
        let plan =
            onnx_eval::Plan::with_options(&decoded, &onnx_eval::PlanOptions::default()).map_err(|e| e.to_string())?;
        let values = inputs
            .into_iter()
            .map(|(name, npy)| {
                let tensor = onnx_eval::npy::decode(&npy).map_err(|e| format!("input {name:?}: {e}"))?;
                Ok((name, onnx_eval::Value::Tensor(tensor)))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let result = plan.run(values, &onnx_eval::RunOptions::default()).map_err(|e| e.to_string())?;
        result
            .outputs
            .into_iter()
            .map(|(name, value)| match value {
                onnx_eval::Value::Tensor(t) => {
                    let npy = onnx_eval::npy::encode(&t).map_err(|e| format!("output {name:?}: {e}"))?;
                    Ok((name, npy))
                }
                _ => {
                    Err(format!("output {name:?} is not a tensor (sequences, maps and optionals are not returned yet)"))
                }
            })
            .collect()
    });
    match outcome {
        Ok(outputs) => Ok(outputs.into_iter().map(|(name, npy)| (name, PyBytes::new(py, &npy).unbind())).collect()),
        Err(message) => Err(failure(py, message, Vec::new())),
    }
}

#[pymodule]
fn _onnx_text(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Diagnostic>()?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(to_text, m)?)?;
    m.add_function(wrap_pyfunction!(format, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(infer, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
