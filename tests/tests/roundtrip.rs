//! Binary → IR → binary gives back the same bytes for every model and value file in the
//! corpus.

use bytes::Bytes;
use onnx_core::binary;
use onnx_proto as pb;
use onnx_tests::{corpus_models, corpus_value_files};

#[test]
fn every_corpus_model_round_trips_byte_for_byte() {
    let models = corpus_models();
    assert!(models.len() >= 1884, "corpus incomplete: {} models", models.len());
    let mut failures = Vec::new();
    for path in &models {
        let original = std::fs::read(path).expect("corpus file readable");
        let model = binary::decode_model(Bytes::from(original.clone()), &path.display().to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        let written = binary::encode_model(&model);
        if written != original {
            failures.push(path.display().to_string());
        }
        // The direct writer and prost's encoding of the same model agree, including on the
        // models whose bytes onnx did not write in canonical form.
        if written != pb::encode(&onnx_core::lower::to_proto::model(&model)) {
            failures.push(format!("{} (differs from prost's encoding)", path.display()));
        }
    }
    assert!(failures.is_empty(), "{} models changed bytes:\n{}", failures.len(), failures.join("\n"));
}

/// Value files hold TensorProto, SequenceProto, MapProto or OptionalProto; which one is not
/// recorded in the file, so each is tried in the order the backend test loader uses.
#[test]
fn every_corpus_value_file_round_trips_byte_for_byte() {
    let files = corpus_value_files();
    assert!(files.len() >= 4000, "corpus incomplete: {} value files", files.len());
    let mut failures = Vec::new();
    let mut kinds_seen = std::collections::BTreeSet::new();
    for path in &files {
        let original = Bytes::from(std::fs::read(path).expect("corpus file readable"));
        let what = path.display().to_string();
        let kind = value_kind(path);
        kinds_seen.insert(kind);
        let again = match kind {
            "sequence" => pb::encode(&pb::decode::<pb::SequenceProto>(original.clone()).expect(&what)),
            "optional" => pb::encode(&pb::decode::<pb::OptionalProto>(original.clone()).expect(&what)),
            "map" => pb::encode(&pb::decode::<pb::MapProto>(original.clone()).expect(&what)),
            _ => {
                let tensor = binary::decode_tensor(original.clone(), &what).expect(&what);
                let written = binary::encode_tensor(&tensor);
                if written != pb::encode(&onnx_core::lower::to_proto::tensor(&tensor)) {
                    failures.push(format!("{what} (differs from prost's encoding)"));
                }
                written
            }
        };
        if again != original {
            failures.push(what);
        }
    }
    assert!(failures.is_empty(), "{} value files changed bytes:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(kinds_seen.into_iter().collect::<Vec<_>>(), ["map", "optional", "sequence", "tensor"]);
}

fn model_of(value_file: &std::path::Path) -> Option<pb::ModelProto> {
    let model = value_file.parent()?.parent()?.join("model.onnx");
    pb::decode(Bytes::from(std::fs::read(model).ok()?)).ok()
}

/// The graph input/output a value file belongs to, from its file name (`input_3.pb`).
fn io_type(value_file: &std::path::Path) -> Option<pb::TypeProto> {
    let name = value_file.file_stem()?.to_str()?;
    let (kind, index) = name.split_once('_')?;
    let index: usize = index.parse().ok()?;
    let graph = model_of(value_file)?.graph?;
    let list = if kind == "input" { graph.input } else { graph.output };
    list.into_iter().nth(index)?.r#type
}

fn is_sequence_case(p: &std::path::Path) -> bool {
    io_type(p).is_some_and(|t| t.sequence_type.is_some())
}

fn is_optional_case(p: &std::path::Path) -> bool {
    io_type(p).is_some_and(|t| t.optional_type.is_some())
}

/// Which message a value file holds: hand-made ones say so in their name; backend test
/// files are typed by the graph input or output they belong to.
fn value_kind(p: &std::path::Path) -> &'static str {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    for kind in ["sequence", "optional", "map"] {
        if name.starts_with(kind) {
            return kind;
        }
    }
    if is_sequence_case(p) {
        "sequence"
    } else if is_optional_case(p) {
        "optional"
    } else {
        "tensor"
    }
}
