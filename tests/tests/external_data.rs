//! External data: reading side files under the path rules, each violation a clear error
//! naming the tensor and the path; writing side files and embedding them again.

use std::path::Path;

use bytes::Bytes;
use onnx_core::binary;
use onnx_core::external::{self, ExternalReader, Reason};
use onnx_core::ir::{DATA_LOCATION_EXTERNAL, DataType, Graph, Model, OpsetImport, Str, StringPair, Tensor};

fn pair(k: &str, v: &str) -> StringPair {
    StringPair { key: Some(Str::from(k)), value: Some(Str::from(v)) }
}

/// A float tensor of `count` elements stored at `location`.
fn external_tensor(name: &str, count: i64, entries: &[(&str, &str)]) -> Tensor {
    Tensor {
        name: Some(Str::from(name)),
        dims: vec![count],
        data_type: Some(DataType::Float.code()),
        external_data: entries.iter().map(|(k, v)| pair(k, v)).collect(),
        data_location: Some(DATA_LOCATION_EXTERNAL),
        ..Tensor::default()
    }
}

fn floats(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn read(dir: &Path, tensor: &Tensor) -> Result<Bytes, external::ExternalDataError> {
    ExternalReader::new(Some(dir.to_owned())).read(tensor)
}

#[test]
fn reads_bytes_at_offset_and_length() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = vec![0u8; 8];
    data.extend(floats(&[1.0, 2.0, 3.0]));
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/w.bin"), &data).unwrap();
    let t = external_tensor("w", 3, &[("location", "sub/w.bin"), ("offset", "8"), ("length", "12")]);
    assert_eq!(read(dir.path(), &t).unwrap(), floats(&[1.0, 2.0, 3.0]));
    // Without `length`, the rest of the file from the offset.
    let t = external_tensor("w", 3, &[("location", "./sub/w.bin"), ("offset", "8")]);
    assert_eq!(read(dir.path(), &t).unwrap(), floats(&[1.0, 2.0, 3.0]));
    // A file name that merely contains ".." is legal (onnx rejects it by a substring test).
    std::fs::write(dir.path().join("a..b.bin"), floats(&[4.0])).unwrap();
    let t = external_tensor("w", 1, &[("location", "a..b.bin")]);
    assert_eq!(read(dir.path(), &t).unwrap(), floats(&[4.0]));
}

/// Runs a read that must fail and returns the message, checking it names tensor and path.
fn refused(dir: &Path, tensor: &Tensor, location: &str) -> (Reason, String) {
    let err = read(dir, tensor).expect_err("must be refused");
    let message = err.to_string();
    assert!(message.contains("tensor 'w'"), "{message}");
    assert!(message.contains(location), "{message}");
    (err.reason, message)
}

#[test]
fn locations_outside_the_model_directory_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("model");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(root.path().join("secret.bin"), floats(&[9.0])).unwrap();
    for location in ["../secret.bin", "sub/../../secret.bin", "..\\secret.bin"] {
        let t = external_tensor("w", 1, &[("location", location)]);
        assert!(matches!(refused(&dir, &t, location).0, Reason::Escapes(_)), "{location}");
    }
    let absolute = root.path().join("secret.bin").display().to_string();
    let t = external_tensor("w", 1, &[("location", &absolute)]);
    assert!(matches!(refused(&dir, &t, &absolute).0, Reason::Absolute));
    let t = external_tensor("w", 1, &[("location", "")]);
    assert!(matches!(read(&dir, &t).unwrap_err().reason, Reason::EmptyLocation));
    let t = external_tensor("w", 1, &[("offset", "0")]);
    assert!(matches!(read(&dir, &t).unwrap_err().reason, Reason::NoLocation));
}

#[cfg(unix)]
#[test]
fn symlinks_and_hard_links_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("model");
    std::fs::create_dir(&dir).unwrap();
    let secret = root.path().join("secret.bin");
    std::fs::write(&secret, floats(&[9.0])).unwrap();
    // A symlinked file.
    std::os::unix::fs::symlink(&secret, dir.join("link.bin")).unwrap();
    let t = external_tensor("w", 1, &[("location", "link.bin")]);
    assert!(matches!(refused(&dir, &t, "link.bin").0, Reason::Symlink(_)));
    // A symlinked parent directory (the CVE-2026-27489 shape).
    std::os::unix::fs::symlink(root.path(), dir.join("up")).unwrap();
    let t = external_tensor("w", 1, &[("location", "up/secret.bin")]);
    assert!(matches!(refused(&dir, &t, "up/secret.bin").0, Reason::Symlink(_)));
    // A hard link to a file outside.
    std::fs::hard_link(&secret, dir.join("hard.bin")).unwrap();
    let t = external_tensor("w", 1, &[("location", "hard.bin")]);
    assert!(matches!(refused(&dir, &t, "hard.bin").0, Reason::HardLinked(2)));
    // A directory and a FIFO are not regular files; the FIFO must not block the open.
    std::fs::create_dir(dir.join("d.bin")).unwrap();
    let t = external_tensor("w", 1, &[("location", "d.bin")]);
    assert!(matches!(refused(&dir, &t, "d.bin").0, Reason::NotRegular(_)));
    let fifo = dir.join("fifo.bin");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status();
    if status.is_ok_and(|s| s.success()) {
        let t = external_tensor("w", 1, &[("location", "fifo.bin")]);
        assert!(matches!(refused(&dir, &t, "fifo.bin").0, Reason::NotRegular(_)));
    }
}

