//! `onnx/binaryToText`: a binary model (`.onnx`, `.pb`) printed in our text format, so an
//! editor can open it as a document. The printer is the lossless one of `onnx convert`.

use onnx_core::binary;
use onnx_core::print::canonical;
use serde::{Deserialize, Serialize};

use crate::lsp::Uri;
use crate::workspace::file_path;

#[derive(Debug, Deserialize, Serialize)]
pub struct BinaryToTextParams {
    /// A `file:` URI of the binary model.
    pub uri: Uri,
}

#[derive(Debug, Deserialize, Serialize)]
pub struct BinaryToTextResult {
    pub text: String,
}

pub fn binary_to_text(params: &BinaryToTextParams) -> Result<BinaryToTextResult, String> {
    let path = file_path(&params.uri).ok_or_else(|| format!("{}: not a file URI", params.uri.as_str()))?;
    let model = binary::read_model(&path).map_err(|e| e.to_string())?;
    let text = canonical::model(&model).map_err(|e| format!("{}: cannot print as text: {e}", path.display()))?;
    Ok(BinaryToTextResult { text })
}
