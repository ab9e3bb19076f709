//! Every field of onnx.proto in every unusual state it can be in, one at a time, on small
//! models that set every field (`corpus/handmade`), through binary → canonical text → binary.
//!
//! The fields are not listed by hand: onnx.proto is compiled at test time (protox) and each
//! model is walked as a dynamic message (prost-reflect), so a field added to the .proto is
//! covered without touching this test. For every field met on the walk (the first element of
//! each repeated message field is walked into), each state is made in turn:
//!
//! * absent (cleared), and present-but-empty (the default value set explicitly, an empty
//!   message, a repeated field holding one empty element);
//! * negative numbers (-1 and the type's minimum) in integer and enum fields;
//! * bytes that are not UTF-8 in string fields (onnx.proto's `string`s are `bytes` in ours);
//! * an unknown field added to the message.
//!
//! Each mutant must print, and its text must read back without a syntax or lowering error to
//! the same model: the same bytes when the mutant's encoding is canonical. Two states cannot
//! give the same bytes and are checked as the same model instead, i.e. the same canonical
//! encoding: an unknown field (no reader that keeps only onnx.proto's fields keeps it, onnx
//! included) and an explicit default in a field the decoder does not track presence of
//! (proto3-style packed lists and such encode the same list either way).

use std::path::Path;

use bytes::Bytes;
use onnx_core::analysis::analyze_text;
use onnx_core::{binary, print};
use onnx_tests::corpus_dir;
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, ReflectMessage, Value};

/// A step down the message tree: a field number and, in a repeated field, the element.
type FieldPath = Vec<(u32, usize)>;

#[derive(Debug, Clone, Copy)]
enum State {
    Absent,
    Empty,
    MinusOne,
    Minimum,
    NotUtf8,
    UnknownField,
}

fn pool() -> DescriptorPool {
    let proto_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto");
    let mut compiler = protox::Compiler::new([&proto_dir]).expect("the proto folder exists");
    compiler.open_file("onnx.proto").expect("onnx.proto compiles");
    compiler.descriptor_pool()
}

/// The message at `path` below `root`.
fn message_at<'m>(root: &'m mut DynamicMessage, path: &[(u32, usize)]) -> &'m mut DynamicMessage {
    let mut at = root;
    for &(number, index) in path {
        at = match at.get_field_by_number_mut(number).expect("walked field") {
            Value::Message(m) => m,
            Value::List(items) => items[index].as_message_mut().expect("walked element"),
            _ => unreachable!("only message fields are walked into"),
        };
    }
    at
}

fn empty_value(kind: &Kind) -> Value {
    match kind {
        Kind::Message(m) => Value::Message(DynamicMessage::new(m.clone())),
        other => Value::default_value(other),
    }
}

/// The states that apply to a field, as (state, the field's new value or `None` to clear).
fn states(field: &FieldDescriptor) -> Vec<(State, Option<Value>)> {
    let kind = field.kind();
    let one = |v: Value| if field.is_list() { Value::List(vec![v]) } else { v };
    let mut out = vec![(State::Absent, None), (State::Empty, Some(one(empty_value(&kind))))];
    let negative = match kind {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Some((Value::I32(-1), Value::I32(i32::MIN))),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Some((Value::I64(-1), Value::I64(i64::MIN))),
        Kind::Enum(_) => Some((Value::EnumNumber(-1), Value::EnumNumber(i32::MIN))),
        Kind::Float => Some((Value::F32(-1.0), Value::F32(f32::MIN))),
        Kind::Double => Some((Value::F64(-1.0), Value::F64(f64::MIN))),
        _ => None,
    };
    if let Some((minus_one, minimum)) = negative {
        out.push((State::MinusOne, Some(one(minus_one))));
        out.push((State::Minimum, Some(one(minimum))));
    }
    if matches!(kind, Kind::Bytes | Kind::String) {
        out.push((State::NotUtf8, Some(one(Value::Bytes(Bytes::from_static(b"\xff\xfe\x80x"))))));
    }
    out
}

