//! The spellings a string attribute may take, one list per attribute: validation refuses
//! any other (`invalid-attribute-value`) and the editor offers these when the value is typed.
//! onnx's schemas carry them only in prose, so they are written here, once, as onnxruntime
//! reads them (case and all).

/// One attribute's allowed strings; `ops` empty means every operator with that attribute.
struct Choice {
    attribute: &'static str,
    ops: &'static [&'static str],
    values: &'static [&'static str],
}

const CHOICES: &[Choice] = &[
    Choice { attribute: "auto_pad", ops: &[], values: &["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"] },
    Choice { attribute: "mode", ops: &["Pad"], values: &["constant", "reflect", "edge", "wrap"] },
    Choice { attribute: "mode", ops: &["DepthToSpace"], values: &["DCR", "CRD"] },
    Choice {
        attribute: "mode",
        ops: &["Resize", "Upsample"],
        values: &["nearest", "linear", "cubic", "bilinear", "trilinear"],
    },
    Choice {
        attribute: "nearest_mode",
        ops: &["Resize"],
        values: &["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"],
    },
    Choice {
        attribute: "coordinate_transformation_mode",
        ops: &["Resize"],
        values: &[
            "half_pixel",
            "half_pixel_symmetric",
            "pytorch_half_pixel",
            "align_corners",
            "asymmetric",
            "tf_half_pixel_for_nn",
            "tf_crop_and_resize",
        ],
    },
    Choice {
        attribute: "keep_aspect_ratio_policy",
        ops: &["Resize"],
        values: &["stretch", "not_larger", "not_smaller"],
    },
    Choice { attribute: "direction", ops: &["RNN", "GRU", "LSTM"], values: &["forward", "reverse", "bidirectional"] },
    Choice { attribute: "activation", ops: &["CausalConvWithState"], values: &["none", "silu", "swish"] },
    Choice {
        attribute: "post_transform",
        ops: &[],
        values: &["NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"],
    },
    Choice { attribute: "norm", ops: &["Normalizer"], values: &["MAX", "L1", "L2"] },
];

/// The strings `op`'s attribute `attribute` may take, when they are a known list.
pub fn allowed_strings(op: &str, attribute: &str) -> Option<&'static [&'static str]> {
    CHOICES.iter().find(|c| c.attribute == attribute && (c.ops.is_empty() || c.ops.contains(&op))).map(|c| c.values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_operator_finds_its_own_list() {
        assert_eq!(allowed_strings("Conv", "auto_pad").map(<[_]>::len), Some(4));
        assert_eq!(allowed_strings("Pad", "mode"), Some(&["constant", "reflect", "edge", "wrap"][..]));
        assert_eq!(allowed_strings("DepthToSpace", "mode"), Some(&["DCR", "CRD"][..]));
        assert!(allowed_strings("Resize", "mode").is_some_and(|m| m.contains(&"cubic")));
        // GridSample's modes differ by version and are not listed: nothing rather than Resize's.
        assert_eq!(allowed_strings("GridSample", "mode"), None);
    }
}
