"""`onnx_text.parse` / `to_text` against `onnx.parser.parse_model` / `onnx.printer.to_text`,
in one Python process, on the same texts and models: what a Python user calling either gets.

Usage (a release wheel in the interpreter that runs this):
    bash python/build_wheel.sh --release --out /tmp/onnx-text-wheel
    .venv/bin/pip install --force-reinstall --no-deps /tmp/onnx-text-wheel/onnx_text-*.whl
    .venv/bin/python bench/python_module_vs_onnx.py --repeat 7 --write docs/benchmarks.md

Workloads: the generated 103 MB text of bench/text_vs_onnx.py (12 big tensors, 2,437 nodes);
the 20,001-node model of bench/check_infer_vs_onnx.py (small tensors: per-node cost); every
real exported model of tests/corpus/real (each parsed and printed; their sums). Both sides
return the same thing: a `ModelProto` from the text (ours includes `ModelProto.FromString` of
the bytes it makes), onnx's text from a `ModelProto` (ours includes `SerializeToString`).
Each result is checked equal to onnx's before it is timed. Best of --repeat runs.
"""

from __future__ import annotations

import argparse
import datetime
import pathlib
import sys
import time

import onnx
import onnx.parser
import onnx.printer

import onnx_text

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from common import DATA, ROOT, machine, update_section  # noqa: E402

import check_infer_vs_onnx  # noqa: E402
import text_vs_onnx  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(model: onnx.ModelProto, text: str, repeat: int) -> dict[str, float] | None:
    """The four times, or None when onnx's parser cannot read the text its printer wrote."""
    try:
        want = onnx.parser.parse_model(text)
    except onnx.parser.ParseError:
        return None
    assert onnx_text.parse(text) == want, "parse differs from onnx's parser"
    assert onnx_text.to_text(model, style="onnx") == onnx.printer.to_text(model), "print differs from onnx's printer"
    return {
        "onnx_parse": best(lambda: onnx.parser.parse_model(text), repeat),
        "ours_parse": best(lambda: onnx_text.parse(text), repeat),
        "onnx_print": best(lambda: onnx.printer.to_text(model), repeat),
        "ours_print": best(lambda: onnx_text.to_text(model, style="onnx"), repeat),
        "bytes": len(text.encode()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--write", type=pathlib.Path, help="update this markdown file's section")
    args = parser.parse_args()

    if not text_vs_onnx.MODEL.exists():
        text_vs_onnx.generate()
    if not check_infer_vs_onnx.MODEL.exists():
        check_infer_vs_onnx.generate()
    rows = []
    big = onnx.load(str(text_vs_onnx.MODEL))
    rows.append(("generated, 12 tensors of 768×1024, 2,437 nodes", measure(big, onnx.printer.to_text(big), args.repeat)))
    many = onnx.load(str(check_infer_vs_onnx.MODEL))
    rows.append(("generated, 20,001 nodes", measure(many, onnx.printer.to_text(many), args.repeat)))
    real = {"onnx_parse": 0.0, "ours_parse": 0.0, "onnx_print": 0.0, "ours_print": 0.0, "bytes": 0}
    real_models = sorted((ROOT / "tests" / "corpus" / "real").glob("*.onnx"))
    unreadable = []
    for path in real_models:
        model = onnx.load(str(path))
        one = measure(model, onnx.printer.to_text(model), args.repeat)
        if one is None:
            unreadable.append(path.stem)
            continue
        for key in real:
            real[key] += one[key]
        print(f"{path.stem}: parse {one['onnx_parse'] / one['ours_parse']:.1f}×, print {one['onnx_print'] / one['ours_print']:.1f}×", file=sys.stderr)
    read = len(real_models) - len(unreadable)
    rows.append((f"the {read} real models of tests/corpus/real onnx reads back, summed", real))

    lines = [
        "## The Python module against onnx's parser and printer (in-process)",
        "",
        "Command: `bash python/build_wheel.sh --release --out /tmp/onnx-text-wheel && "
        ".venv/bin/pip install --force-reinstall --no-deps /tmp/onnx-text-wheel/onnx_text-*.whl && "
        f".venv/bin/python bench/python_module_vs_onnx.py --repeat {args.repeat} --write docs/benchmarks.md`",
        "",
        f"Measured {datetime.date.today()} on {machine()}, onnx {onnx.__version__}, onnx_text {onnx_text.__version__}; "
        f"best of {args.repeat}, one process. Both sides give the same value: a `ModelProto` from the text "
        "(ours includes `ModelProto.FromString` of the bytes it builds), onnx's text from a `ModelProto` "
        "(ours includes `SerializeToString`); each result is checked equal to onnx's first.",
        "",
        "| workload | text | `parse_model` | `onnx_text.parse` | faster | `printer.to_text` | `onnx_text.to_text(style=\"onnx\")` | faster |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in rows:
        lines.append(
            f"| {name} | {r['bytes'] / 1e6:.1f} MB | {r['onnx_parse'] * 1e3:.1f} ms | {r['ours_parse'] * 1e3:.1f} ms | "
            f"**{r['onnx_parse'] / r['ours_parse']:.1f}×** | {r['onnx_print'] * 1e3:.1f} ms | {r['ours_print'] * 1e3:.1f} ms | "
            f"**{r['onnx_print'] / r['ours_print']:.1f}×** |"
        )
    lines += [
        "",
        f"Left out: {', '.join(unreadable) or 'none'} (onnx's parser cannot read the text its printer writes for "
        "them: a `Constant` whose `value` tensor is printed with its name, then refused).",
    ]
    section = "\n".join(lines)
    print(section)
    if args.write:
        update_section(args.write, "python-module", section)


if __name__ == "__main__":
    main()
