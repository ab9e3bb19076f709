"""The exception every `onnx_text` function raises when it cannot do what was asked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from ._onnx_text import Diagnostic


class OnnxTextError(ValueError):
    """A model or text that cannot be read, printed, formatted or run.

    ``diagnostics`` lists what was found, each with its code and place (empty when the
    failure is not about a place, such as a run that ran out of memory).
    """

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self.diagnostics: list[Diagnostic] = list(diagnostics)
