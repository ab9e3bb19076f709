//! Malformed binary input: truncated and bit-flipped corpus files, and hand-crafted hostile
//! messages, must give a clean error or a valid model. Never a panic, a hang, or an
//! allocation the input does not justify.
//!
//! The tracking allocator records the largest single allocation made on the test thread, so
//! "a length prefix of 2^60 must not allocate" is checked, not assumed.

use std::time::{Duration, Instant};

use bytes::Bytes;
use onnx_core::binary;
use onnx_core::summary::Summary;
use onnx_tests::wire::{len_field, varint};
use onnx_tests::{SplitMix64, TrackingAllocator, corpus_models, largest_allocation, reset_largest_allocation};

#[global_allocator]
static ALLOCATOR: TrackingAllocator = TrackingAllocator;

/// The largest single allocation input of `len` bytes may justify: decoded structs are
/// bigger than their encodings (an empty NodeProto is 2 bytes on the wire, a few hundred in
/// memory) and vectors grow by doubling, so allow a generous factor, but nothing like 2^60.
fn allocation_budget(len: usize) -> usize {
    len * 512 + (1 << 20)
}

/// A hang guard, not a performance assertion: decoding a few KiB taking seconds means a loop.
const HANG: Duration = Duration::from_secs(10);

/// Decodes, and when that succeeds, exercises what every command does next.
fn exercise(data: &[u8], what: &str) {
    reset_largest_allocation();
    let start = Instant::now();
    if let Ok(model) = binary::decode_model(Bytes::copy_from_slice(data), what) {
        let _ = Summary::of(&model);
        let again = binary::encode_model(&model);
        // What we accept, we re-encode into something we accept again.
        assert!(binary::decode_model(Bytes::from(again), what).is_ok(), "{what}: re-encoded model does not decode");
    }
    let elapsed = start.elapsed();
    assert!(elapsed < HANG, "{what}: took {elapsed:?}, looks like a hang");
    let largest = largest_allocation();
    // The tracker must see at least the copy of the input made above, or it tracks nothing.
    assert!(largest >= data.len(), "{what}: allocation tracking is not working");
    assert!(
        largest <= allocation_budget(data.len()),
        "{what}: allocated {largest} bytes at once for a {}-byte input",
        data.len()
    );
}

#[test]
fn truncated_and_bit_flipped_corpus_files_never_panic() {
    let models = corpus_models();
    let mut rng = SplitMix64(0x6f6e_6e78_2024);
    let mut variants = 0;
    // Every fourth model (deterministic), 4 truncations and 8 bit-flip variants each.
    for path in models.iter().step_by(4) {
        let original = std::fs::read(path).expect("corpus file readable");
        if original.is_empty() {
            continue;
        }
        let name = path.display();
        for _ in 0..4 {
            let cut = rng.below(original.len() as u64) as usize;
            exercise(&original[..cut], &format!("{name} truncated at {cut}"));
            variants += 1;
        }
        for _ in 0..8 {
            let (data, flips) = rng.bit_flipped(&original, 4);
            exercise(&data, &format!("{name} with {flips} bit flips"));
            variants += 1;
        }
        // Random bytes spliced in: varints that never end, lengths that point past the end.
        let mut data = original.clone();
        let at = rng.below(data.len() as u64) as usize;
        data.splice(at..at, [0xff; 11]);
        exercise(&data, &format!("{name} with 11 x 0xff spliced at {at}"));
        variants += 1;
    }
    assert!(variants >= 5000, "only {variants} variants");
}

/// A length-delimited field header claiming `len` bytes, with only a few bytes following.
fn lying_length(tag: u32, len: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(u64::from(tag) << 3 | 2, &mut out);
    varint(len, &mut out);
    out.extend_from_slice(b"abc");
    out
}

