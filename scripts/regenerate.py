#!/usr/bin/env python3
"""Regenerates every committed generated file, each generator in turn, in the order their
inputs need; `--check` regenerates the ones CI checks and fails when a committed file was
out of date.

Usage (from anywhere; the generators run with the repository's .venv, see CONTRIBUTING.md):
    python3 scripts/regenerate.py                   every generator
    python3 scripts/regenerate.py --check           the generators CI runs (CHECKED below),
                                                    then fail listing the files they changed
    python3 scripts/regenerate.py --only invalid verdicts   these generators, in table order
    python3 scripts/regenerate.py --from invalid    this generator and those after it
    python3 scripts/regenerate.py --list            the generators: what each writes, whether
                                                    CI checks it, and what else it needs

The generators need onnx==1.23.2 and numpy; those marked `ort` also onnxruntime==1.32.0
(the version whose verdicts and outputs are committed). `checklist` reads onnx's C++
sources at the commit named in the first line of tests/fixtures/check/onnx_conditions.tsv:
give a checkout or a git directory holding that commit with --onnx-source; without it that
generator is left out and the run says so. The checklist and `version_variants` read each
other's output (a condition seen only at another version gets a model of its version, which
the next checklist sees): with --onnx-source, those four generators run again until the
checklist stops changing.

This script uses the standard library only. The generators run with OpenBLAS choosing its
kernel for the processor (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from their
environment): the committed node tests were written so, and the float outputs of 50 of them
(matrix products in Attention and CausalConvWithState) differ in the last bit under another
kernel. See CONTRIBUTING.md, "Committed data and how to regenerate it", for why the
generators CI does not run are left out.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONDITIONS = "tests/fixtures/check/onnx_conditions.tsv"
ONNX_VERSION = "1.23.2"
ORT_VERSION = "1.32.0"


@dataclasses.dataclass(frozen=True)
class Step:
    name: str
    script: str  # relative to the repository root
    writes: tuple[str, ...]  # files and folders, relative to the root
    checked: bool  # run by --check (CI)
    ort: bool = False  # needs onnxruntime
    stdout_to: str | None = None  # the script prints the file
    args: tuple[str, ...] = ()
    why_not_checked: str = ""
    needs: str = ""  # another package it imports, installed as `pip install` takes it


# In the order their inputs need: a generator reads only what the ones above it write (and
# committed hand-written files), except checklist <-> version_variants (see the module doc).
STEPS = [
    Step("proto", "proto/generate.py", ("proto/onnx.proto",), True, stdout_to="proto/onnx.proto"),
    Step("node_tests", "tests/corpus/gen_node_data.py", ("tests/corpus/node",), False,
         why_not_checked="over a minute, and the float outputs of 50 tests depend on the OpenBLAS kernel that "
         "the processor gets"),
    Step("handmade", "tests/corpus/gen_handmade.py", ("tests/corpus/handmade",), True),
    Step("schemas", "core/schemas/export_schemas.py", ("core/schemas/onnx_schemas.json",), True, ort=True),
    Step("schema_docs", "core/schemas/gen_docs.py", ("core/schemas/onnx_docs.json",), True, ort=True),
    Step("null_inputs", "core/schemas/gen_null_inputs.py", ("core/schemas/null_inputs.tsv",), False,
         why_not_checked="about 15 minutes: a forked full check for every operator version, input and declaration"),
    Step("shapeless_inputs", "core/schemas/gen_shapeless_inputs.py",
         ("core/schemas/shapeless_inputs.tsv", "tests/fixtures/check/shapeless_inputs"), True),
    Step("invalid", "tests/fixtures/check/gen_invalid.py", ("tests/fixtures/check/invalid",), True),
    Step("external_inputs", "tests/fixtures/check/gen_external_inputs.py",
         ("tests/fixtures/check/external_inputs", "tests/fixtures/check/external_inputs.tsv"), True, ort=True),
    Step("mutants", "tests/fixtures/check/gen_mutants.py", ("tests/fixtures/check/mutants.tsv",), False, ort=True,
         why_not_checked="about 2 minutes: two verdicts for each of about 2,000 mutants of the real models"),
    Step("rank_sweep", "tests/fixtures/check/gen_rank_sweep.py",
         ("tests/fixtures/check/rank_sweep", "tests/fixtures/check/rank_sweep.tsv"), False, ort=True,
         why_not_checked="5 to 12 minutes: judges the 22,572 models of the sweep to keep 1,300"),
    Step("version_variants", "tests/fixtures/check/gen_version_variants.py",
         ("tests/fixtures/check/version_variants", "tests/fixtures/check/text/at_version_*"), True),
    Step("fixture_verdicts", "tests/fixtures/check/gen_fixture_verdicts.py",
         ("tests/fixtures/check/fixture_verdicts.tsv",), True, ort=True),
    Step("verdicts", "tests/fixtures/check/gen_verdicts.py", ("tests/fixtures/check/verdicts.tsv",), True),
    Step("checklist", "tests/fixtures/check/gen_checklist.py", (CONDITIONS,), False,
         why_not_checked="reads onnx's C++ sources at a commit of onnx's main branch, which no package holds "
         "(the 1.23.2 sdist's differ)"),
    Step("infer_expected", "tests/fixtures/infer/gen_expected.py", ("tests/fixtures/infer/expected.tsv",), True),
    Step("onnx_text", "tests/corpus/gen_onnx_text.py", ("tests/corpus/golden/onnx-text",), True),
    Step("onnx_reparse", "tests/corpus/gen_onnx_reparse.py", ("tests/corpus/golden/onnx-reparse.tsv",), True),
    Step("corner_inputs", "tests/fixtures/corner/gen_inputs.py", ("tests/fixtures/corner/cases.txt",), True),
    Step("ml_cases", "tests/fixtures/ml/gen_ml_cases.py", ("tests/fixtures/ml",), False, ort=True,
         why_not_checked="onnxruntime's float outputs: its kernels are picked for the processor"),
    Step("random_cases", "tests/fixtures/random/gen_random_cases.py", ("tests/fixtures/random",), True),
    Step("out_of_order", "tests/fixtures/order/gen_out_of_order.py", ("tests/fixtures/order/pt_ts_sdp_reversed.onnx",),
         True, ort=True),
    Step("op_cases", "tests/fixtures/ops/gen_op_cases.py", ("tests/fixtures/ops",), False, ort=True,
         why_not_checked="onnxruntime's float outputs: its kernels are picked for the processor"),
    Step("contrib_cases", "tests/fixtures/contrib_ops/gen_contrib_cases.py", ("tests/fixtures/contrib_ops",), False,
         ort=True, why_not_checked="onnxruntime's float outputs: its kernels are picked for the processor"),
    Step("run_data", "tests/fixtures/run/gen_run_data.py", ("tests/fixtures/run",), False, ort=True,
         why_not_checked="onnxruntime's float outputs: its kernels are picked for the processor"),
    Step("lsp_seeds", "fuzz/lsp_seeds.py", ("fuzz/seeds/lsp_messages", "fuzz/seeds/lsp_edits"), True),
    Step("extract_cases", "tests/fixtures/extract/gen_extract_cases.py", ("tests/fixtures/extract/cases.json",), True),
    Step("set_dims_cases", "tests/fixtures/set_dims/gen_set_dims_cases.py", ("tests/fixtures/set_dims/cases.json",), True,
         ort=True),
    Step("opset_anchors", "tests/fixtures/opset/gen_opset_anchors.py", ("tests/fixtures/opset/anchors.json",), False,
         why_not_checked="runs onnx's version converter on every corpus model to each of 22 opsets (minutes)"),
    Step("cost_cases", "tests/fixtures/cost/gen_cost_cases.py", ("tests/fixtures/cost/onnx_tool.json",), False,
         needs="onnx-tool==1.0.1", why_not_checked="needs onnx-tool, the anchor of `onnx cost`, which CI does not install"),
    Step("simplify_anchors", "tests/fixtures/simplify/gen_simplify_anchors.py", ("tests/fixtures/simplify/anchors.json",),
         False, needs="onnxsim==0.8.1",
         why_not_checked="needs onnxsim, OnnxSlim and polygraphy in a virtual environment of their own (--python)"),
]
# checklist reads these; version_variants reads the checklist.
CHECKLIST_ROUND = ("version_variants", "fixture_verdicts", "verdicts", "checklist")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def changed(paths: list[str]) -> list[str]:
    """Files under `paths` that differ from what is committed (staged or not): modified,
    deleted or new."""
    # A generator kept beside its output is not output.
    out = git("status", "--porcelain", "--untracked-files=all", "--", *paths, ":(exclude)*.py")
    return sorted(line[3:] for line in out.splitlines())


def probe(python: str, module: str) -> str | None:
    """The version of `module` in `python`, or None when it is missing."""
    result = subprocess.run([python, "-c", f"import {module}; print({module}.__version__)"],
                            capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


def run(step: Step, python: str, extra: tuple[str, ...], number: str, log: pathlib.Path | None) -> float:
    print(f"[{number}] {step.name}: {step.script} -> {', '.join(step.writes)}", flush=True)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    command = [python, str(ROOT / step.script), *step.args, *extra]
    start = time.monotonic()
    if step.stdout_to:
        target = ROOT / step.stdout_to
        result = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if result.returncode == 0:
            target.write_bytes(result.stdout)
        output = result.stderr
    else:
        result = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        output = result.stdout
    elapsed = time.monotonic() - start
    text = output.decode("utf-8", "replace")
    if log is not None:
        with log.open("a", encoding="utf-8") as f:
            f.write(f"==== {step.name} ({elapsed:.1f}s, exit {result.returncode})\n{text}")
    lines = [line for line in text.splitlines() if line.strip()]
    if result.returncode != 0:
        print("\n".join(lines[-40:]), file=sys.stderr)
        sys.exit(f"{step.name} failed (exit {result.returncode}) after {elapsed:.1f}s")
    if lines:
        print(f"    {lines[-1][:160]}")
    print(f"    {elapsed:.1f}s", flush=True)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="run the generators CI checks and fail if a committed file changed")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these generators")
    parser.add_argument("--from", dest="start", metavar="NAME", help="run this generator and those after it")
    parser.add_argument("--list", action="store_true", help="list the generators and exit")
    parser.add_argument("--python", default=None,
                        help="the Python with onnx (default: .venv/bin/python of the repository)")
    parser.add_argument("--onnx-source", type=pathlib.Path,
                        help="an onnx checkout or git directory holding the commit the checklist reads")
    parser.add_argument("--log", type=pathlib.Path, help="append every generator's whole output to this file")
    args = parser.parse_args()

    names = [s.name for s in STEPS]
    if args.list:
        for s in STEPS:
            needs = " (needs onnxruntime)" if s.ort else ""
            needs += " (needs --onnx-source)" if s.name == "checklist" else ""
            needs += f" (needs {s.needs})" if s.needs else ""
            checked = "CI" if s.checked else "--"
            print(f"{checked:3} {s.name:17} {s.script}{needs}\n    writes {', '.join(s.writes)}")
            if s.why_not_checked:
                print(f"    not in CI's check: {s.why_not_checked}")
        return 0
    for name in (args.only or []) + ([args.start] if args.start else []):
        if name not in names:
            sys.exit(f"no generator {name!r}; --list names them")

    steps = list(STEPS)
    if args.check:
        steps = [s for s in steps if s.checked]
    if args.start:
        steps = steps[[s.name for s in steps].index(args.start):] if args.start in [s.name for s in steps] else []
    if args.only:
        steps = [s for s in steps if s.name in args.only]
    if not steps:
        sys.exit("no generator to run")

    python = args.python or str(ROOT / ".venv/bin/python")
    if not pathlib.Path(python).exists():
        sys.exit(f"{python} not found: python3 -m venv .venv && .venv/bin/pip install "
                 f"onnx=={ONNX_VERSION} numpy onnxruntime=={ORT_VERSION}")
    found = probe(python, "onnx")
    if found != ONNX_VERSION:
        sys.exit(f"{python} has onnx {found}; the committed data come from onnx {ONNX_VERSION}")
    if any(s.ort for s in steps):
        found = probe(python, "onnxruntime")
        if found != ORT_VERSION:
            sys.exit(f"{python} has onnxruntime {found}; the committed verdicts and outputs come from "
                     f"onnxruntime {ORT_VERSION}: {python} -m pip install onnxruntime=={ORT_VERSION}")

    skipped = []
    for s in [s for s in steps if s.needs]:
        module = s.needs.split("==")[0].replace("-", "_")
        if subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode != 0:
            steps.remove(s)
            skipped.append(f"{s.name} (needs {python} -m pip install {s.needs})")
    if any(s.name == "checklist" for s in steps) and args.onnx_source is None:
        steps = [s for s in steps if s.name != "checklist"]
        skipped.append("checklist (needs --onnx-source)")
    checklist_args: tuple[str, ...] = ()
    if args.onnx_source is not None:
        commit = (ROOT / CONDITIONS).read_text(encoding="utf-8").split(" at onnx ", 1)[1].split()[0]
        checklist_args = (str(args.onnx_source.resolve()), "--rev", commit)

    writes = sorted({w for s in steps for w in s.writes})
    if args.check:
        dirty = changed(writes)
        if dirty:
            sys.exit("generated files differ from what is committed before regenerating; commit or stash them "
                     "first:\n  "
                     + "\n  ".join(dirty[:20]))
    if args.log:
        args.log.write_text("")

    conditions_read = (ROOT / CONDITIONS).read_bytes()
    timings: list[tuple[str, float]] = []
    total_start = time.monotonic()
    for i, step in enumerate(steps, 1):
        extra = checklist_args if step.name == "checklist" else ()
        timings.append((step.name, run(step, python, extra, f"{i}/{len(steps)}", args.log)))
    # The checklist and the version variants read each other: the round again until the
    # checklist writes what the version variants last read.
    ran = [s.name for s in steps]
    if "checklist" in ran and all(n in ran for n in CHECKLIST_ROUND):
        read = conditions_read
        for again in range(1, 4):
            now = (ROOT / CONDITIONS).read_bytes()
            if now == read:
                break
            read = now
            for step in (s for s in STEPS if s.name in CHECKLIST_ROUND):
                extra = checklist_args if step.name == "checklist" else ()
                timings.append((f"{step.name} (again)", run(step, python, extra, f"again {again}", args.log)))
        else:
            print(f"warning: {CONDITIONS} still changes after three rounds", file=sys.stderr)

    print(f"\n{len(timings)} generators in {time.monotonic() - total_start:.1f}s:")
    for name, seconds in timings:
        print(f"  {name:28} {seconds:7.1f}s")
    for name in skipped:
        print(f"  left out: {name}")

    stale = changed(writes)
    if args.check:
        if stale:
            print(f"\n{len(stale)} committed generated file(s) are out of date (regenerated in place; review with git diff):")
            for path in stale[:200]:
                print(f"  {path}")
            if len(stale) > 200:
                print(f"  ... and {len(stale) - 200} more")
            print("Run `python3 scripts/regenerate.py` (see CONTRIBUTING.md) and commit the result.")
            return 1
        print("every checked generated file is up to date")
    else:
        print(f"{len(stale)} generated file(s) differ from what is committed" + (": git status shows them" if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
