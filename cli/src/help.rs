//! The examples and exit codes each subcommand's `--help` ends with (the way cargo and ruff
//! show a command in use), kept beside each other so they read alike.

pub const TOP: &str = "\
Examples:
  onnx info model.onnx                          what the model holds
  onnx convert model.onnx model.onnxtxt         binary to ONNX text (and back: swap them)
  onnx check model.onnxtxt                      onnx's checker's rules, with places
  onnx run model.onnx x=input.npy --profile     run it, time by operator
  onnx diff old.onnx new.onnx                   what changed between two models
  onnx help run                                 one command's options, examples and exit codes

Exit codes: 0 done; 1 the model is invalid, cannot run, or a check failed (each command's
help says which); 2 usage or I/O error.";

pub const INFO: &str = "\
Examples:
  onnx info model.onnx              header, inputs and outputs, parameters, operators
  onnx info model.onnx --json       the same facts as JSON on stdout
  onnx info model.onnxtxt --full    long doc strings and metadata values whole

Exit codes: 0 shown; 1 the file is not a model (truncated, not protobuf, syntax errors);
2 usage or I/O error.";

pub const CONVERT: &str = "\
Examples:
  onnx convert model.onnx model.onnxtxt                  an outline: nodes first, big tensors
                                                         referred to in model.onnx
  onnx convert model.onnx model.onnxtxt --inline         every number in the text (lossless)
  onnx convert model.onnxtxt model.onnx                  text back to binary (the same bytes)
  onnx convert big.onnx big.onnxtxt --reference-input    weights left in big.onnx, referred to
  onnx convert model.onnx out.onnx --external-data w.bin tensors over 1 KiB into w.bin
  onnx convert model.onnx - --style onnx                 onnx's own printer's text, on stdout

Exit codes: 0 written; 1 the input is not a model (or breaks the rules, with --strict);
2 usage or I/O error (nothing is written then).";

pub const CHECK: &str = "\
Examples:
  onnx check model.onnx                 every rule of onnx.checker, with full-check inference
  onnx check model.onnxtxt --json       diagnostics as JSON on stdout
  onnx check model.onnx --profile sonnx also the SONNX profile's rules (as warnings)
  onnx check model.onnx --strict        fail on warnings too
  onnx check a.onnx b.onnxtxt           each model checked and reported (what a pre-commit hook runs)

Exit codes: 0 valid (warnings allowed); 1 invalid: a rule onnx's full check or onnxruntime's
loader enforces is broken (with --strict, anything was found); 2 usage or I/O error. With
several models, the worst of theirs.";

pub const INFER: &str = "\
Examples:
  onnx infer model.onnx typed.onnx       inferred types written as value_info
  onnx infer model.onnx - --to text      the annotated model as text on stdout
  onnx infer --overwrite-declared model.onnx fixed.onnx
                                         also rewrite declared types inference contradicts

Exit codes: 0 written; 1 the input is not a model; 2 usage or I/O error.";

pub const RUN: &str = "\
Examples:
  onnx run model.onnx input_0.pb                    outputs summarised on stdout
  onnx run model.onnx x=image.npy --output-dir out  outputs written as .pb files
  onnx run model.onnx --test-data test_data_set_0 --compare test_data_set_0
  onnx run model.onnx --test-data DIR --profile     time by operator

Exit codes: 0 ran (and matched, with --compare); 1 the model cannot run or outputs differ;
2 usage or I/O error.";

pub const FMT: &str = "\
Examples:
  onnx fmt model.onnxtxt            formatted in place (comments kept)
  onnx fmt models/                  every .onnxtxt and .onnxtext below the folder
  onnx fmt --check .                list what would change; exit 1 if anything would
  onnx fmt --diff model.onnxtxt     the change as a unified diff
  cat model.onnxtxt | onnx fmt -    as a filter, stdin to stdout

Exit codes: 0 formatted (or already so); 1 syntax errors, or --check/--diff found changes;
2 usage or I/O error.";

