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
    // Empty: the packaged server, else onnx-lsp on PATH (extension.ts, serverCommand).
    let settings = &package["contributes"]["configuration"]["properties"];
    assert_eq!(settings["onnx.server.path"]["default"], "");
    assert_eq!(settings["onnx.trace.server"]["default"], "off");
    let grammar = &package["contributes"]["grammars"][0];
    assert_eq!(grammar["scopeName"], "source.onnx");
    let icon = package["icon"].as_str().unwrap();
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/vscode").join(icon).is_file(), "{icon}");
}

/// `.onnx` files open as text through the extension's `onnx-text` file system, which saves
/// through the server's `onnx/saveBinary`; the scheme is the one the server reads paths from.
#[test]
fn vscode_extension_opens_binary_models_as_text_and_saves_them_back() {
    let package: serde_json::Value = serde_json::from_str(&read("vscode/package.json")).unwrap();
    let editor = &package["contributes"]["customEditors"][0];
    assert_eq!(editor["selector"][0]["filenamePattern"], "*.onnx");
    let source = read("vscode/src/extension.ts");
    let scheme = onnx_lsp::workspace::TEXT_OF_BINARY_SCHEME;
    assert!(source.contains(&format!("const TEXT_OF_BINARY = \"{scheme}\"")));
    assert!(package["activationEvents"].as_array().unwrap().iter().any(|e| e == &format!("onFileSystem:{scheme}")));
    for request in [onnx_lsp::server::BINARY_TO_TEXT, onnx_lsp::server::SAVE_BINARY, onnx_lsp::server::CONVERT] {
        assert!(source.contains(&format!("\"{request}\"")), "extension.ts does not send {request}");
    }
    for command in ["onnx.restartServer", "onnx.openBinaryAsText", "onnx.convertToText", "onnx.convertToBinary"] {
        assert!(source.contains(&format!("\"{command}\"")), "{command} is not registered");
        assert!(package["contributes"]["commands"].as_array().unwrap().iter().any(|c| c["command"] == command));
    }
}

#[test]
fn neovim_config_detects_text_models() {
    let detect = read("nvim/ftdetect/onnx.vim");
    assert!(detect.contains("*.onnxtxt,*.onnxtext setfiletype onnx"));
    let plugin = read("nvim/lua/onnx_lsp.lua");
    assert!(plugin.contains("cmd = { \"onnx-lsp\" }"));
    assert!(plugin.contains("onnx/binaryToText") && plugin.contains("onnx/saveBinary"));
    assert!(plugin.contains(&format!("local SCHEME = \"{}\"", onnx_lsp::workspace::TEXT_OF_BINARY_SCHEME)));
}
