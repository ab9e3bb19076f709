//! The direct protobuf reader (`lower::from_wire`) against the reference path (prost, then
//! `from_proto`): wherever the direct reader answers, its model must equal the reference's
//! exactly (arena ids included), and it must answer for the files models are made of.

use bytes::Bytes;
use onnx_core::binary;
use onnx_core::ir::Model;
use onnx_core::lower::from_wire;
use onnx_tests::wire::{len_field, varint, varint_field};
use onnx_tests::{SplitMix64, corpus_models};

/// The reference decoding, `None` for an error.
fn reference(data: &[u8]) -> Option<Model> {
    binary::decode_model_with_prost(Bytes::copy_from_slice(data), "reference").ok()
}

/// Model equality where a NaN equals itself: `==` on the IR is float equality, so models
/// holding NaN values differ from themselves. Then the arenas must print alike (same
/// values in the same ids) and encode to the same bytes (same bits).
fn same_model(a: &Model, b: &Model) -> bool {
    a == b || (format!("{a:?}") == format!("{b:?}") && binary::encode_model(a) == binary::encode_model(b))
}

/// Checks one input; true when the direct reader answered.
fn agrees(data: &[u8], what: &str) -> bool {
    let Some(direct) = from_wire::model(&Bytes::copy_from_slice(data)) else {
        return false;
    };
    match reference(data) {
        Some(expected) => assert!(same_model(&direct, &expected), "{what}: the direct reader decodes differently"),
        None => panic!("{what}: the direct reader accepts bytes prost rejects"),
    }
    true
}

#[test]
fn every_corpus_model_is_read_directly_and_the_same() {
    let models = corpus_models();
    assert!(models.len() >= 1884, "corpus incomplete: {} models", models.len());
    let mut left_to_prost = Vec::new();
    for path in &models {
        let data = std::fs::read(path).expect("corpus file readable");
        if !agrees(&data, &path.display().to_string()) {
            left_to_prost.push(path.display().to_string());
        }
    }
    // Only the hand-made files that use what the direct reader leaves to prost (a message
    // field given twice, unknown fields) may take the slow path.
    let unexpected: Vec<_> = left_to_prost.iter().filter(|p| !p.contains("handmade")).collect();
    assert!(unexpected.is_empty(), "{} models not read directly:\n{unexpected:#?}", unexpected.len());
    assert!(left_to_prost.len() <= 5, "{} hand-made models not read directly: {left_to_prost:#?}", left_to_prost.len());
}

#[test]
fn damaged_files_are_left_to_prost_or_read_the_same() {
    let models = corpus_models();
    let mut rng = SplitMix64(0x6672_6f6d_7769_7265);
    let (mut variants, mut answered) = (0, 0);
    for path in models.iter().step_by(3) {
        let original = std::fs::read(path).expect("corpus file readable");
        if original.is_empty() {
            continue;
        }
        let name = path.display();
        let mut check = |data: &[u8], what: String| {
            variants += 1;
            answered += usize::from(agrees(data, &what));
        };
        for _ in 0..3 {
            let cut = rng.below(original.len() as u64) as usize;
            check(&original[..cut], format!("{name} truncated at {cut}"));
        }
        for _ in 0..8 {
            let (data, flips) = rng.bit_flipped(&original, 3);
            check(&data, format!("{name} with {flips} bit flips"));
        }
        let mut data = original.clone();
        let at = rng.below(data.len() as u64) as usize;
        data[at] = rng.below(256) as u8;
        check(&data, format!("{name} with byte {at} replaced"));
    }
    assert!(variants >= 7000, "only {variants} variants");
    // Many damaged files still decode (a flipped bit inside a float or a name); the direct
    // reader must have answered for a good share of them, or this test checks nothing.
    assert!(answered * 5 >= variants, "the direct reader answered only {answered} of {variants}");
}

fn concat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// A node `Op(x) -> y` with a tensor attribute, and a graph around it.
fn node_with_tensor_attribute(name: &str) -> Vec<u8> {
    let tensor = concat(&[&varint_field(1, 2), &varint_field(2, 7), &len_field(8, name.as_bytes())]);
    let attribute = concat(&[&len_field(1, b"value"), &len_field(5, &tensor), &varint_field(20, 4)]);
    concat(&[&len_field(1, b"x"), &len_field(2, b"y"), &len_field(4, b"Constant"), &len_field(5, &attribute)])
}