#[test]
fn offsets_and_lengths_are_checked_against_file_and_tensor() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.bin"), floats(&[1.0, 2.0])).unwrap();
    type Case<'a> = (&'a [(&'a str, &'a str)], fn(&Reason) -> bool);
    let cases: &[Case] = &[
        (&[("location", "w.bin"), ("offset", "4"), ("length", "8")], |r| matches!(r, Reason::OutOfBounds { .. })),
        (&[("location", "w.bin"), ("offset", "18446744073709551615"), ("length", "8")], |r| {
            matches!(r, Reason::OutOfBounds { .. })
        }),
        (&[("location", "w.bin"), ("length", "4")], |r| matches!(r, Reason::SizeMismatch { actual: 4, expected: 8 })),
        (&[("location", "w.bin"), ("offset", "-4")], |r| matches!(r, Reason::BadNumber { key: "offset", .. })),
        (&[("location", "w.bin"), ("length", "8 bytes")], |r| matches!(r, Reason::BadNumber { key: "length", .. })),
    ];
    for (entries, expected) in cases {
        let t = external_tensor("w", 2, entries);
        let (reason, message) = refused(dir.path(), &t, "w.bin");
        assert!(expected(&reason), "{entries:?}: {message}");
    }
    // A shape whose size overflows has no byte size to check against.
    let mut t = external_tensor("w", 2, &[("location", "w.bin")]);
    t.dims = vec![1 << 62, 1 << 62];
    assert!(matches!(refused(dir.path(), &t, "w.bin").0, Reason::NoFixedSize));
}

#[test]
fn a_model_without_a_directory_cannot_use_external_data() {
    let t = external_tensor("w", 1, &[("location", "w.bin")]);
    let err = ExternalReader::new(None).read(&t).unwrap_err();
    assert!(matches!(err.reason, Reason::NoModelDirectory), "{err}");
}

fn model_with_initializers(tensors: Vec<Tensor>) -> Model {
    let mut model = Model {
        ir_version: Some(10),
        opset_import: vec![OpsetImport { domain: Some(Str::from("")), version: Some(21) }],
        ..Model::default()
    };
    let ids = tensors.into_iter().map(|t| model.tensors.alloc(t)).collect();
    model.graph = Some(model.graphs.alloc(Graph { name: Some(Str::from("g")), initializers: ids, ..Graph::default() }));
    model
}

#[test]
fn externalize_then_embed_restores_the_model_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let big = Tensor {
        name: Some(Str::from("big")),
        dims: vec![512],
        data_type: Some(DataType::Float.code()),
        raw_data: Some(Bytes::from(floats(&vec![0.5; 512]))),
        ..Tensor::default()
    };
    let small = Tensor {
        name: Some(Str::from("small")),
        dims: vec![2],
        data_type: Some(DataType::Int64.code()),
        raw_data: Some(Bytes::from([7i64, 8].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>())),
        ..Tensor::default()
    };
    let original = model_with_initializers(vec![big, small]);
    let original_bytes = binary::encode_model(&original);

    let mut model = original.clone();
    let moved = external::externalize(&mut model, dir.path(), "weights/data.bin", 1024);
    // The parent directory must exist first.
    assert!(moved.is_err());
    std::fs::create_dir(dir.path().join("weights")).unwrap();
    let moved = external::externalize(&mut model, dir.path(), "weights/data.bin", 1024).unwrap();
    assert_eq!(moved, 1, "only the 2 KiB tensor passes the 1 KiB threshold");
    assert_eq!(std::fs::metadata(dir.path().join("weights/data.bin")).unwrap().len(), 2048);
    let externalized_bytes = binary::encode_model(&model);
    assert!(externalized_bytes.len() < original_bytes.len());

    let mut back = binary::decode_model(Bytes::from(externalized_bytes), "m.onnx").unwrap();
    assert_eq!(external::embed_all(&mut back, Some(dir.path().to_owned())).unwrap(), 1);
    assert_eq!(binary::encode_model(&back), original_bytes);
}

#[test]
fn externalize_refuses_escaping_locations() {
    let root = tempfile::tempdir().unwrap();
    let mut model = model_with_initializers(vec![]);
    for location in ["../x.bin", "/tmp/x.bin", "", "."] {
        assert!(external::externalize(&mut model, root.path(), location, 0).is_err(), "{location}");
    }
    #[cfg(unix)]
    {
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join("link")).unwrap();
        let err = external::externalize(&mut model, root.path(), "link/x.bin", 0).unwrap_err();
        assert!(matches!(err.reason, Reason::Symlink(_)), "{err}");
        assert!(!elsewhere.path().join("x.bin").exists());
    }
}

