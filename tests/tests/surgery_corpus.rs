//! `onnx extract` and `onnx set-dims` on every corpus model (the node tests, the hand-built
//! models, the real and contrib exports), in process: the cut from a model's own inputs to
//! its own outputs is made (at most the model's nodes) or refused with a message, and fixing
//! every symbol of its inputs either applies or says why; neither ever panics.

use bytes::Bytes;
use onnx_core::binary;
use onnx_core::ir::{DimValue, Str, TypeValue};
use onnx_core::set_dims::DimSetting;
use onnx_tests::{corpus_dir, corpus_models};

#[test]
fn whole_cuts_and_fixed_symbols_on_every_corpus_model() {
    let (mut cut, mut refused, mut fixed) = (0, 0, 0);
    for path in corpus_models() {
        let rel = path.strip_prefix(corpus_dir()).expect("in corpus").to_string_lossy().into_owned();
        let data = Bytes::from(std::fs::read(&path).expect("readable"));
        let Ok(model) = binary::decode_model(data, &rel) else { continue };
        let Some(g) = model.main_graph() else { continue };
        let initializers: std::collections::HashSet<&Str> =
            g.initializers.iter().filter_map(|&t| model.tensors[t].name.as_ref()).collect();
        let inputs: Vec<Str> =
            g.inputs.iter().filter_map(|v| v.name.clone()).filter(|n| !initializers.contains(n)).collect();
        let outputs: Vec<Str> = g.outputs.iter().filter_map(|v| v.name.clone()).collect();
        let nodes_before = g.nodes.len();
        let mut whole = model.clone();
        match onnx_core::extract::extract(&mut whole, &inputs, &outputs) {
            Ok(summary) => {
                assert!(summary.nodes <= nodes_before, "{rel}: {} nodes from {nodes_before}", summary.nodes);
                cut += 1;
            }
            Err(e) => {
                assert!(!e.to_string().is_empty(), "{rel}: an error that says nothing");
                eprintln!("{rel}: {e}");
                refused += 1;
            }
        }
        let symbols: Vec<String> = g
            .inputs
            .iter()
            .filter_map(|v| match v.ty.as_ref()?.value.as_ref()? {
                TypeValue::Tensor(t) => t.shape.as_ref(),
                _ => None,
            })
            .flat_map(|s| &s.dims)
            .filter_map(|d| match &d.value {
                Some(DimValue::Param(p)) => p.as_str().map(str::to_owned),
                _ => None,
            })
            .collect();
        if !symbols.is_empty() {
            let settings: Vec<DimSetting> =
                symbols.iter().map(|s| DimSetting::Param { name: s.clone(), value: 2 }).collect();
            let mut model = model;
            if onnx_core::set_dims::set_dims(&mut model, &settings).is_ok() {
                fixed += 1;
            }
        }
    }
    assert!(cut >= 1900 && refused <= 5, "{cut} whole cuts made, {refused} refused");
    assert!(fixed >= 20, "only {fixed} models with symbols fixed");
}
