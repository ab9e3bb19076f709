#!/usr/bin/env bash
# Every test of the project: the Rust workspace (unit, corpus, fixture, language-server and
# Neovim end-to-end tests), the Python wheel (built from this run's binaries, installed into a
# fresh virtual environment, python/tests run against it) and the VS Code extension (TypeScript type check, TextMate grammar
# and word-pattern tests, the universal .vsix and a platform one with the server inside, run
# in code-server). Needs cargo, node/npm, for the Neovim test nvim, and for the VS Code one
# chromium and what tests/e2e/install.sh lists.
set -euo pipefail
cd "$(dirname "$0")"

echo "== cargo test"
cargo test --workspace --locked

echo "== Python wheel and module"
# The wheel holds the binaries `cargo test` just built (the dev profile: nothing is compiled
# again but the module). Needs maturin in .venv (.ci/run installs it) and PyPI for the test
# environment's packages; outside CI a machine without maturin skips it, saying so.
if .venv/bin/python -m maturin --version >/dev/null 2>&1; then
  bash python/test_wheel.sh --binaries target/debug
elif [ -n "${CI:-}" ]; then
  echo "maturin is not installed in .venv: the wheel cannot be built (pip install 'maturin>=1.9.4,<2')" >&2
  exit 1
else
  echo "SKIPPED the wheel and python/tests: maturin is not installed in .venv (pip install 'maturin>=1.9.4,<2')" >&2
fi

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
# That package in a real VS Code (code-server, driven by a headless Chromium): a binary model
# opened, completed, broken and mended, saved back after the confirmation, its bytes checked
# (tests/e2e/run.mjs). Outside CI, a machine without what it needs skips it, saying so.
if bash tests/e2e/install.sh; then
  node tests/e2e/run.mjs --vsix onnx-text-platform.vsix --cli ../../target/debug/onnx
elif [ -n "${CI:-}" ]; then
  echo "the VS Code end-to-end test could not be installed (tests/e2e/install.sh)" >&2
  exit 1
else
  echo "SKIPPED the VS Code end-to-end test: tests/e2e/install.sh failed (see above)" >&2
fi
rm -f onnx-text-platform.vsix
