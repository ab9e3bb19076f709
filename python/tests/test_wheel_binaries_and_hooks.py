"""The wheel's commands, `python -m onnx_text`, and the pre-commit hooks on a sample
repository, all from the installed wheel."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import onnx

import onnx_text
from conftest import FIXTURES, ROOT, wheel_binary

SCRIPTS = sysconfig.get_path("scripts")


def test_the_three_commands_are_installed_and_run() -> None:
    for name in ("onnx", "onnx-lsp", "onnx-view"):
        out = subprocess.run([wheel_binary(name), "--version"], capture_output=True, text=True, check=True)
        assert out.stdout.startswith(f"{name} {onnx_text.__version__}"), out.stdout


def test_python_dash_m_runs_the_onnx_command() -> None:
    via_module = subprocess.run([sys.executable, "-m", "onnx_text", "--version"], capture_output=True, text=True, check=True)
    direct = subprocess.run([wheel_binary("onnx"), "--version"], capture_output=True, text=True, check=True)
    assert via_module.stdout == direct.stdout
    # Exit codes come through: an invalid model is 1.
    broken = FIXTURES / "invalid_models" / "cycle.onnxtxt"
    failed = subprocess.run([sys.executable, "-m", "onnx_text", "check", str(broken)], capture_output=True, text=True)
    assert failed.returncode == 1 and "undefined-value" in failed.stderr


def _send(stream, message: dict) -> None:
    body = json.dumps(message).encode()
    stream.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    stream.flush()


def _receive(stream) -> dict:
    length = None
    while True:
        line = stream.readline()
        assert line, "the server closed its output"
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    assert length is not None
    return json.loads(stream.read(length))


def test_the_language_server_answers_initialize_over_stdio() -> None:
    server = subprocess.Popen([wheel_binary("onnx-lsp")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        params = {"processId": None, "rootUri": None, "capabilities": {}}
        _send(server.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        reply = _receive(server.stdout)
        while "id" not in reply:  # notifications (log messages) may come first
            reply = _receive(server.stdout)
        assert reply["id"] == 1 and "capabilities" in reply["result"], reply
        _send(server.stdin, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        _send(server.stdin, {"jsonrpc": "2.0", "method": "exit"})
        assert server.wait(timeout=60) == 0
    finally:
        server.kill()
        server.wait()


def test_convert_round_trips_a_real_model(tmp_path: pathlib.Path) -> None:
    source = ROOT / "tests" / "corpus" / "real" / "cntk_mnist_conv.onnx"
    text, back = tmp_path / "m.onnxtxt", tmp_path / "m.onnx"
    onnx_bin = wheel_binary("onnx")
    subprocess.run([onnx_bin, "convert", "--inline", str(source), str(text)], check=True, capture_output=True)
    subprocess.run([onnx_bin, "convert", str(text), str(back)], check=True, capture_output=True)
    assert onnx.load(str(back)) == onnx.load(str(source))
    assert onnx_text.to_text(back) == onnx_text.to_text(source)


def _git(repo: pathlib.Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_pre_commit_hooks_format_and_check_a_sample_repository(tmp_path: pathlib.Path) -> None:
    repo = tmp_path / "sample"
    repo.mkdir()
    ugly = '<ir_version: 8, opset_import: ["" : 17]>\ng (float[2] x) => (float[2] y) {\n   y   =   Relu(x)\n}\n'
    (repo / "ugly.onnxtxt").write_text(ugly)
    shutil.copy(FIXTURES / "invalid_models" / "undefined_value.onnxtxt", repo / "broken.onnxtxt")
    shutil.copy(ROOT / "tests" / "corpus" / "real" / "cntk_mnist_conv.onnx", repo / "good.onnx")
    (repo / "notes.txt").write_text("not a model\n")
    env = {
        **os.environ,
        # The wheel's `onnx` first, as in an environment it is installed in.
        "PATH": SCRIPTS + os.pathsep + os.environ.get("PATH", ""),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }
    # The hooks' repository: this checkout's .pre-commit-hooks.yaml, committed alone (a clone
    # of the whole repository, as `pre-commit try-repo` makes, takes half a minute per run).
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", hooks)
    _git(hooks, "init", "-q")
    _git(hooks, "add", ".")
    _git(hooks, "-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "hooks")
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hooks, check=True, capture_output=True, text=True).stdout.strip()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks.as_posix()}\n    rev: {rev}\n    hooks:\n      - id: onnx-fmt\n      - id: onnx-check\n"
    )
    _git(repo, "init", "-q")
    _git(repo, "add", ".")

    def hook(hook_id: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", hook_id, "--all-files"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=600,
        )

    formatted = hook("onnx-fmt")
    assert formatted.returncode == 1 and "files were modified by this hook" in formatted.stdout, formatted.stdout
    assert (repo / "ugly.onnxtxt").read_text() == onnx_text.format(ugly) != ugly
    assert (repo / "notes.txt").read_text() == "not a model\n"
    again = hook("onnx-fmt")
    assert again.returncode == 0, again.stdout

    checked = hook("onnx-check")
    assert checked.returncode == 1, checked.stdout
    assert "undefined-value" in checked.stdout and "broken.onnxtxt" in checked.stdout
    assert "good.onnx: valid" in checked.stdout
    (repo / "broken.onnxtxt").unlink()
    _git(repo, "add", "-A")
    assert hook("onnx-check").returncode == 0