/// `external_data` with `location` given twice: onnx's loader uses the last and its checker
/// resolves each, so a model whose second location leaves the folder is invalid whichever
/// comes first (ours once used the first and called such a model valid).
#[test]
fn a_location_given_twice_is_checked_both_times() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("w.bin"), [0u8; 8]).expect("side file");
    let check = |locations: &str| {
        let text = format!(
            "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] x) => (float[2] y) <\n  \
             float[2] w = [{locations}]\n> {{\n  y = Add(x, w)\n}}\n"
        );
        let analysis = onnx_core::analysis::analyze_text(&text);
        assert!(analysis.readable, "{:?}", analysis.diagnostics.first());
        let options = onnx_core::check::CheckOptions {
            model_dir: Some(dir.path().to_owned()),
            full_check: true,
            ..Default::default()
        };
        let diagnostics = onnx_core::pipeline::check_model(&analysis.model, &options).diagnostics;
        diagnostics.iter().filter(|d| d.code == "external-data").count()
    };
    assert_eq!(check("\"location\": \"w.bin\""), 0);
    assert_eq!(check("\"location\": \"w.bin\", \"location\": \"w.bin\""), 0);
    assert!(check("\"location\": \"w.bin\", \"location\": \"../outside.bin\"") > 0, "the used location escapes");
    assert!(check("\"location\": \"../outside.bin\", \"location\": \"w.bin\"") > 0, "the first location escapes");
}

/// Each tensor of a side file starts at a multiple of 64 bytes, whatever the lengths before
/// it, so that a reader mapping the file can use every tensor in place; the gaps are zeros,
/// and embedding again gives the model back.
#[test]
fn externalized_tensors_start_at_aligned_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let tensor = |name: &str, dt: DataType, dims: Vec<i64>, raw: Vec<u8>| Tensor {
        name: Some(Str::from(name)),
        dims,
        data_type: Some(dt.code()),
        raw_data: Some(Bytes::from(raw)),
        ..Tensor::default()
    };
    let original = model_with_initializers(vec![
        tensor("bytes", DataType::Uint8, vec![3], vec![1, 2, 3]),
        tensor("floats", DataType::Float, vec![5], floats(&[1.0, 2.0, 3.0, 4.0, 5.0])),
        tensor("longs", DataType::Int64, vec![2], [7i64, -8].iter().flat_map(|v| v.to_le_bytes()).collect()),
    ]);
    let mut model = original.clone();
    assert_eq!(external::externalize(&mut model, dir.path(), "w.bin", 0).unwrap(), 3);
    let offsets: Vec<String> = model
        .tensors
        .iter()
        .map(|(_, t)| t.external_value("offset").map(ToString::to_string).unwrap_or_default())
        .collect();
    assert_eq!(offsets, ["0", "64", "128"]);
    let side = std::fs::read(dir.path().join("w.bin")).unwrap();
    assert_eq!(side.len(), 128 + 16);
    assert_eq!(&side[..3], [1, 2, 3]);
    assert!(side[3..64].iter().all(|&b| b == 0) && side[84..128].iter().all(|&b| b == 0));
    assert_eq!(&side[64..84], floats(&[1.0, 2.0, 3.0, 4.0, 5.0]));
    let mut back = binary::decode_model(Bytes::from(binary::encode_model(&model)), "m.onnx").unwrap();
    external::embed_all(&mut back, Some(dir.path().to_owned())).unwrap();
    assert_eq!(binary::encode_model(&back), binary::encode_model(&original));
}

/// Typed values of the narrow types (int32_data holds one int8, uint8, int16, float16… per
/// entry) move to the side file as their little-endian bytes, as float_data does.
#[test]
fn narrow_typed_values_move_to_the_side_file_as_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let typed = |name: &str, dt: DataType, values: Vec<i32>| Tensor {
        name: Some(Str::from(name)),
        dims: vec![values.len() as i64],
        data_type: Some(dt.code()),
        int32_data: values,
        ..Tensor::default()
    };
    let mut model = model_with_initializers(vec![
        typed("int8", DataType::Int8, vec![-1, 2, -128]),
        typed("half", DataType::Float16, vec![0x3c00, 0xc000]),
        typed("flags", DataType::Bool, vec![1, 0, 1]),
    ]);
    assert_eq!(external::externalize(&mut model, dir.path(), "w.bin", 0).unwrap(), 3);
    let side = std::fs::read(dir.path().join("w.bin")).unwrap();
    assert_eq!(&side[..3], [0xff, 2, 0x80]);
    assert_eq!(&side[64..68], [0x00, 0x3c, 0x00, 0xc0]);
    assert_eq!(&side[128..131], [1, 0, 1]);
    assert!(model.tensors.iter().all(|(_, t)| t.int32_data.is_empty() && t.is_external()));
}
