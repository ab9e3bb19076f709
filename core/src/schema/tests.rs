use super::*;

#[test]
fn the_table_holds_every_schema_of_onnx_1_23_2_and_onnxruntimes_contrib_ones() {
    let r = registry();
    // 659 of onnx's, 150 of com.microsoft, 8 of com.microsoft.nchwc and onnxruntime's
    // SimplifiedLayerNormalization in the default domain.
    assert_eq!(r.len(), 818);
    assert!(r.lookup("", "SimplifiedLayerNormalization", 17).is_some_and(|s| s.from_onnxruntime));
    assert!(r.domain_versions.contains(&("com.microsoft".to_owned(), 1)));
    let onnx_only = |d: &str| r.operators_at(d, 99).iter().all(|s| !s.from_onnxruntime);
    assert!(onnx_only("") && onnx_only("ai.onnx.ml"));
    let skip = r.lookup("com.microsoft", "SkipLayerNormalization", 1).expect("SkipLayerNormalization");
    assert!(skip.from_onnxruntime && skip.attribute("epsilon").is_some());
    assert!(skip.doc_url().ends_with("ContribOperators.md#com.microsoft.SkipLayerNormalization"));
    assert_eq!(r.ir_version, 14);
    assert!(r.domain_versions.contains(&(String::new(), 28)));
    assert!(r.domain_versions.contains(&("ai.onnx.ml".to_owned(), 5)));
}

#[test]
fn lookup_takes_the_largest_since_version_not_above_the_import() {
    let r = registry();
    assert_eq!(r.lookup("", "Add", 13).map(|s| s.since_version), Some(13));
    assert_eq!(r.lookup("", "Add", 12).map(|s| s.since_version), Some(7));
    assert_eq!(r.lookup("", "Add", 99).map(|s| s.since_version), Some(14));
    assert!(r.lookup("", "Add", 0).is_none());
    assert!(r.lookup("ai.onnx", "Add", 13).is_none(), "the table is keyed by \"\", as onnx's registry");
}

#[test]
fn schemas_carry_arity_attributes_and_constraints() {
    let r = registry();
    let loop_ = r.lookup("", "Loop", 21).expect("Loop-21");
    assert_eq!((loop_.min_inputs, loop_.max_inputs, loop_.min_outputs, loop_.max_outputs), (2, None, 1, None));
    assert_eq!(loop_.inputs[2].option, FormalOption::Variadic);
    assert_eq!(loop_.inputs[2].min_arity, 0);
    let cast = r.lookup("", "Cast", 21).expect("Cast-21");
    let to = cast.attribute("to").expect("to");
    assert!(to.required);
    assert_eq!(to.ty, AttributeType::Int);
    assert_eq!(cast.attribute("saturate").and_then(|a| a.default.clone()), Some(serde_json::json!(1)));
    assert!(cast.allowed_types(&cast.inputs[0]).contains(&"tensor(float8e4m3fn)"));
    let bn = r.lookup("", "BatchNormalization", 15).expect("BN-15");
    assert_eq!(bn.allowed_output_counts, Some(vec![1, 3]));
    assert!(r.lookup("", "LayerNormalization", 17).is_some_and(|s| s.allows_unchecked_attributes));
    assert!(r.lookup("", "Upsample", 10).is_some_and(|s| s.deprecated));
    assert!(r.is_experimental_op("ImageScaler"));
}

#[test]
fn function_bodies_are_indexed_by_opset() {
    let r = registry();
    let mvn = r.versions("", "MeanVarianceNormalization");
    let bodies: Vec<i64> = mvn.iter().flat_map(|s| s.function_bodies.iter().map(|(v, _)| *v)).collect();
    assert_eq!(bodies, vec![9, 13, 18]);
    let total: usize = ["", "ai.onnx.ml", "ai.onnx.preview", "ai.onnx.preview.training"]
        .iter()
        .flat_map(|d| r.operators_at(d, 1000))
        .map(|s| s.op.len().min(1))
        .sum();
    assert_eq!(total, 203 + 19 + 1 + 4, "one latest schema per operator name");
}

#[test]
fn doc_urls_follow_onnx_ai() {
    let r = registry();
    assert_eq!(
        r.lookup("", "Add", 14).map(OpSchema::doc_url).as_deref(),
        Some("https://onnx.ai/onnx/operators/onnx__Add.html")
    );
    assert_eq!(
        r.lookup("ai.onnx.ml", "LabelEncoder", 4).map(OpSchema::doc_url).as_deref(),
        Some("https://onnx.ai/onnx/operators/onnx_aionnxml_LabelEncoder.html")
    );
}

#[test]
fn every_schema_of_the_export_decodes() {
    // Lookups decode an operator's schemas lazily; here every one of them is decoded.
    let r = registry();
    let mut decoded = 0;
    for (domain, op, versions) in r.operators() {
        let versions = r.all_versions(versions);
        assert!(versions.windows(2).all(|w| w[0].since_version < w[1].since_version), "{domain}:{op}");
        assert!(versions.iter().all(|s| s.op == op && s.domain == domain));
        decoded += versions.len();
    }
    assert_eq!(decoded, r.len());
}

#[test]
fn documentation_is_there_for_each_version() {
    let add = super::doc("", "Add", 14).expect("Add-14 has a doc");
    assert!(add.contains("element-wise"), "{add}");
    assert!(super::doc("ai.onnx.ml", "LabelEncoder", 4).is_some());
    assert_eq!(super::doc("", "Add", 15), None, "no schema of that version");
}
