"""Where mypyc's builds are kept and what keys them, for both kinds of compiled code: a
program's generated module (``p4switch.exec.native``) and the switch's own per-packet modules
(``p4switch.hotpath``). Standard library only: ``p4switch/__init__`` reaches it before any
module that may be replaced by its build is imported."""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.metadata
import os
import sys
from pathlib import Path

BACKEND_ENV = "P4SWITCH_BACKEND"
CACHE_ENV = "P4SWITCH_NATIVE_CACHE"
# gcc -O1: fabric.p4 builds in 35 s against 74 s at -O3, which saves only 1.4 % of basic L3's
# instructions (34,200 against 34,700 a packet): the C is mostly calls into CPython and mypyc's runtime
OPT_LEVEL = "1"
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def cache_dir() -> Path:
    path = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "p4switch" / "native")
    path.mkdir(parents=True, exist_ok=True)
    return path


@functools.cache
def mypy_version() -> str:
    return importlib.metadata.version("mypy")  # read from its metadata once, not per switch


def key_prefix() -> str:
    """What every build's key starts with: a build is only valid for the mypy (mypyc),
    the interpreter and the optimisation level that made it."""
    return f"{mypy_version()}\0{sys.version}\0{OPT_LEVEL}\0"


def python_only() -> bool:
    """``P4SWITCH_BACKEND=python``: nothing compiled runs, neither programs nor the switch."""
    return os.environ.get(BACKEND_ENV) == "python"
