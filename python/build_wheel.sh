#!/usr/bin/env bash
# Builds the onnx-text wheel: the `onnx`, `onnx-lsp` and `onnx-view` binaries with cargo,
# copied into python/wheel-data/scripts/, then the `onnx_text` module and the wheel with
# maturin (pyproject.toml says how).
#
# Usage: python/build_wheel.sh [--release] [--binaries DIR] [--out DIR]
#   --release       optimized, as a release ships it. Without it, the dev profile (CI's).
#   --binaries DIR  take the three binaries from DIR instead of building them (CI takes
#                   those `cargo test` built in target/debug, instead of building them again)
#   --out DIR       where the wheel goes (default python/dist).
# Needs cargo and a Python with maturin (`pip install 'maturin>=1.9.4,<2'`); PYTHON names
# that Python (default: the repository's .venv, else python3).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
profile=dev
target_dir=debug
out="$root/python/dist"
binaries=""
while [ $# -gt 0 ]; do
  case "$1" in
    --release) profile=release; target_dir=release ;;
    --out) out="$2"; shift ;;
    --binaries) binaries="$2"; shift ;;
    *) echo "build_wheel.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
python="${PYTHON:-}"
if [ -z "$python" ]; then
  if [ -x "$root/.venv/bin/python" ]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
if ! "$python" -m maturin --version >/dev/null 2>&1; then
  echo "build_wheel.sh: maturin is not installed for $python (pip install 'maturin>=1.9.4,<2')" >&2
  exit 1
fi

cd "$root"
if [ -z "$binaries" ]; then
  echo "== binaries ($profile)"
  cargo build --locked --profile "$profile" -p onnx-cli -p onnx-lsp -p onnx-view
  binaries="target/$target_dir"
fi
exe=""
case "$(uname -s)" in MINGW*|MSYS*|CYGWIN*) exe=".exe" ;; esac
scripts="$root/python/wheel-data/scripts"
rm -rf "$root/python/wheel-data"
mkdir -p "$scripts"
for bin in onnx onnx-lsp onnx-view; do
  cp "$binaries/$bin$exe" "$scripts/"
done
strip_flag=()
if [ "$profile" = release ]; then
  # What users install carries no line tables (the release profile keeps them for
  # profiling): a quarter of the size.
  strip_flag=(--strip)
  if command -v strip >/dev/null 2>&1; then
    for bin in onnx onnx-lsp onnx-view; do strip "$scripts/$bin$exe"; done
  else
    echo "build_wheel.sh: no strip command: the binaries keep their line tables" >&2
  fi
fi

echo "== module and wheel"
rm -rf "$out"
"$python" -m maturin build --locked --profile "$profile" --manifest-path python/Cargo.toml --out "$out" "${strip_flag[@]}"
ls -l "$out"
