"""Run the C preprocessor the way p4c does, keeping line markers.

The system ``cpp`` handles ``#include``, ``#define``, ``#if``; ``-x assembler-with-cpp``
keeps it from choking on P4 text that is not C (apostrophes in comments, ``@`` ...), ``-C``
keeps comments so columns stay right, and the ``# N "file"`` markers it writes let the
parser report every error against the user's own file and line.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from p4switch.frontend.errors import CompileError

P4INCLUDE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "p4include")

# Macros p4c defines for the BMv2 target, so programs that test them take the same branch.
TARGET_DEFINES = {"__TARGET_BMV2__": "1", "__p4c__": "1", "__p4c_major__": "1",
                  "__p4c_minor__": "2", "__p4c_patchlevel__": "4"}


def preprocess(path: str, include_dirs: list[str] | None = None,
               defines: dict[str, str | None] | None = None) -> str:
    """Return the preprocessed text of ``path`` (with line markers)."""
    if not os.path.isfile(path):
        raise CompileError(f"cannot read file '{path}'", path, 0, 0)
    cpp = shutil.which("cpp")
    if cpp is None:
        raise CompileError("the C preprocessor 'cpp' is not installed", path, 0, 0)
    cmd = [cpp, "-C", "-undef", "-nostdinc", "-x", "assembler-with-cpp"]
    for d in include_dirs or []:
        cmd.append(f"-I{d}")
    cmd.append(f"-I{P4INCLUDE}")
    all_defines: dict[str, str | None] = dict(TARGET_DEFINES)
    all_defines.update(defines or {})
    for name, value in all_defines.items():
        cmd.append(f"-D{name}" if value is None else f"-D{name}={value}")
    cmd.append(path)
    # p4c reads sources as bytes, so a stray Latin-1 byte in a comment is fine there; decode
    # the same lossy way errors.py rereads lines for carets, so positions agree and nothing raises.
    proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace")
    if proc.returncode != 0:
        raise _cpp_error(proc.stderr, path)
    return proc.stdout


def _cpp_error(stderr: str, path: str) -> CompileError:
    """Turn cpp's first ``file:line:col: error: msg`` into a CompileError."""
    for line in stderr.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[1].strip().isdigit() and "error" in parts[3]:
            col = int(parts[2]) if parts[2].strip().isdigit() else 1
            msg = parts[3].strip()
            if msg.startswith("error:"):
                msg = msg[len("error:"):].strip()
            return CompileError(f"preprocessor: {msg}", parts[0], int(parts[1]), col)
    return CompileError(f"preprocessor failed: {stderr.strip()}", path, 0, 0)
