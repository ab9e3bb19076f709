"""``python -m onnx_text …`` runs the ``onnx`` command this wheel installed.

The wheel puts the native ``onnx``, ``onnx-lsp`` and ``onnx-view`` binaries into the
environment's scripts directory; this finds the one beside this interpreter first (then the
user scheme's, then PATH), so ``python -m onnx_text`` runs this environment's copy even when
another ``onnx`` comes first on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig


def find_binary(name: str = "onnx") -> str:
    """The path of one of the wheel's binaries: ``onnx``, ``onnx-lsp`` or ``onnx-view``."""
    executable = name + (sysconfig.get_config_var("EXE") or "")
    places = [sysconfig.get_path("scripts")]
    preferred = getattr(sysconfig, "get_preferred_scheme", None)  # Python 3.10 on
    user_scheme = preferred("user") if preferred else f"{os.name}_user"
    try:
        places.append(sysconfig.get_path("scripts", scheme=user_scheme))
    except KeyError:
        pass
    for place in places:
        candidate = os.path.join(place, executable)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(executable)
    if found:
        return found
    raise FileNotFoundError(
        f"{executable} is not installed beside this Python ({places[0]}) nor on PATH; "
        "reinstall the onnx-text wheel"
    )


def main() -> int:
    binary = find_binary("onnx")
    if sys.platform == "win32":
        return subprocess.run([binary, *sys.argv[1:]]).returncode
    os.execv(binary, [binary, *sys.argv[1:]])
    return 0  # not reached: execv replaces the process


if __name__ == "__main__":
    sys.exit(main())
