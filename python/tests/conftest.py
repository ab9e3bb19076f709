"""Shared places for the onnx_text tests.

These tests run against an installed onnx-text wheel (python/test_wheel.sh builds it,
installs it into a fresh virtual environment with onnx, onnxruntime, NumPy, pytest and
pre-commit, and runs them); they read the repository's corpus and fixtures.
"""

from __future__ import annotations

import os
import pathlib
import sysconfig

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
FIXTURES = ROOT / "tests" / "fixtures"


def wheel_binary(name: str) -> str:
    """The path of one of the wheel's binaries, installed beside this interpreter."""
    path = os.path.join(sysconfig.get_path("scripts"), name)
    assert os.path.isfile(path), f"{name} is not installed beside this Python ({path}): is the wheel installed?"
    return path


@pytest.fixture(scope="session")
def onnx_binary() -> str:
    return wheel_binary("onnx")


def corpus_models(max_bytes: int | None = None) -> list[pathlib.Path]:
    """Every binary model of the corpus but the real exporters' (tests/corpus/real has its
    own tests), in path order."""
    found = []
    for path in sorted(CORPUS.rglob("*.onnx")):
        rel = path.relative_to(CORPUS)
        if rel.parts[0] in ("golden", "real"):
            continue
        if max_bytes is not None and path.stat().st_size > max_bytes:
            continue
        found.append(path)
    return found


def real_models() -> list[pathlib.Path]:
    return sorted((CORPUS / "real").glob("*.onnx"))


__all__ = ["ROOT", "CORPUS", "FIXTURES", "wheel_binary", "corpus_models", "real_models"]
