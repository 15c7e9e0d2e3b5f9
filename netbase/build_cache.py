"""Where mypyc's builds are kept and what keys them, for both kinds of compiled code: a P4
program's generated module (``p4switch.exec.native``) and the per-packet modules of the switch,
the NIC model and the simulator (``netbase.hotpath``). Standard library only: a package's
``__init__`` reaches it before any module that may be replaced by its build is imported. The
environment's names keep the switch's prefix, where they began (``P4SWITCH_BACKEND=python``
runs everything as Python)."""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

BACKEND_ENV = "P4SWITCH_BACKEND"
CACHE_ENV = "P4SWITCH_NATIVE_CACHE"
# gcc -O1 for a program's module: fabric.p4 builds in 35 s against 74 s at -O3, which saves only
# 1.4 % of basic L3's instructions (34,200 against 34,700 a packet): the C is mostly calls into
# CPython and mypyc's runtime. The data path (``netbase.hotpath``), built once, takes -O3.
OPT_LEVEL = "1"
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def cache_dir() -> Path:
    path = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "p4switch" / "native")
    path.mkdir(parents=True, exist_ok=True)
    return path


@functools.cache
def mypy_version() -> str:
    return importlib.metadata.version("mypy")  # read from its metadata once, not per switch


def key_prefix(opt_level: str = OPT_LEVEL) -> str:
    """What every build's key starts with: a build is only valid for the mypy (mypyc),
    the interpreter and the optimisation level that made it."""
    return f"{mypy_version()}\0{sys.version}\0{opt_level}\0"


def python_only() -> bool:
    """``P4SWITCH_BACKEND=python``: nothing compiled runs, neither programs nor any module group."""
    return os.environ.get(BACKEND_ENV) == "python"


class NativeBuildError(RuntimeError):
    """mypyc could not build (the message ends with its output)."""


def run_mypyc(setup: str, args: list[str], cwd: Path | str, outputs: list[Path], what: str) -> None:
    """Run the build script ``setup`` (``python -c``) with ``args`` in ``cwd``; a
    NativeBuildError naming ``what`` unless it made every one of ``outputs``."""
    if not Path(sysconfig.get_paths()["include"], "Python.h").exists():
        raise NativeBuildError("the mypyc backend needs Python's C headers (Python.h), which this "
                               "Python lacks: install them (Debian: python3-dev) or use the python backend")
    res = subprocess.run([sys.executable, "-c", setup, *args], cwd=cwd, capture_output=True, text=True)
    if res.returncode != 0 or not all(p.exists() for p in outputs):
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-20:])
        raise NativeBuildError(f"mypyc could not build {what}:\n{tail}")


def load_extension(name: str, path: Path) -> ModuleType:
    """Import the built extension at ``path`` as module ``name`` (not put in ``sys.modules``)."""
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
