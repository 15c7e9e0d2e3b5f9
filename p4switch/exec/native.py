"""The ``mypyc`` backend: a program's generated Python module compiled to a C extension.

The executor generates one Python module per program (``elaborate.ProgramCompiler``) and runs
it with ``exec``: that is the ``python`` backend, the reference. With the ``mypyc`` backend the
same text, preceded by the runtime objects it uses read into typed ``Final`` globals
(``module_text``), is compiled by mypyc; the parser also reads fields byte by byte
(``TypeClasses.native``). The generated classes carry annotations (``TypeClasses.annotation``), so mypyc turns them into
native classes whose field reads are slot reads, and the stages' typed parameters let it
compile field accesses to those. mypyc keeps Python's int semantics (tagged 63-bit ints, big
ints beyond), so no P4 width can overflow in C: the compiled module computes exactly what the
Python one does, which the tests check packet by packet.

Builds are slow (35 s for fabric.p4), so a built module is cached by the hash of its text,
mypy's version, the interpreter's and the optimisation level, and ``python -m p4switch.exec.prebuild
PROGRAM.p4`` builds one ahead. A mypyc module keeps its globals in C statics, one set per
loaded file, while every switch binds its own tables into them: each load therefore maps its
own copy of the file (copied, loaded, unlinked).

Choose with the environment: ``P4SWITCH_BACKEND=mypyc`` (``python`` is the default), the
cache in ``P4SWITCH_NATIVE_CACHE`` (default ``~/.cache/p4switch/native``).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

BACKENDS = ("python", "mypyc")
BACKEND_ENV = "P4SWITCH_BACKEND"
CACHE_ENV = "P4SWITCH_NATIVE_CACHE"
# gcc -O1: fabric.p4 builds in 35 s against 74 s at -O3, which saves only 1.4 % of basic L3's
# instructions (34,200 against 34,700 a packet): the C is mostly calls into CPython and mypyc's runtime
OPT_LEVEL = "1"
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]

# Run in the build directory with the module's name as argument: mypyc checks the module with
# mypy, writes C, and setuptools compiles it next to the source.
_SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify
name = sys.argv.pop()
setup(name=name, ext_modules=mypycify([name + ".py"], opt_level=sys.argv.pop()),
      script_args=["build_ext", "--inplace"])
"""


# the runtime objects of the module being loaded, which its top level reads (``module_text``)
loading: dict[str, Any] | None = None
_LOADING_LOCK = threading.Lock()


class NativeBuildError(RuntimeError):
    """mypyc could not build a program's module (the message ends with its output)."""


def backend() -> str:
    """The backend new programs load with (``P4SWITCH_BACKEND``)."""
    name = os.environ.get(BACKEND_ENV, "python") or "python"
    if name not in BACKENDS:
        raise ValueError(f"{BACKEND_ENV}={name!r}: expected one of {', '.join(BACKENDS)}")
    return name


def cache_dir() -> Path:
    path = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "p4switch" / "native")
    path.mkdir(parents=True, exist_ok=True)
    return path


def module_text(source: str, injected: dict[str, str]) -> str:
    """The generated ``source`` as a module mypy accepts, with the runtime objects and helpers
    it uses (tables, registers, ``Stack``...; name -> annotation, most are ``Any``) read at
    import from ``loading`` into ``Final`` globals: mypyc keeps those in C statics, so a use
    is a memory read, where a global bound after import is a dictionary look-up (twenty of
    them in a fabric.p4 packet's ingress, 2,900 instructions)."""
    decls = "".join(f"{name}: Final[{injected[name]}] = _objects[{name!r}]\n"
                    for name in sorted(injected) if name != "Any")
    return ("import sys\nfrom typing import Any, Final\n"
            f"_objects: Any = sys.modules[{__name__!r}].loading\n" + decls + source)


def module_name(text: str) -> str:
    key = f"{importlib.metadata.version('mypy')}\0{sys.version}\0{OPT_LEVEL}\0{text}"
    return "p4n_" + hashlib.sha256(key.encode()).hexdigest()[:24]


def build(text: str) -> tuple[str, Path]:
    """The module's name and its built extension in the cache, building it if need be. Two
    processes building the same module at once each build and the last rename wins (the
    results are the same file)."""
    name = module_name(text)
    if not Path(sysconfig.get_paths()["include"], "Python.h").exists():
        raise NativeBuildError("the mypyc backend needs Python's C headers (Python.h), which this "
                               "Python lacks: install them (Debian: python3-dev) or use the python backend")
    cache = cache_dir()
    built = cache / (name + SUFFIX)
    if built.exists():
        return name, built
    with tempfile.TemporaryDirectory(dir=cache, prefix="build-") as tmp:
        (Path(tmp) / f"{name}.py").write_text(text)
        res = subprocess.run([sys.executable, "-c", _SETUP, OPT_LEVEL, name], cwd=tmp,
                             capture_output=True, text=True)
        out = Path(tmp) / (name + SUFFIX)
        if res.returncode != 0 or not out.exists():
            tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-20:])
            raise NativeBuildError(f"mypyc could not build the generated module:\n{tail}")
        os.replace(out, built)
    return name, built


def load(name: str, built: Path, objects: dict[str, Any]) -> ModuleType:
    """A fresh instance of the built module, with globals of its own (see the module's
    docstring), its runtime ``objects`` bound as it starts (``module_text``): the file is
    copied, loaded from the copy and the copy removed."""
    global loading
    fd, copy = tempfile.mkstemp(suffix=SUFFIX, dir=cache_dir(), prefix="load-")
    os.close(fd)
    try:
        shutil.copyfile(built, copy)
        loader = importlib.machinery.ExtensionFileLoader(name, copy)
        spec = importlib.util.spec_from_file_location(name, copy, loader=loader)
        assert spec is not None
        with _LOADING_LOCK:  # switches load their pipelines from several threads
            loading = objects
            try:
                module = importlib.util.module_from_spec(spec)
                loader.exec_module(module)
            finally:
                loading = None
    finally:
        os.unlink(copy)
    sys.modules.pop(name, None)  # each switch holds its own instance; none is "the" module
    return module
