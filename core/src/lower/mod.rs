//! Conversions into and out of the IR: protobuf messages both ways, protobuf bytes straight
//! to the IR and back, and the text syntax tree into it. This is the only module that sees
//! `onnx_proto` types; every direction is total and lossless for every field onnx 1.23.2
//! defines (unknown protobuf fields are not kept).

mod annotations;
pub mod depth;
pub mod from_ast;
pub mod from_proto;
pub mod from_wire;
pub mod to_proto;
pub mod to_wire;
