#!/usr/bin/env bash
# Every test of the project: the Rust workspace (unit, corpus, fixture, language-server and
# Neovim end-to-end tests) and the VS Code extension (TypeScript type check, TextMate grammar
# and word-pattern tests, the universal .vsix and a platform one with the server inside). Needs cargo, node/npm and, for the Neovim test, nvim.
set -euo pipefail
cd "$(dirname "$0")"

echo "== cargo test"
cargo test --workspace --locked

echo "== VS Code extension"
cd editors/vscode
npm ci --no-audit --no-fund
npm run typecheck
npm run test:grammar
npm run test:words
npm run package
ls -l onnx-text.vsix
# A platform package with the server inside, checked for what it holds (this run's debug
# server stands in for a release build, which releases pass with --server).
npm run package:platform -- --server ../../target/debug/onnx-lsp --out onnx-text-platform.vsix
rm -f onnx-text-platform.vsix
