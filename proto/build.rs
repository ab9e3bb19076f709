//! Compiles `onnx.proto` with protox (pure Rust), so building needs no system `protoc`.

fn main() {
    println!("cargo:rerun-if-changed=onnx.proto");
    let descriptors = match protox::compile(["onnx.proto"], ["."]) {
        Ok(set) => set,
        Err(err) => panic!("onnx.proto does not compile: {err:?}"),
    };
    let mut config = prost_build::Config::new();
    // Every bytes field (and, by our .proto, every string field) becomes `bytes::Bytes`, so
    // decoding from a memory-mapped `Bytes` slices instead of copying.
    config.bytes(["."]);
    if let Err(err) = config.compile_fds(descriptors) {
        panic!("prost-build failed on onnx.proto: {err}");
    }
}
