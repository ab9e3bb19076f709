//! Every text `onnx.printer.to_text` produced for the corpus parses in ours, without a
//! diagnostic, to the same model onnx's own parser makes of it: the same bytes, compared by
//! the SHA-256 recorded in tests/corpus/golden/onnx-reparse.tsv.
//!
//! Exceptions: texts onnx's own parser rejects (its printer writes forms it cannot read
//! back: sparse attribute values, `...` for packed tensors) are recorded as `error` rows and
//! have no reference model; they are listed in `ONNX_CANNOT_REPARSE`.

use onnx_core::analysis::analyze_text;
use onnx_core::binary;
use onnx_tests::corpus_dir;
use sha2::{Digest, Sha256};

/// Corpus models whose onnx-printed text onnx itself cannot parse, and why.
const ONNX_CANNOT_REPARSE: &[&str] = &[
    // `sp: sparse_tensor = ` (onnx prints no value for sparse attributes).
    "handmade/all_fields.onnxtxt",
    // `...` for int2/int4/uint2/uint4/float4/float6/complex tensors.
    "handmade/tensors.onnxtxt",
    // `...` for the int4 weights of the QDQ build.
    "contrib/llama_genai_int4_qdq.onnxtxt",
    // A quoted name inside a Constant's tensor value (`<value: tensor = int64[1]
    // "/model/constants/INT64/[1]" {…}>`): onnx's printer writes it, its parser reads no
    // quoted name there. onnxruntime-genai's builder names every constant so.
    "contrib/ernie_genai_int4_embeds.onnxtxt",
    "contrib/gemma2_genai_fp32_softcap.onnxtxt",
    "contrib/gemma3_genai_int4.onnxtxt",
    "contrib/gemma_genai_int4.onnxtxt",
    "contrib/gptoss_genai_fp32.onnxtxt",
    "contrib/gptoss_genai_int4.onnxtxt",
    "contrib/granite_genai_int4_mixed.onnxtxt",
    "contrib/hunyuan_genai_int4_block128.onnxtxt",
    "contrib/llama_genai_fp32.onnxtxt",
    "contrib/llama_genai_int4.onnxtxt",
    "contrib/llama_genai_int4_asym.onnxtxt",
    "contrib/llama_genai_int4_dml.onnxtxt",
    "contrib/llama_genai_int4_kv4.onnxtxt",
    "contrib/llama_genai_int4_kv8.onnxtxt",
    "contrib/llama_genai_int8.onnxtxt",
    "contrib/mistral_genai_int4_window.onnxtxt",
    "contrib/phi3_genai_int4_longrope.onnxtxt",
    "contrib/phi_genai_int4.onnxtxt",
    "contrib/qwen35_genai_int4.onnxtxt",
    "contrib/qwen3_genai_int4.onnxtxt",
    "contrib/whisper_dec_genai_fp32.onnxtxt",
];

#[test]
fn onnx_printed_texts_parse_to_what_onnx_parses() {
    let golden = corpus_dir().join("golden");
    let table = std::fs::read_to_string(golden.join("onnx-reparse.tsv")).expect("golden table");
    let mut compared = 0;
    let mut failures = Vec::new();
    for row in table.lines() {
        let mut cols = row.split('\t');
        let (Some(rel), Some(status), Some(expected)) = (cols.next(), cols.next(), cols.next()) else {
            panic!("bad row: {row}");
        };
        if status != "ok" {
            assert!(
                ONNX_CANNOT_REPARSE.contains(&rel),
                "{rel}: onnx cannot parse its own output ({expected}); list it as an exception"
            );
            continue;
        }
        let text = std::fs::read_to_string(golden.join("onnx-text").join(rel)).expect("golden text");
        let analysis = analyze_text(&text);
        compared += 1;
        if let Some(d) = analysis.diagnostics.first() {
            failures.push(format!(
                "{rel}: {} diagnostics, first: {} {}",
                analysis.diagnostics.len(),
                d.code,
                d.message
            ));
            continue;
        }
        let bytes = binary::encode_model(&analysis.model);
        let actual = format!("{:x}", Sha256::digest(&bytes));
        if actual != expected {
            failures.push(format!("{rel}: lowered model differs from onnx's parse"));
        }
    }
    assert!(compared >= 1884, "only {compared} texts");
    assert!(
        failures.is_empty(),
        "{} of {compared} differ:\n{}",
        failures.len(),
        failures.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
}