#[test]
fn fields_out_of_order_give_the_same_ids() {
    // An initializer before the nodes, a graph name last, an attribute's subgraph before
    // its tensor: ids must still be allocated as the reference allocates them.
    let initializer = concat(&[&varint_field(2, 1), &len_field(8, b"w")]);
    let subgraph = concat(&[&len_field(1, &node_with_tensor_attribute("inner")), &len_field(2, b"body")]);
    let tensor = concat(&[&varint_field(2, 7), &len_field(8, b"t")]);
    let attribute =
        concat(&[&len_field(1, b"a"), &len_field(6, &subgraph), &len_field(5, &tensor), &varint_field(20, 5)]);
    let node = concat(&[&len_field(4, b"If"), &len_field(5, &attribute)]);
    let graph = concat(&[
        &len_field(5, &initializer),
        &len_field(1, &node),
        &len_field(1, &node_with_tensor_attribute("outer")),
        &len_field(2, b"main"),
    ]);
    let model = concat(&[&len_field(7, &graph), &varint_field(1, 10)]);
    assert!(agrees(&model, "fields out of order"), "the direct reader should take this file");
}

#[test]
fn packed_and_unpacked_lists_read_alike() {
    // TensorProto.dims is declared unpacked and float_data packed; readers must take both
    // forms of each.
    let mut packed_dims = Vec::new();
    for d in [2u64, 3] {
        varint(d, &mut packed_dims);
    }
    let unpacked_floats: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|f| {
            let mut field = vec![4 << 3 | 5];
            field.extend_from_slice(&f.to_le_bytes());
            field
        })
        .collect();
    let tensor = concat(&[&len_field(1, &packed_dims), &varint_field(2, 1), &unpacked_floats, &len_field(8, b"w")]);
    let graph = concat(&[&len_field(5, &tensor), &len_field(2, b"g")]);
    let model = len_field(7, &graph);
    assert!(agrees(&model, "packed dims, unpacked floats"), "the direct reader should take this file");
    let direct = from_wire::model(&Bytes::from(model)).expect("read directly");
    let t = direct.tensors.values().next().expect("one tensor");
    assert_eq!((t.dims.as_slice(), t.float_data.as_slice()), (&[2i64, 3][..], &[1.5f32, -2.0][..]));
}

#[test]
fn rare_encodings_are_left_to_prost() {
    let graph = concat(&[&len_field(1, &node_with_tensor_attribute("n")), &len_field(2, b"g")]);
    // The graph field twice: protobuf merges the two (prost's job).
    let twice = concat(&[&len_field(7, &graph), &len_field(7, &len_field(2, b"renamed"))]);
    // An unknown field (number 99): prost skips it.
    let unknown = concat(&[&len_field(7, &graph), &varint_field(99, 1)]);
    for (what, data) in [("graph twice", twice), ("unknown field", unknown)] {
        assert!(from_wire::model(&Bytes::from(data.clone())).is_none(), "{what}: should be left to prost");
        // And the public entry point still reads it, through prost.
        let model = binary::decode_model(Bytes::from(data.clone()), what).expect("prost reads it");
        assert!(same_model(&model, &reference(&data).expect("reference reads it")), "{what}");
    }
}

/// A small model touching every kind of wire value: varints, packed and unpacked lists,
/// fixed32 and fixed64, strings, nested messages three levels down.
fn small_model() -> Vec<u8> {
    let mut packed_dims = Vec::new();
    varint(3, &mut packed_dims);
    let floats: Vec<u8> = [1.0f32, 2.0, 3.0].iter().flat_map(|f| f.to_le_bytes()).collect();
    let doubles: Vec<u8> = 0.5f64.to_le_bytes().to_vec();
    let tensor = concat(&[
        &len_field(1, &packed_dims),
        &varint_field(2, 1),
        &len_field(4, &floats),
        &len_field(8, b"w"),
        &len_field(10, &doubles),
    ]);
    let mut attribute = concat(&[&len_field(1, b"alpha"), &[2 << 3 | 5], &0.25f32.to_le_bytes()]);
    attribute.extend_from_slice(&varint_field(20, 1));
    let node = concat(&[&len_field(1, b"w"), &len_field(2, b"y"), &len_field(4, b"Elu"), &len_field(5, &attribute)]);
    let dim = concat(&[&varint_field(1, 3)]);
    let shape = len_field(1, &dim);
    let tensor_type = concat(&[&varint_field(1, 1), &len_field(2, &shape)]);
    let value_info = concat(&[&len_field(1, b"y"), &len_field(2, &len_field(1, &tensor_type))]);
    let graph =
        concat(&[&len_field(1, &node), &len_field(2, b"g"), &len_field(5, &tensor), &len_field(12, &value_info)]);
    concat(&[&varint_field(1, 10), &len_field(7, &graph), &len_field(8, &varint_field(2, 21))])
}