#[test]
fn huge_length_prefixes_do_not_allocate() {
    const HUGE: u64 = 1 << 60;
    // ModelProto.graph (7) claiming 2^60 bytes.
    let model = lying_length(7, HUGE);
    // GraphProto.initializer (5) → TensorProto.raw_data (9) claiming 2^60 bytes.
    let tensor = lying_length(9, HUGE);
    let graph = len_field(5, &tensor);
    let in_graph = len_field(7, &graph);
    // TensorProto.float_data (4, packed) claiming 2^60 bytes.
    let packed = len_field(7, &len_field(5, &lying_length(4, HUGE)));
    // TensorProto.dims (1) as a packed run of 2^60 bytes.
    let dims = len_field(7, &len_field(5, &lying_length(1, HUGE)));
    for (what, data) in [("graph", model), ("raw_data", in_graph), ("float_data", packed), ("dims", dims)] {
        exercise(&data, what);
        assert!(binary::decode_model(Bytes::from(data), what).is_err(), "{what}: a lying length must be an error");
    }
}

#[test]
fn endless_varints_are_errors() {
    let mut data = vec![0x08]; // ModelProto.ir_version, varint
    data.extend_from_slice(&[0xff; 20]);
    exercise(&data, "endless varint");
    assert!(binary::decode_model(Bytes::from(data), "endless varint").is_err());
}

/// If-inside-If nesting 200 levels deep: protobuf's 100-message limit stops it with an
/// error, long before the stack is at risk.
#[test]
fn deep_subgraph_nesting_is_an_error_not_a_stack_overflow() {
    let mut graph = Vec::new();
    for _ in 0..200 {
        let attribute = len_field(6, &graph); // AttributeProto.g
        let node = len_field(5, &attribute); // NodeProto.attribute
        graph = len_field(1, &node); // GraphProto.node
    }
    let model = len_field(7, &graph);
    exercise(&model, "deep nesting");
    let err = binary::decode_model(Bytes::from(model), "deep.onnx").expect_err("too deep");
    assert!(err.to_string().contains("deep.onnx"), "{err}");
}

/// Dims whose product overflows are kept as they are and reported as "no size", never
/// multiplied unchecked.
#[test]
fn overflowing_dims_have_no_size() {
    let mut tensor = Vec::new();
    for _ in 0..3 {
        varint(1 << 3, &mut tensor); // dims, unpacked varint
        varint(1 << 62, &mut tensor);
    }
    varint(2 << 3, &mut tensor); // data_type = FLOAT
    varint(1, &mut tensor);
    let model = len_field(7, &len_field(5, &tensor));
    exercise(&model, "overflowing dims");
    let decoded = binary::decode_model(Bytes::from(model), "dims").expect("valid protobuf");
    let (_, t) = decoded.tensors.iter().next().expect("one tensor");
    assert_eq!(t.element_count(), None);
    assert_eq!(t.expected_raw_size(), None);
    assert_eq!(Summary::of(&decoded).initializer_bytes, 0);
}

/// A big model (name resolution on a second thread, whose stack is smaller than the main
/// thread's) holding If-inside-If nearly as deep as the text parser allows (512 open
/// brackets, two per level here): the full check and `onnx infer`'s path finish, no stack
/// overflow. The model is read and checked on a thread with the `onnx` command's main
/// thread's stack (a test's own thread has a quarter of it).
#[test]
fn deep_subgraphs_in_a_big_model_are_checked_beside_inference() {
    let on_main_stack = onnx_threads::dedicated().spawn(check_deep_subgraphs_in_a_big_model);
    on_main_stack.expect("a thread").join().expect("no panic");
}

fn check_deep_subgraphs_in_a_big_model() {
    let depth = 250;
    let mut nested = String::from("o = Identity (x)");
    for level in 0..depth {
        nested = format!(
            "o = If (c) <then_branch: graph = t{level} () => (o) {{ {nested} }}, \
             else_branch: graph = e{level} () => (o) {{ o = Neg (x) }}>"
        );
    }
    let mut body = format!("{}\n", nested.replacen("o = If", "h0 = If", 1));
    for i in 0..2100 {
        body += &format!("h{} = Relu (h{i})\n", i + 1);
    }
    let text = format!(
        "<ir_version: 10, opset_import: [\"\" : 21]>\n\
         g (float[2] x, bool c) => (float[2] h2100) {{\n{body}}}\n"
    );
    let analysis = onnx_core::analysis::analyze_text(&text);
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics.first());
    assert!(analysis.model.graphs.len() > 2 * depth);
    let options = onnx_core::check::CheckOptions { full_check: true, ..Default::default() };
    let found = onnx_core::pipeline::check_model(&analysis.model, &options).diagnostics;
    assert!(onnx_core::check::is_valid(&found), "{:?}", found.first());
    let mut model = analysis.model;
    assert!(onnx_core::infer::annotate(&mut model) > 2000);
}

