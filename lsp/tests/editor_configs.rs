//! The editor integrations agree with the server: the same file extensions everywhere, the
//! same language id, and the server's binary name as the command.

#![allow(clippy::unwrap_used)]

use std::path::Path;

fn read(relative: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors").join(relative)).unwrap()
}

#[test]
fn helix_config_starts_onnx_lsp_for_text_models() {
    let config: toml::Table = toml::from_str(&read("helix/languages.toml")).unwrap();
    assert_eq!(config["language-server"]["onnx-lsp"]["command"].as_str(), Some("onnx-lsp"));
    let language = &config["language"].as_array().unwrap()[0];
    assert_eq!(language["name"].as_str(), Some("onnx"));
    let types: Vec<&str> = language["file-types"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(types, ["onnxtxt", "onnxtext"]);
    assert_eq!(language["comment-token"].as_str(), Some("#"));
}

#[test]
fn vscode_extension_registers_the_onnx_language() {
    let package: serde_json::Value = serde_json::from_str(&read("vscode/package.json")).unwrap();
    let language = &package["contributes"]["languages"][0];
    assert_eq!(language["id"], "onnx");
    assert_eq!(language["extensions"], serde_json::json!([".onnxtxt", ".onnxtext"]));
    assert_eq!(package["contributes"]["configuration"]["properties"]["onnx.server.path"]["default"], "onnx-lsp");
    let grammar = &package["contributes"]["grammars"][0];
    assert_eq!(grammar["scopeName"], "source.onnx");
}

#[test]
fn neovim_config_detects_text_models() {
    let detect = read("nvim/ftdetect/onnx.vim");
    assert!(detect.contains("*.onnxtxt,*.onnxtext setfiletype onnx"));
    let plugin = read("nvim/lua/onnx_lsp.lua");
    assert!(plugin.contains("cmd = { \"onnx-lsp\" }"));
    assert!(plugin.contains("onnx/binaryToText"));
}