pub const EXTRACT: &str = "\
Examples:
  onnx extract model.onnx head.onnx --outputs features       from the model's inputs to features
  onnx extract model.onnx part.onnx --inputs a,b --outputs y  the nodes between a, b and y
  onnx extract model.onnx part.onnxtxt --inputs a --outputs y --json

Every value the cut needs but does not get is listed at once.
Exit codes: 0 written; 1 the
input is not a model, or the cut cannot be made; 2 usage or I/O error.";

pub const SET_DIMS: &str = "\
Examples:
  onnx set-dims model.onnx fixed.onnx batch=1               every dimension named batch is 1
  onnx set-dims model.onnx fixed.onnx input:1,3,224,224     the input's whole shape
  onnx set-dims model.onnx fixed.onnxtxt batch=1 seq=128 --json

As onnxruntime's make_dynamic_shape_fixed, then the outputs inference can fix.
Exit codes: 0 written; 1 the input is not a model, or a setting does not apply (unknown symbol or
input, other rank, a fixed size that differs); 2 usage or I/O error.";

pub const OPSET: &str = "\
Examples:
  onnx opset model.onnx model17.onnx --to 17          up or down, every node converted
  onnx opset model.onnx old.onnxtxt --to 11 --json

Each node walks its operator's versions one at a time: attributes that became inputs (and
back), Softmax's axis, Resize's coordinates, renamed operators (Upsample, Scatter), defaults
that changed. A node that cannot be expressed at the target blocks the conversion: all such
nodes are listed with their reasons and nothing is written.
Exit codes: 0 written; 1 the
input is not a model, or a node blocks the conversion; 2 usage or I/O error.";

pub const COST: &str = "\
Examples:
  onnx cost model.onnx                          totals and a table per operator
  onnx cost model.onnx batch=1 seq=128 --nodes  symbols fixed first; every node listed
  onnx cost model.onnx input:1,3,224,224 --json

MACs follow onnx-tool's convention (docs/cost.md): a multiply-add per MAC for products and
convolutions, weighted simple instructions for elementwise operators. With symbolic
dimensions left, counts are formulas in them.
Exit codes: 0 counted; 1 the input is not a
model, or a setting does not apply; 2 usage or I/O error.";

pub const SIMPLIFY: &str = "\
Examples:
  onnx simplify model.onnx small.onnx                     symbolic dimensions kept
  onnx simplify model.onnx small.onnx x:1,3,224,224       sizes fixed first: shapes fold too
  onnx simplify model.onnx small.onnxtxt --allow-growth --json

Constants are folded with the evaluator's kernels; a node whose results are bigger than its
constant inputs stays unless --allow-growth.
Exit codes: 0 written; 1 the input is not a
model, or a setting does not apply; 2 usage or I/O error.";

pub const DIFF: &str = "\
Examples:
  onnx diff model.onnx edited.onnxtxt                one line per change, with its lines
  onnx diff exported.onnx reexported.onnx --ignore-names
  onnx diff a.onnx b.onnx --json

Nodes are paired by what they compute from and what is computed from them, so a reordering is
no change; with --ignore-names a consistent renaming is none either. Initializers that differ
say by how much. Lines of a binary model are those of its text as `onnx convert` prints it.
Exit codes: 0 no differences; 1 the models differ, or an input is not a model; 2 usage or I/O
error.";

pub const REDUCE: &str = "\
Examples:
  onnx reduce model.onnx small.onnx --check 'onnx run {} --test-data {data}' --test-data DIR
  onnx reduce model.onnx small.onnx --check 'python3 compare_with_ort.py {} {data}'
  onnx reduce model.onnx small.onnx --against ort_values/ --test-data DIR

The model runs once on the inputs; each candidate (a range of its nodes, in order) is written
with the values that run made at its inputs, and the check runs on it: a non-zero exit means
it still fails. --against DIR (another runtime's values, as `onnx run --all-values` writes
them) is a check built in: each candidate runs here from that runtime's values at its inputs
and fails where an output differs from that runtime's (--rtol, --atol: 1e-5). Bisection for each end, then one node at a time.
Exit codes: 0 reduced; 1 the
check passes on the whole model, or the input is not a model; 2 usage or I/O error.";