/// Every (path, field) of the walk: fields of each message met, walking into present message
/// fields (the first element of a repeated one).
fn walk(message: &DynamicMessage, path: &mut FieldPath, out: &mut Vec<(FieldPath, FieldDescriptor)>) {
    for field in message.descriptor().fields() {
        out.push((path.clone(), field.clone()));
        if !message.has_field(&field) {
            continue;
        }
        match &*message.get_field(&field) {
            Value::Message(m) => {
                path.push((field.number(), 0));
                walk(m, path, out);
                path.pop();
            }
            Value::List(items) => {
                if let Some(Value::Message(m)) = items.first() {
                    path.push((field.number(), 0));
                    walk(m, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
}

/// Every message path of the walk (for the unknown-field state).
fn message_paths(fields: &[(FieldPath, FieldDescriptor)]) -> Vec<FieldPath> {
    let mut paths: Vec<FieldPath> = fields.iter().map(|(p, _)| p.clone()).collect();
    paths.dedup();
    paths
}

/// What went wrong with one mutant, if anything.
fn round_trip(bytes: Vec<u8>) -> Result<(), String> {
    let Ok(model) = binary::decode_model(Bytes::from(bytes.clone()), "mutant") else {
        return Err("valid protobuf that does not decode".into());
    };
    let text = print::canonical::model(&model);
    let analysis = analyze_text(&text);
    if !analysis.readable {
        let first = analysis.diagnostics.first().map(|d| format!("{} {}", d.code, d.message)).unwrap_or_default();
        return Err(format!("its text does not read: {first}\n{}", excerpt(&text)));
    }
    let canonical = binary::encode_model(&model);
    let again = binary::encode_model(&analysis.model);
    if canonical == bytes && again != bytes {
        return Err(format!("its text reads back to different bytes\n{}", excerpt(&text)));
    }
    if again != canonical {
        return Err(format!("its text reads back to a different model\n{}", excerpt(&text)));
    }
    Ok(())
}

fn excerpt(text: &str) -> String {
    text.lines().take(40).collect::<Vec<_>>().join("\n")
}

fn mutate_every_field(model_file: &str, descriptor: &MessageDescriptor) -> (usize, Vec<String>) {
    let original = std::fs::read(corpus_dir().join(model_file)).expect("readable");
    let root = DynamicMessage::decode(descriptor.clone(), &original[..]).expect("decodes");
    let mut fields = Vec::new();
    walk(&root, &mut Vec::new(), &mut fields);
    let mut failures = Vec::new();
    let mut count = 0;
    for (path, field) in &fields {
        for (state, value) in states(field) {
            let mut mutant = root.clone();
            let at = message_at(&mut mutant, path);
            match value {
                Some(v) => at.set_field(field, v),
                None => at.clear_field(field),
            }
            count += 1;
            if let Err(why) = round_trip(mutant.encode_to_vec()) {
                failures.push(format!("{model_file}: {path:?} {}: {state:?}: {why}", field.full_name()));
            }
        }
    }
    for path in message_paths(&fields) {
        // An unknown field (number 1000, varint 1) at the end of the message's bytes.
        let mut mutant = root.clone();
        let at = message_at(&mut mutant, &path);
        let mut bytes = at.encode_to_vec();
        bytes.extend_from_slice(&[0xc0, 0x3e, 0x01]);
        *at = DynamicMessage::decode(at.descriptor(), &bytes[..]).expect("decodes with the unknown field");
        count += 1;
        if let Err(why) = round_trip(mutant.encode_to_vec()) {
            failures.push(format!("{model_file}: {path:?}: {:?}: {why}", State::UnknownField));
        }
    }
    (count, failures)
}

#[test]
fn every_field_in_every_unusual_state_survives_canonical_text() {
    let pool = pool();
    let model = pool.get_message_by_name("onnx.ModelProto").expect("ModelProto");
    let mut total = 0;
    let mut failures = Vec::new();
    for file in ["handmade/all_fields.onnx", "handmade/tensors.onnx", "handmade/types.onnx", "handmade/functions.onnx"]
    {
        let (count, mut failed) = mutate_every_field(file, &model);
        total += count;
        failures.append(&mut failed);
    }
    assert!(total > 1000, "only {total} mutants: the walk lost its way");
    assert!(
        failures.is_empty(),
        "{} of {total} mutants do not survive:\n{}",
        failures.len(),
        failures.iter().map(|f| f.lines().next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
    );
}
