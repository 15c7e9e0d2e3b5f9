"""Per-packet Python modules compiled to C by mypyc, a group at a time, and imported in place
of their sources while the build matches them.

A packet's way through the switch is a dozen Python calls between the device, the traffic
manager, PFC and the pipeline around the program's own compiled code; through a NIC, as many
between the requester, the responder, the RoCE codec and congestion control; in the simulator,
as many again between the engine, links and nodes. Interpreted, each call costs ~500
instructions; compiled together, the calls inside a group are C calls and the fields slot reads
(the switch's group took the device's basic L3 packet from 55,000 instructions to 32,700;
``python -m bench instructions``).

Each package that has such modules declares one ``HotPath`` in its ``__init__`` and installs
it there, before any of them is imported: ``p4switch`` (device, TM, PFC, pipeline, header stacks), ``nicmodel``
(the transport and congestion control), ``fabricsim`` (engine, links, nodes). A group is built
ahead (``python -m netbase PACKAGE...``, which ``make setup`` runs) into the native
cache, under a key of its modules' source bytes (and mypy's version, the interpreter's and the
optimisation level, as a program's module). Its finder imports the build in the modules' place
only when the key matches the sources as they are: an edited module runs as Python until it is
built again, never as a stale build. It decides once per process for the whole group (compiled,
each module expects the others' native classes). Calls between groups are ordinary Python
calls: mypyc treats classes outside the build it compiles as Python classes, so one group's
build never assumes another's. ``P4SWITCH_BACKEND=python`` in the environment a process starts
with runs every group as Python (the reference: the tests run both ways). No build, no
compiler: Python, as before.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.util
import os
import sys
import tempfile
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

from netbase import build_cache

ROOT = Path(__file__).resolve().parent.parent

# Run from the root (so the modules get their package names) with the package name, the output
# directory, the C directory, the optimisation level and the sources. Imports of modules outside
# the build are followed silently: mypy checks those only as far as the compiled ones use them.
_SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify
name, out, c_dir, opt, *paths = sys.argv[1:]
setup(name=name + "-hotpath",
      ext_modules=mypycify(["--follow-imports=silent", *paths], opt_level=opt, target_dir=c_dir),
      script_args=["build_ext", "--build-lib", out, "--build-temp", c_dir])
"""


class HotPath(importlib.abc.MetaPathFinder):
    """One package's group of modules compiled together, and the finder that imports them."""

    def __init__(self, package: str, modules: Sequence[str], root: Path = ROOT) -> None:
        self.package = package
        self.modules = tuple(modules)
        self.root = root
        self._dir: Path | None = None
        self._checked = False

    def source(self, module: str) -> Path:
        return self.root / (module.replace(".", "/") + ".py")

    def build_dir(self) -> Path:
        """Where the build of the sources as they are now lives (it may not exist)."""
        digest = hashlib.sha256(build_cache.key_prefix().encode())
        for module in self.modules:
            digest.update(module.encode() + b"\0" + self.source(module).read_bytes() + b"\0")
        return build_cache.cache_dir() / ("p4h_" + digest.hexdigest()[:24])

    def extension(self, directory: Path, module: str) -> Path:
        return directory / (module.replace(".", "/") + build_cache.SUFFIX)

    def build(self) -> Path:
        """Build the modules (unless built already) and return the build's directory. Two
        processes building at once each build; the first rename wins (the builds are the same)."""
        final = self.build_dir()
        if final.exists():
            return final
        with tempfile.TemporaryDirectory(dir=final.parent, prefix="build-") as tmp:
            out, c_dir = Path(tmp, "out"), Path(tmp, "c")
            build_cache.run_mypyc(_SETUP, [self.package, str(out), str(c_dir), build_cache.OPT_LEVEL,
                                           *(str(self.source(m).relative_to(self.root)) for m in self.modules)],
                                  self.root, [self.extension(out, m) for m in self.modules],
                                  f"{self.package}'s per-packet modules")
            try:
                os.rename(out, final)
            except OSError:
                if not final.exists():
                    raise
        return final

    def _build(self) -> Path | None:
        # decided once per process (the key reads the sources), so that all the modules come
        # from the build or none
        if not self._checked:
            self._checked = True
            found = None if build_cache.python_only() else self.build_dir()
            if found is not None and found.exists():
                _load_runtime(found)
                self._dir = found
        return self._dir

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname not in self.modules:
            return None
        found = self._build()
        if found is None:
            return None
        return importlib.util.spec_from_file_location(fullname, self.extension(found, fullname))

    def install(self) -> None:
        """Put the finder before the path's (the package's ``__init__`` calls it, once)."""
        if not any(isinstance(f, HotPath) and f.package == self.package for f in sys.meta_path):
            sys.meta_path.insert(0, self)


def _load_runtime(found: Path) -> None:
    """Import the build's shared library, which each module's extension imports by its
    top-level name (it is not on ``sys.path``)."""
    (lib,) = (p for p in found.glob("*__mypyc*" + build_cache.SUFFIX))
    name = lib.name.split(".")[0]
    if name not in sys.modules:
        sys.modules[name] = build_cache.load_extension(name, lib)
