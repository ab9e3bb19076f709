#!/usr/bin/env bash
# Builds the onnx-text wheel, installs it into a fresh virtual environment (no Rust there:
# the binaries and the module come from the wheel), and runs python/tests with pytest.
#
# Usage: python/test_wheel.sh [build_wheel.sh's options]
# The test environment gets onnx 1.23.2, onnxruntime 1.32.0, NumPy, pytest and pre-commit
# from PyPI (the `test` extra of python/pyproject.toml).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash python/build_wheel.sh "$@"
wheel="$(ls python/dist/onnx_text-*.whl)"
venv="$(mktemp -d)/venv"
trap 'rm -rf "$(dirname "$venv")"' EXIT
echo "== a fresh environment: $venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "$wheel[test]"
"$venv/bin/python" -c "import onnx_text, onnx; print('onnx_text', onnx_text.__version__, 'from', onnx_text.__file__)"
echo "== pytest python/tests"
# Run from outside the source tree, so that `import onnx_text` is the installed wheel's.
cd "$(dirname "$venv")"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests" --rootdir "$root/python/tests"
