"""Writes tests/corpus/node: onnx 1.23.2's backend node tests, one folder per test, laid out
as onnx's backend test data always was:

    node/<test name>/model.onnx
    node/<test name>/test_data_set_<i>/input_<j>.pb, output_<j>.pb

onnx 1.23 no longer writes the node tests with `python -m onnx.backend.test.cmd_tools
generate-data` (it writes the `real` and `simple` model cases only), so this script hands
onnx's own writer (`cmd_tools.generate_data`) the node cases instead. Each case's export
seeds numpy's random state (onnx's `expect` does), so the data are the same on every run.

Usage (from the repository root; needs onnx==1.23.2 and numpy in .venv):
    .venv/bin/python tests/corpus/gen_node_data.py [--op-type Add]

The tests are written into a folder beside tests/corpus/node first, which then replaces it.
With --op-type only that operator's tests are written and the others are kept.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import tempfile
import time

import onnx
import onnx.backend.test.case.model as model_cases
import onnx.backend.test.case.node as node_cases
import onnx.backend.test.cmd_tools as cmd_tools

OUT = pathlib.Path(__file__).resolve().parent / "node"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--op-type", help="write only this operator's tests")
    args = parser.parse_args()
    assert onnx.__version__ == "1.23.2", f"onnx {onnx.__version__}: the node tests must come from 1.23.2"

    start = time.monotonic()
    cases = node_cases.collect_testcases(args.op_type)
    with tempfile.TemporaryDirectory(dir=OUT.parent, prefix=".node-") as staging:
        # generate_data writes every case model_cases.collect_testcases returns, under
        # OUTPUT/<kind>/<name>: give it the node cases.
        collect = model_cases.collect_testcases
        model_cases.collect_testcases = lambda: list(cases)
        try:
            cmd_tools.generate_data(argparse.Namespace(output=staging))
        finally:
            model_cases.collect_testcases = collect
        written = pathlib.Path(staging) / "node"
        if args.op_type:
            for test in sorted(written.iterdir()):
                shutil.rmtree(OUT / test.name, ignore_errors=True)
                test.rename(OUT / test.name)
        else:
            shutil.rmtree(OUT, ignore_errors=True)
            written.rename(OUT)
    print(f"wrote {len(cases)} node tests to {OUT} in {time.monotonic() - start:.1f}s")


if __name__ == "__main__":
    main()
