"""The per-packet Python modules (the data path) compiled to C by mypyc as one build, and
imported in place of their sources while the build matches them.

A packet's way through the switch is a dozen Python calls between the device, the traffic
manager, PFC and the pipeline around the program's own compiled code; through a NIC, as many
between the requester, the responder, the RoCE codec and congestion control; in the simulator,
as many again between the engine, links and nodes. Interpreted, each call costs ~500
instructions; compiled together, the calls inside a group are C calls and the fields slot reads
(the switch's group took the device's basic L3 packet from 55,000 instructions to 32,700;
``python -m bench instructions``).

``DATA_PATH`` names them: netbase's (clock, wire formats), ``p4switch``'s (device, TM, PFC,
pipeline, header stacks, externs), ``nicmodel``'s (the transport, RoCE codec and congestion
control), ``fabricsim``'s (engine, links, nodes), ``p4rt.wire`` (P4Runtime's protobuf wire
format, which the switch's Read answers are encoded in: a telemetry sample is thousands of
counter cells, 19 % fewer instructions compiled), ``p4rt.packets`` (the packet-in), the server's
``packetio`` and the controller's ``packet_in`` and ``int_reports`` (a packet-in per INT report
in a simulation, from the switch to the collector's record). One build for all, not one a package: mypyc
treats classes outside the build it compiles as Python classes, so a call from the simulator's
node into the device, or from the host into the NIC, was a Python call (its method looked up by
name, its ints boxed, its arguments parsed: ~500 instructions), a few a packet-hop; built
together they are C calls (the simulator's hop: -2 %). netbase's ``__init__`` installs the
finder, and every package with modules here imports netbase first, so no module of the list is
imported before it: the names are data here, netbase imports none of those packages.

The build is made ahead (``python -m netbase``, which ``make setup`` runs) into the native
cache, under a key of the modules' source bytes (and mypy's version, the interpreter's and the
optimisation level, as a program's module). The finder imports the build in the modules' place
only when the key matches the sources as they are: an edited module runs as Python until it is
built again, never as a stale build. It decides once per process for all of them (compiled,
each module expects the others' native classes). ``P4SWITCH_BACKEND=python`` in the environment
a process starts with runs them all as Python (the reference: the tests run both ways). No
build, no compiler: Python, as before.
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
# gcc -O3, where a program's module takes -O1 (``build_cache.OPT_LEVEL``): built once, by ``make
# setup``, in about the same time (~58 s); the simulator's hop takes 1.3 % fewer instructions
OPT_LEVEL = "3"

# Run from the root (so the modules get their package names) with the output directory, the C
# directory, the optimisation level and the sources. Imports of modules outside the build are
# followed silently: mypy checks those only as far as the compiled ones use them; packages
# without type information (the P4Runtime protobufs ``p4rt.wire`` reads field numbers from)
# are ``Any`` to it.
_SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify
out, c_dir, opt, *paths = sys.argv[1:]
setup(name="data-path",
      ext_modules=mypycify(["--follow-imports=silent", "--ignore-missing-imports", *paths], opt_level=opt, target_dir=c_dir),
      script_args=["build_ext", "--build-lib", out, "--build-temp", c_dir])
"""


class HotPath(importlib.abc.MetaPathFinder):
    """A group of modules compiled together, and the finder that imports them."""

    def __init__(self, modules: Sequence[str], root: Path = ROOT) -> None:
        self.modules = tuple(modules)
        self.root = root
        self._dir: Path | None = None
        self._checked = False

    def source(self, module: str) -> Path:
        return self.root / (module.replace(".", "/") + ".py")

    def complete(self) -> bool:
        """Every module's source is here (a copy of some of the packages alone runs as Python)."""
        return all(self.source(m).exists() for m in self.modules)

    def build_dir(self) -> Path:
        """Where the build of the sources as they are now lives (it may not exist)."""
        digest = hashlib.sha256(build_cache.key_prefix(OPT_LEVEL).encode())
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
            build_cache.run_mypyc(_SETUP, [str(out), str(c_dir), OPT_LEVEL,
                                           *(str(self.source(m).relative_to(self.root)) for m in self.modules)],
                                  self.root, [self.extension(out, m) for m in self.modules],
                                  "the per-packet modules (netbase.hotpath)")
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
            found = None if build_cache.python_only() or not self.complete() else self.build_dir()
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
        """Put the finder before the path's (netbase's ``__init__`` calls it, once)."""
        if not any(isinstance(f, HotPath) and f.modules == self.modules for f in sys.meta_path):
            sys.meta_path.insert(0, self)


def _load_runtime(found: Path) -> None:
    """Import the build's shared library, which each module's extension imports by its
    top-level name (it is not on ``sys.path``)."""
    (lib,) = (p for p in found.glob("*__mypyc*" + build_cache.SUFFIX))
    name = lib.name.split(".")[0]
    if name not in sys.modules:
        sys.modules[name] = build_cache.load_extension(name, lib)


DATA_PATH = HotPath((
    "netbase.clock", "netbase.ethernet", "netbase.ipv4", "netbase.pfc",
    "p4switch.switch.pfc", "p4switch.switch.tm", "p4switch.exec.stack", "p4switch.exec.externs",
    "p4switch.exec.pipeline", "p4switch.switch.device",
    "nicmodel.psn", "nicmodel.counters", "nicmodel.actions", "nicmodel.roce", "nicmodel.int_md", "nicmodel.loss_detection",
    "nicmodel.cc.base", "nicmodel.cc.dcqcn", "nicmodel.cc.hpcc", "nicmodel.cc.timely", "nicmodel.qp",
    "nicmodel.requester", "nicmodel.responder", "nicmodel.nic", "nicmodel.workloads",
    "fabricsim.engine", "fabricsim.link", "fabricsim.switch_node", "fabricsim.host",
    "p4rt.wire", "p4rt.packets", "p4switch.p4runtime.packetio", "controller.packet_in", "controller.int_reports",
))
