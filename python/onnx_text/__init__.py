"""ONNX models as text, from Python: parse, print, format, check, infer and run.

The same core as the ``onnx`` command (Rust, in this wheel), with the interpreter's lock
released while it works. Models go in as ``onnx.ModelProto`` (when onnx is installed), as
their protobuf bytes, or as a path; tensors as NumPy arrays.

``parse`` and ``to_text(style="onnx")`` stand in for ``onnx.parser.parse_model`` and
``onnx.printer.to_text``: the same ``ModelProto`` from every text onnx's parser reads, the
same text byte for byte from every model its printer prints. ``to_text``'s default style,
``canonical``, also keeps what onnx's text cannot say, and reads back to the same model.

Failures raise :class:`OnnxTextError`, whose ``diagnostics`` say what is wrong and where.
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, Any, Literal, Mapping, Union

from . import _onnx_text
from ._errors import OnnxTextError
from ._onnx_text import Diagnostic

if TYPE_CHECKING:
    import numpy
    import onnx

__version__: str = _onnx_text.__version__
__all__ = [
    "Diagnostic",
    "OnnxTextError",
    "check",
    "format",
    "infer",
    "parse",
    "run",
    "to_text",
]

#: A model: an ``onnx.ModelProto``, its protobuf bytes, or the path of a ``.onnx`` file
#: (or of a text model, ``.onnxtxt``/``.onnxtext``).
ModelLike = Union["onnx.ModelProto", bytes, bytearray, memoryview, "os.PathLike[str]"]

_TEXT_SUFFIXES = (".onnxtxt", ".onnxtext")


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as missing:
        raise ImportError(
            "onnx_text returns onnx.ModelProto values when the onnx package is installed "
            "(pip install onnx); pass as_bytes=True to get the model's protobuf bytes instead"
        ) from missing
    return onnx


def _is_model_proto(value: object) -> bool:
    return type(value).__name__ == "ModelProto" and hasattr(value, "SerializeToString")


def _read(model: ModelLike) -> tuple[bytes | str, str | None]:
    """The model as protobuf bytes (or, for a text file, its text) and the directory its
    external data is relative to."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), None
    if isinstance(model, os.PathLike):
        path = os.fspath(model)
        directory = os.path.dirname(os.path.abspath(path))
        if path.lower().endswith(_TEXT_SUFFIXES):
            with open(path, encoding="utf-8") as f:
                return f.read(), directory
        with open(path, "rb") as f:
            return f.read(), directory
    if _is_model_proto(model):
        return model.SerializeToString(), None  # type: ignore[union-attr]
    if isinstance(model, str):
        raise TypeError(
            "a str is taken as a model's text only by parse, format and check; "
            "pass a path as pathlib.Path, or parse the text first"
        )
    raise TypeError(f"expected an onnx.ModelProto, bytes or a path, not {type(model).__name__}")


def _binary(model: ModelLike) -> tuple[bytes, str | None]:
    data, directory = _read(model)
    if isinstance(data, str):
        data = _onnx_text.parse(data)
    return data, directory


def parse(text: str, *, strict: bool = False, as_bytes: bool = False) -> onnx.ModelProto | bytes:
    """Parses ONNX text into a model, as ``onnx.parser.parse_model`` does.

    Reads onnx's text format and our canonical text. A text that breaks a rule of meaning
    (an undefined value, a name defined twice) still parses, as with onnx's parser, unless
    ``strict``. Returns an ``onnx.ModelProto``, or with ``as_bytes`` its protobuf bytes
    (onnx need not be installed then). Raises :class:`OnnxTextError` with every syntax
    error placed by line and column.
    """
    data = _onnx_text.parse(text, strict=strict)
    if as_bytes:
        return data
    return _onnx().ModelProto.FromString(data)


def to_text(
    model: ModelLike | onnx.GraphProto | onnx.FunctionProto,
    *,
    style: Literal["canonical", "onnx"] = "canonical",
) -> str:
    """Prints a model as text.

    ``canonical`` (the default) reads back to exactly the same model, with what onnx's text
    cannot say in ``#@`` annotations onnx's parser reads as comments; ``onnx`` is byte for
    byte what ``onnx.printer.to_text`` prints. Like onnx's printer, it also prints a
    ``GraphProto`` or a ``FunctionProto`` alone (in the onnx style).
    """
    kind = type(model).__name__
    if kind in ("GraphProto", "FunctionProto") and hasattr(model, "SerializeToString"):
        holder = _onnx().ModelProto()
        if kind == "GraphProto":
            holder.graph.CopyFrom(model)
        else:
            holder.functions.append(model)
        part = "graph" if kind == "GraphProto" else "function"
        return _onnx_text.to_text(holder.SerializeToString(), style=style, part=part)
    data, _ = _binary(model)
    return _onnx_text.to_text(data, style=style)


def format(text: str) -> str:  # noqa: A001 - the verb users look for; shadows only inside this module
    """Formats ONNX text as ``onnx fmt`` does: layout only, comments kept, the model
    unchanged. Raises :class:`OnnxTextError` for a text with syntax errors."""
    return _onnx_text.format(text)


def check(
    model: ModelLike | str,
    *,
    full_check: bool = True,
    check_custom_domain: bool = False,
) -> list[Diagnostic]:
    """Checks a model as ``onnx.checker.check_model(model, full_check=True)`` does, and more
    (name resolution, declared types against inferred ones). A ``str`` is a model's text.

    Returns every finding, errors and warnings, each with its code (docs/diagnostics.md) and
    place: line and column in a text, a protobuf field path (``graph.node[3].input[1]``) in
    a binary model. A model without errors is valid.
    """
    if isinstance(model, str):
        return _onnx_text.check(model, full_check=full_check, check_custom_domain=check_custom_domain)
    data, directory = _read(model)
    return _onnx_text.check(
        data, full_check=full_check, check_custom_domain=check_custom_domain, base_dir=directory
    )


def infer(model: ModelLike) -> onnx.ModelProto | bytes:
    """Infers every value's type and shape and records them in the model's value_info, as
    ``onnx.shape_inference.infer_shapes`` does. Returns what it was given: bytes for bytes,
    otherwise an ``onnx.ModelProto``."""
    data, _ = _binary(model)
    inferred = _onnx_text.infer(data)
    if isinstance(model, (bytes, bytearray, memoryview)):
        return inferred
    return _onnx().ModelProto.FromString(inferred)


def run(
    model: ModelLike,
    inputs: Mapping[str, numpy.ndarray],
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> dict[str, numpy.ndarray]:
    """Runs a model on NumPy inputs with the evaluator ``onnx run`` uses, and returns its
    outputs by name, in the model's order. External data is read relative to ``base_dir``
    (by default, the model file's directory when given a path)."""
    import numpy as np

    data, directory = _binary(model)
    encoded = []
    for name, value in inputs.items():
        array = np.ascontiguousarray(value)
        if array.dtype.kind in "OUS":
            raise TypeError(f"input {name!r}: string tensors are not supported by run yet")
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        encoded.append((name, buffer.getvalue()))
    where = os.fspath(base_dir) if base_dir is not None else directory
    outputs = _onnx_text.run(data, encoded, base_dir=where)
    return {name: np.load(io.BytesIO(npy), allow_pickle=False) for name, npy in outputs}