#[test]
fn every_single_byte_change_of_a_small_model_agrees() {
    let model = small_model();
    assert!(agrees(&model, "the small model"), "the direct reader should take the small model");
    let (mut variants, mut answered) = (0, 0);
    for at in 0..model.len() {
        for byte in 0..=255u8 {
            if byte == model[at] {
                continue;
            }
            let mut data = model.clone();
            data[at] = byte;
            variants += 1;
            answered += usize::from(agrees(&data, &format!("byte {at} set to {byte:#04x}")));
        }
    }
    assert!(answered > variants / 10, "the direct reader answered only {answered} of {variants}");
}

#[test]
fn malformed_keys_lengths_and_varints_agree() {
    let graph = len_field(2, b"g");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        // A ten-byte varint whose last byte carries more than the 64th bit.
        ("overlong varint", concat(&[&[0x08], &[0xff; 9], &[0x02]])),
        ("ten-byte varint", concat(&[&[0x08], &[0xff; 9], &[0x01]])),
        ("field number 0", concat(&[&[0x00, 0x01]])),
        ("wire type 6", concat(&[&[0x0e, 0x01]])),
        ("wire type 7", concat(&[&[0x0f, 0x01]])),
        ("group start", concat(&[&[0x0b], &[0x0c]])),
        ("group end alone", concat(&[&[0x0c]])),
        ("key above u32", concat(&[&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]])),
        ("string as varint", varint_field(2, 5)),
        ("graph as varint", varint_field(7, 5)),
        ("ir_version as string", len_field(1, b"x")),
        // Packed floats whose length is not a multiple of four.
        ("ragged packed floats", len_field(7, &concat(&[&len_field(5, &len_field(4, &[0, 0, 128, 63, 0]))]))),
        ("ragged packed doubles", len_field(7, &len_field(5, &len_field(10, &[0; 9])))),
        // A packed varint run cut inside its last value.
        ("cut packed varints", len_field(7, &len_field(5, &len_field(1, &[0x80])))),
        // A nested length that runs past its message but not past the buffer.
        ("length past its message", concat(&[&[7 << 3 | 2, 2], &[2 << 3 | 2, 5], b"abcdef"])),
        ("float with wrong wire type", len_field(7, &len_field(1, &len_field(5, &varint_field(2, 1))))),
        (
            "two tensor types",
            len_field(7, &len_field(11, &len_field(2, &concat(&[&len_field(1, b""), &len_field(8, b"")])))),
        ),
        ("graph then more", concat(&[&len_field(7, &graph), &varint_field(1, 9)])),
    ];
    for (what, data) in &cases {
        agrees(data, what);
    }
}