/// The inference bombs of `tests/fixtures/bombs`: checking (with inference) allocates
/// nothing near the sizes they declare.
#[test]
fn declared_sizes_do_not_make_inference_allocate() {
    let bombs = onnx_tests::files_with_suffix(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bombs"),
        ".onnxtxt",
    );
    assert!(bombs.len() >= 9, "the bomb fixtures are missing");
    for path in bombs {
        let text = std::fs::read_to_string(&path).expect("readable");
        reset_largest_allocation();
        let analysis = onnx_core::analysis::analyze_text(&text);
        assert!(analysis.readable, "{}: {:?}", path.display(), analysis.diagnostics.first());
        let options = onnx_core::check::CheckOptions { full_check: true, ..Default::default() };
        let _ = onnx_core::pipeline::check_model(&analysis.model, &options).diagnostics;
        let _ = onnx_core::infer::infer_main_graph(&analysis.model);
        let largest = largest_allocation();
        assert!(largest < 1 << 20, "{}: allocated {largest} bytes at once", path.display());
    }
}

/// Nested `If` graphs with stray `)` between them: the stray closers once counted as closing
/// brackets, so the nesting limit never fired, parsing took cubic time and the recursive
/// lowering overflowed its stack. Now the limit holds: an error, quickly, no crash.
fn stray_bracket_nesting(levels: usize) -> String {
    let level = " y = If(c) <then_branch: graph = g () => (float y) {\n ) )\n";
    format!(
        "<ir_version: 8, opset_import: [\"\" : 17]>\ng (bool c) => (float y) {{\n{}{}}}\n",
        level.repeat(levels),
        "}>\n".repeat(levels)
    )
}

#[test]
fn stray_closers_do_not_bypass_the_nesting_limit() {
    let text = stray_bracket_nesting(3000);
    let start = Instant::now();
    let analysis = onnx_core::analysis::analyze_text(&text);
    let options = onnx_core::check::CheckOptions { full_check: true, ..Default::default() };
    let _ = onnx_core::pipeline::check_model(&analysis.model, &options).diagnostics;
    assert!(analysis.diagnostics.iter().any(|d| d.code == "nesting-too-deep"), "the limit did not fire");
    assert!(start.elapsed() < HANG, "took {:?}", start.elapsed());
}

/// An axis on a rank-0 input (found by fuzzing `check_binary`: Concat of scalars indexed
/// an empty shape): every rule gives an unknown result, never an index out of bounds.
#[test]
fn axes_on_scalars_do_not_panic() {
    let text = "<ir_version: 8, opset_import: [\"\" : 17]>\n\
        g (float s, int64 i) => (float y) {\n  \
        a = Concat <axis: int = 0> (s, s)\n  b = Transpose <perm: ints = [0]> (s)\n  \
        c = Gather <axis: int = 0> (s, i)\n  d = Softmax <axis: int = 0> (s)\n  \
        e = ArgMax <axis: int = 0> (s)\n  f = Flatten <axis: int = 0> (s)\n  \
        g2 = Split <axis: int = 0> (s)\n  h = CumSum (s, i)\n  k = ReduceSum <keepdims: int = 1> (s)\n  \
        y = Identity(s)\n}\n";
    let analysis = onnx_core::analysis::analyze_text(text);
    assert!(analysis.readable, "{:?}", analysis.diagnostics.first());
    let options = onnx_core::check::CheckOptions { full_check: true, ..Default::default() };
    let diagnostics = onnx_core::pipeline::check_model(&analysis.model, &options).diagnostics;
    assert!(diagnostics.iter().any(|d| d.code == "invalid-axis"), "{diagnostics:?}");
    let _ = onnx_core::infer::infer_main_graph(&analysis.model);
}
