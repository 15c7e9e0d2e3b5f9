"""The switch's own per-packet modules compiled to C by mypyc: the device, the traffic manager,
PFC and the v1model pipeline around the program's code (``MODULES``).

A packet's way through the device is a dozen Python calls between these classes (receive,
ingress, enqueue, the TM's scheduling, egress, transmit) besides the program's own compiled
code; interpreted, they were two thirds of a basic L3 packet's 55,000 instructions. Compiled
together, those calls are C calls and the fields slot reads: 32,700 (``python -m bench
instructions``, "device basic L3").

The build is made ahead (``python -m p4switch.exec.prebuild``, which ``make setup`` runs; 15-25 s)
into the native cache, under a key of the modules' source bytes (and mypy's version, the
interpreter's and the optimisation level, as a program's module). A finder that
``p4switch/__init__`` installs imports the build in the modules' place only when its key
matches the sources as they are: an edited module runs as Python until it is built again,
never as a stale build. ``P4SWITCH_BACKEND=python`` in the environment a process starts with
runs them as Python (the reference: the tests run them both ways), as it runs programs; the
``--backend`` options (``p4switch``, ``fabricctl sim run``) choose a program's code only, since
the modules are imported before options are read. No build, no compiler: Python, as before.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import tempfile
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

from p4switch import build_cache

MODULES = ("p4switch.switch.pfc", "p4switch.switch.tm", "p4switch.exec.pipeline", "p4switch.switch.device")
ROOT = Path(__file__).resolve().parent.parent

# Run from ROOT (so the modules get their package names) with the output directory, the C
# directory, the optimisation level and the sources. Imports of modules outside the build are
# followed silently: mypy checks those only as far as the compiled ones use them.
_SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify
out, c_dir, opt, *paths = sys.argv[1:]
setup(name="p4switch-hotpath",
      ext_modules=mypycify(["--follow-imports=silent", *paths], opt_level=opt, target_dir=c_dir),
      script_args=["build_ext", "--build-lib", out, "--build-temp", c_dir])
"""


def _source(module: str) -> Path:
    return ROOT / (module.replace(".", "/") + ".py")


def build_dir() -> Path:
    """Where the build of the sources as they are now lives (it may not exist)."""
    digest = hashlib.sha256(build_cache.key_prefix().encode())
    for module in MODULES:
        digest.update(module.encode() + b"\0" + _source(module).read_bytes() + b"\0")
    return build_cache.cache_dir() / ("p4h_" + digest.hexdigest()[:24])


def build() -> Path:
    """Build the modules (unless built already) and return the build's directory. Two
    processes building at once each build; the first rename wins (the builds are the same)."""
    final = build_dir()
    if final.exists():
        return final
    with tempfile.TemporaryDirectory(dir=final.parent, prefix="build-") as tmp:
        out, c_dir = Path(tmp, "out"), Path(tmp, "c")
        build_cache.run_mypyc(_SETUP, [str(out), str(c_dir), build_cache.OPT_LEVEL,
                                       *(str(_source(m).relative_to(ROOT)) for m in MODULES)],
                              ROOT, [_extension(out, m) for m in MODULES], "the switch's modules")
        try:
            os.rename(out, final)
        except OSError:
            if not final.exists():
                raise
    return final


def _extension(directory: Path, module: str) -> Path:
    return directory / (module.replace(".", "/") + build_cache.SUFFIX)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the built extension of each of ``MODULES`` when the build matches the sources."""

    def __init__(self) -> None:
        self._dir: Path | None = None
        self._checked = False

    def _build(self) -> Path | None:
        # decided once per process (the key reads the sources), so that all the modules come
        # from the build or none: compiled, each expects the others' native classes
        if not self._checked:
            self._checked = True
            found = None if build_cache.python_only() else build_dir()
            if found is not None and found.exists():
                _load_runtime(found)
                self._dir = found
        return self._dir

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname not in MODULES:
            return None
        found = self._build()
        if found is None:
            return None
        return importlib.util.spec_from_file_location(fullname, _extension(found, fullname))


def _load_runtime(found: Path) -> None:
    """Import the build's shared library, which each module's extension imports by its
    top-level name (it is not on ``sys.path``)."""
    (lib,) = (p for p in found.glob("*__mypyc*" + build_cache.SUFFIX))
    name = lib.name.split(".")[0]
    if name not in sys.modules:
        sys.modules[name] = build_cache.load_extension(name, lib)


def install() -> None:
    """Put the finder before the path's (``p4switch/__init__`` calls it, once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
