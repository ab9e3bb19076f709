//! Large models are memory-mapped and their tensor bytes are not copied until needed:
//! reading a model with 8 MiB of weights makes no allocation anywhere near that size, and
//! the raw bytes read back are the ones in the file.

use bytes::Bytes;
use onnx_core::binary;
use onnx_core::ir::{DataType, Graph, Model, Str, Tensor};
use onnx_tests::{TrackingAllocator, largest_allocation, reset_largest_allocation};

#[global_allocator]
static ALLOCATOR: TrackingAllocator = TrackingAllocator;

#[test]
fn reading_a_model_file_does_not_copy_tensor_bytes() {
    const ELEMENTS: usize = 1 << 20; // 4 MiB per tensor
    let weights: Vec<u8> = (0..ELEMENTS as u32).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let mut model = Model { ir_version: Some(10), ..Model::default() };
    let tensors = (0..2)
        .map(|i| {
            model.tensors.alloc(Tensor {
                name: Some(Str::from(format!("w{i}"))),
                dims: vec![ELEMENTS as i64],
                data_type: Some(DataType::Float.code()),
                raw_data: Some(Bytes::from(weights.clone())),
                ..Tensor::default()
            })
        })
        .collect();
    model.graph = Some(model.graphs.alloc(Graph { initializers: tensors, ..Graph::default() }));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.onnx");
    std::fs::write(&path, binary::encode_model(&model)).unwrap();
    drop(model);

    reset_largest_allocation();
    let read = binary::read_model(&path).unwrap();
    let largest = largest_allocation();
    assert!(largest < 64 * 1024, "reading allocated {largest} bytes at once: tensor data was copied");

    let raw: Vec<&Bytes> = read.tensors.iter().filter_map(|(_, t)| t.raw_data.as_ref()).collect();
    assert_eq!(raw.len(), 2);
    assert!(raw.iter().all(|r| r[..] == weights[..]));
}
