"""Helpers shared by the benchmark scripts: machine facts, timing a command, updating a
section of docs/benchmarks.md."""
from __future__ import annotations

import json
import os
import pathlib
import platform
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "bench-data"


def cpu_model() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> str:
    return f"{os.cpu_count()} × {cpu_model()}, Python {platform.python_version()}"


def run_timed(cmd: list[str], ok: tuple[int, ...] = (0,)) -> tuple[float, int, bytes]:
    """Wall time (s), peak RSS (KiB) and stdout of one run; fails loudly on an exit code not
    in `ok`."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in ok:
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{' '.join(cmd)} failed: {stderr}")
    return elapsed, usage.ru_maxrss, stdout


def onnx_run_median(binary: pathlib.Path, model: pathlib.Path, data: pathlib.Path, runs: int,
                    extra: list[str]) -> float | None:
    """The median milliseconds per run `onnx run MODEL --test-data DATA --repeat RUNS` reports;
    `None` when it cannot run the model (said on stderr)."""
    import sys

    done = subprocess.run(
        [str(binary), "run", str(model), "--test-data", str(data), "--repeat", str(runs), *extra],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        print(f"{model.name}: ours fails: {done.stderr.strip()[-200:]}", file=sys.stderr)
        return None
    line = next(l for l in done.stdout.splitlines() if l.startswith("time per run"))
    return float(line.split("median ")[1].split(" ms")[0])


def update_section(path: pathlib.Path, name: str, section: str) -> None:
    """Replaces (or appends) the part of `path` between `<!-- bench:NAME:start/end -->`."""
    start, end = f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"
    body = f"{start}\n{section}\n{end}"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + body + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    path.write_text(text)


def lsp_messages(stream):
    """The messages a language server writes on `stream` (its stdout), parsed, until it
    closes: the protocol's `Content-Length` framing."""
    while True:
        length = 0
        while True:
            line = stream.readline()
            if not line:
                return
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        yield json.loads(stream.read(length))
