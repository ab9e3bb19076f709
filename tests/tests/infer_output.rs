//! What `onnx infer` writes for a binary model: the input's bytes with the inferred value
//! descriptions appended to the main graph (`binary::append_value_info`). Decoded, that must
//! be the annotated model, the same as encoding the annotated model whole gives.

use bytes::Bytes;
use onnx_core::binary;
use onnx_core::infer::annotate;
use onnx_tests::corpus_models;
use onnx_tests::wire::len_field;

#[test]
fn appended_value_info_decodes_as_the_annotated_model() {
    let models = corpus_models();
    assert!(models.len() >= 1884, "corpus incomplete: {} models", models.len());
    let mut appended = 0;
    for path in &models {
        let original = Bytes::from(std::fs::read(path).expect("corpus file readable"));
        let Ok(mut model) = binary::decode_model(original.clone(), "corpus") else { continue };
        let added = annotate(&mut model);
        let Some(g) = model.graph else { continue };
        let value_info = &model.graphs[g].value_info;
        let Some(bytes) = binary::append_value_info(&original, &value_info[value_info.len() - added..]) else {
            continue;
        };
        let reread = binary::decode_model(Bytes::from(bytes), "appended").expect("appended model decodes");
        let whole = binary::decode_model(Bytes::from(binary::encode_model(&model)), "whole").expect("decodes");
        assert!(
            reread == whole || format!("{reread:?}") == format!("{whole:?}"),
            "{}: appended differs",
            path.display()
        );
        appended += usize::from(added > 0);
    }
    // Most node-test models describe every value already (their one node gives the graph
    // outputs); the others must have gone this way.
    assert!(appended >= 400, "only {appended} models got value descriptions appended");
}

/// `onnx infer`'s binary path encodes the descriptions straight from the inferred types;
/// the bytes must be those of annotating the model and appending its new value infos.
#[test]
fn inferred_bytes_are_those_of_the_annotated_model() {
    let mut answered = 0;
    for path in corpus_models() {
        let original = Bytes::from(std::fs::read(&path).expect("corpus file readable"));
        let Ok(mut model) = binary::decode_model(original.clone(), "corpus") else { continue };
        let direct = onnx_core::infer::annotated_bytes(&model, &original);
        let added = annotate(&mut model);
        let value_info = model.graph.map_or(&[][..], |g| &model.graphs[g].value_info[..]);
        let expected = binary::append_value_info(&original, &value_info[value_info.len() - added..]);
        if let Some((bytes, count)) = direct {
            assert_eq!((count, Some(bytes) == expected), (added, true), "{}", path.display());
            answered += 1;
        }
    }
    assert!(answered >= 1884, "only {answered} models went straight to bytes");
}

#[test]
fn a_model_whose_graph_field_repeats_is_encoded_whole() {
    let graph = len_field(2, b"g");
    let twice = [len_field(7, &graph), len_field(7, &graph)].concat();
    assert!(binary::append_value_info(&twice, &[]).is_none());
    let none = len_field(2, b"producer");
    assert!(binary::append_value_info(&none, &[]).is_none());
    let cut = &len_field(7, &graph)[..3];
    assert!(binary::append_value_info(cut, &[]).is_none());
}

/// On a big graph the descriptions are encoded a piece per core, each core freeing the
/// types its piece read: the bytes must still be those of annotating the model and
/// appending its new value infos.
#[test]
fn a_big_graph_inferred_in_pieces_gives_the_bytes_of_the_annotated_model() {
    let mut body = String::from("h0 = Identity (x)\n");
    let blocks = 1500;
    for i in 0..blocks {
        let j = i + 1;
        body += &format!("a{i} = Add (h{i}, b)\n s{i} = Shape (a{i})\n h{j} = Reshape (a{i}, s{i})\n");
        if i == blocks / 2 {
            body += &format!(
                "k{i} = If (c) <then_branch: graph = t () => (float[N, 4] o) {{ o = Relu (h{j}) }}, \
                 else_branch: graph = e () => (float[N, 4] o) {{ o = Neg (h{j}) }}>\n"
            );
        }
    }
    let text = format!(
        "<ir_version: 10, opset_import: [\"\" : 21]>\n\
         g (float[N, 4] x, bool c) => (float[N, 4] h{blocks}) <float[4] b = {{1, 2, 3, 4}}> {{\n{body}}}\n"
    );
    let analysis = onnx_core::analysis::analyze_text(&text);
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
    let original = Bytes::from(binary::encode_model(&analysis.model));
    let mut model = binary::decode_model(original.clone(), "generated").expect("decodes");
    let (bytes, count) = onnx_core::infer::annotated_bytes(&model, &original).expect("appended");
    let added = annotate(&mut model);
    assert!(added > 3 * blocks - 10, "only {added} descriptions");
    let g = model.graph.expect("a main graph");
    let value_info = &model.graphs[g].value_info;
    let expected = binary::append_value_info(&original, &value_info[value_info.len() - added..]);
    assert_eq!(count, added);
    assert!(Some(bytes) == expected, "the bytes differ");
}
