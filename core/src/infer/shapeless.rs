//! Outputs onnx's inference gives no shape when an input has none. Many of onnx's
//! inference functions return before writing any output shape when an input they read
//! has no shape (`hasNInputShapes`), where our rules still derive part of one (the batch
//! size from the input, the rank from the weight). The inference that judges declarations
//! as onnx does ([`super::Env::infer_as_onnx`]) must find no more than onnx: a declaration
//! only our fuller shape contradicts is a `type-conflict-beyond-onnx` warning, not an
//! error. Which operator versions and inputs do so was measured on onnx's node tests, each
//! input in turn made shapeless (`core/schemas/gen_shapeless_inputs.py`), and
//! `core/schemas/shapeless_inputs.tsv` records it.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::env::Env;
use super::types::{Outputs, tensor_parts};
use crate::ir::TypeValue;
use crate::resolve::{NO_VALUE, Places};
use crate::schema::OpSchema;

/// (domain, operator, schema version) to the (input, output) pairs where the input's lack
/// of a shape leaves that output without one in onnx's inference (the table's `none` rows).
type Table = HashMap<(&'static str, &'static str, i64), Vec<(usize, usize)>>;

fn leaves_outputs_shapeless() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Table::new();
        let rows = include_str!("../../schemas/shapeless_inputs.tsv").lines().filter(|l| !l.starts_with('#'));
        for row in rows {
            let cols: Vec<&str> = row.split('\t').collect();
            if let [domain, op, version, input, output, "none"] = cols[..]
                && let (Ok(version), Ok(input), Ok(output)) = (version.parse(), input.parse(), output.parse())
            {
                table.entry((domain, op, version)).or_default().push((input, output));
            }
        }
        table
    })
}

/// Drops the output shapes onnx's inference would not give: each output the table names
/// beside an input that is a tensor of no shape (for this operator version).
pub(super) fn drop_shapes_onnx_leaves_out(schema: &OpSchema, inputs: Places<'_>, env: &Env<'_>, outputs: &mut Outputs) {
    let key = (schema.domain.as_str(), schema.op.as_str(), schema.since_version);
    let Some(pairs) = leaves_outputs_shapeless().get(&key) else {
        return;
    };
    let shapeless = |i: usize| {
        let value = inputs.iter().nth(i).unwrap_or(NO_VALUE);
        value != NO_VALUE && env.ty(value).and_then(tensor_parts).is_some_and(|(_, dims)| dims.is_none())
    };
    for &(input, output) in pairs {
        if shapeless(input)
            && let Some(Some(ty)) = outputs.types.get_mut(output)
            && let Some(TypeValue::Tensor(t)) = &mut ty.value
        {
            t.shape = None;
        }
    }
}
