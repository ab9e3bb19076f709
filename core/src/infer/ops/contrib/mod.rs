//! Rules of onnxruntime's contrib operators (`com.microsoft`), whose schemas come from
//! onnxruntime's table (`core/schemas/export_schemas.py`): what its optimizers, quantizers
//! and genai builder write into the models people ship. One module per family, as for
//! the default domain; [`rule`] asks each. onnx's inference knows none of these
//! operators, so inferring as onnx does passes their nodes by (`infer::node`).

mod activation;
mod attention;
mod fused;
mod norm;
mod quant;
mod recurrent;

use super::{Family, Rule};

/// The families of `com.microsoft`; an operator is claimed by at most one.
const FAMILIES: [Family; 6] =
    [activation::rule, norm::rule, fused::rule, attention::rule, quant::rule, recurrent::rule];

pub fn rule(op: &str) -> Option<Rule> {
    FAMILIES.iter().find_map(|family| family(op))
}