/// The main graph of a model big enough that the direct reader decodes it in two halves
/// at once: `count` nodes, some holding tensors, sparse tensors and subgraphs (with nodes
/// and initializers of their own) in both halves.
fn big_graph(count: usize) -> Vec<u8> {
    let tensor = |name: &str, value: f32| {
        concat(&[
            &varint_field(1, 1),
            &varint_field(2, 1),
            &len_field(4, &value.to_le_bytes()),
            &len_field(8, name.as_bytes()),
        ])
    };
    let mut graph = Vec::new();
    for i in 0..count {
        let (input, output) = (format!("v{i}"), format!("v{}", i + 1));
        let node = if i % 997 == 5 {
            let attribute =
                concat(&[&len_field(1, b"value"), &varint_field(20, 4), &len_field(5, &tensor("", i as f32))]);
            concat(&[&len_field(2, output.as_bytes()), &len_field(4, b"Constant"), &len_field(5, &attribute)])
        } else if i % 2003 == 11 {
            let sparse =
                concat(&[&len_field(1, &tensor("", 1.0)), &len_field(2, &tensor("", 0.0)), &varint_field(3, 4)]);
            let attribute = concat(&[&len_field(1, b"sparse_value"), &varint_field(20, 11), &len_field(22, &sparse)]);
            concat(&[&len_field(2, output.as_bytes()), &len_field(4, b"Constant"), &len_field(5, &attribute)])
        } else if i % 1499 == 7 {
            let inner = concat(&[&len_field(1, b"w"), &len_field(2, b"o"), &len_field(4, b"Identity")]);
            let body = |name: &str| {
                concat(&[&len_field(1, &inner), &len_field(2, name.as_bytes()), &len_field(5, &tensor("w", i as f32))])
            };
            let branch = |name: &str| {
                concat(&[&len_field(1, name.as_bytes()), &varint_field(20, 5), &len_field(6, &body(name))])
            };
            concat(&[
                &len_field(1, input.as_bytes()),
                &len_field(2, output.as_bytes()),
                &len_field(4, b"If"),
                &len_field(5, &branch("then_branch")),
                &len_field(5, &branch("else_branch")),
            ])
        } else {
            concat(&[&len_field(1, input.as_bytes()), &len_field(2, output.as_bytes()), &len_field(4, b"Relu")])
        };
        graph.extend(len_field(1, &node));
    }
    graph.extend(len_field(5, &tensor("v0", 0.5)));
    graph
}

/// A graph read in two halves at once (when there is a second core) must come out with
/// the ids one thread would have given every node, subgraph and tensor.
#[test]
fn a_big_graph_read_in_halves_is_read_as_in_one() {
    let count = 10_000;
    let graph = big_graph(count);
    let model = concat(&[&varint_field(1, 10), &len_field(7, &graph), &len_field(8, &varint_field(2, 21))]);
    assert!(agrees(&model, "a big graph"), "the direct reader should take the big graph");
    let direct = from_wire::model(&Bytes::from(model)).expect("read directly");
    // The main graph's nodes, the subgraphs' two each; every tensor held somewhere.
    let ifs = (0..count).filter(|i| i % 997 != 5 && i % 2003 != 11 && i % 1499 == 7).count();
    assert_eq!(direct.nodes.len(), count + 2 * ifs);
    assert_eq!(direct.graphs.len(), 1 + 2 * ifs);
    // A function decoded before the graph: both halves are appended after its node, ids
    // shifted, instead of the first half's arenas being taken whole.
    let body = concat(&[&len_field(1, b"x"), &len_field(2, b"y"), &len_field(4, b"Relu")]);
    let function = concat(&[
        &len_field(1, b"f"),
        &len_field(4, b"x"),
        &len_field(5, b"y"),
        &len_field(7, &body),
        &len_field(10, b"local"),
    ]);
    let model = concat(&[
        &varint_field(1, 10),
        &len_field(25, &function),
        &len_field(7, &graph),
        &len_field(8, &varint_field(2, 21)),
    ]);
    assert!(agrees(&model, "a function, then a big graph"), "the direct reader should take it");
    let direct = from_wire::model(&Bytes::from(model)).expect("read directly");
    assert_eq!(direct.nodes.len(), 1 + count + 2 * ifs);
}

/// Damage anywhere in a graph read in two halves (either half may give up, or both) is
/// left to prost or read as prost reads it, as for small models.
#[test]
fn a_damaged_big_graph_is_left_to_prost_or_read_the_same() {
    let original =
        concat(&[&varint_field(1, 10), &len_field(7, &big_graph(6000)), &len_field(8, &varint_field(2, 21))]);
    let mut rng = SplitMix64(0x6861_6c76_6573);
    let mut answered = 0;
    for round in 0..24 {
        let (data, flips) = rng.bit_flipped(&original, 2);
        answered += usize::from(agrees(&data, &format!("round {round}: {flips} bit flips")));
        let cut = rng.below(original.len() as u64) as usize;
        agrees(&original[..cut], &format!("round {round}: truncated at {cut}"));
    }
    assert!(answered > 0, "the direct reader answered none of the damaged big graphs");
}
