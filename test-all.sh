#!/usr/bin/env bash
# Every test of the project: the Rust workspace (unit, corpus, fixture, language-server and
# Neovim end-to-end tests) and the VS Code extension (TypeScript type check, TextMate grammar
# tests, the .vsix package). Needs cargo, node/npm and, for the Neovim test, nvim.
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
