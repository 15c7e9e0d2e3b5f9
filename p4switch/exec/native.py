"""The ``mypyc`` backend: a program's generated Python module compiled to a C extension.

The executor generates one Python module per program (``elaborate.ProgramCompiler``) and runs
it with ``exec``: that is the ``python`` backend, the reference. With the ``mypyc`` backend the
same text, reshaped so that the helpers it uses are typed ``Final`` globals and each switch's
own objects (tables, registers...) are attributes of a native ``Objects`` instance
(``module_text``), is compiled by mypyc; the parser also reads fields byte by byte
(``TypeClasses.native``). The generated classes carry annotations (``TypeClasses.annotation``), so mypyc turns them into
native classes whose field reads are slot reads, and the stages' typed parameters let it
compile field accesses to those. mypyc keeps Python's int semantics (tagged 63-bit ints, big
ints beyond), so no P4 width can overflow in C: the compiled module computes exactly what the
Python one does, which the tests check packet by packet.

Builds are slow (35 s for fabric.p4), so a built module is cached by the hash of its text,
mypy's version, the interpreter's and the optimisation level, and ``python -m p4switch.exec.prebuild
PROGRAM.p4`` builds one ahead. A process loads a module once, whatever the number of
switches running the program: each has its own ``Objects``, which its pipeline hands to the
generated code as ``ctx.objs``. (A first version kept each switch's objects in module
statics and loaded a copy of the file per switch: 20 copies of the code made a k=4 fat tree's
simulation slower than the Python backend, 6,300 against 6,650 hops per CPU second; one copy
gives 10,200.)

Choose with the environment: ``P4SWITCH_BACKEND=python``, ``mypyc`` or ``auto``, the default:
mypyc when the program's module is built already (``make setup`` builds fabric.p4's), else
python, so a switch never waits for a build it was not asked for. The cache is in
``P4SWITCH_NATIVE_CACHE`` (default ``~/.cache/p4switch/native``).
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import tempfile
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from netbase.build_cache import (
    BACKEND_ENV,
    OPT_LEVEL,
    SUFFIX,
    cache_dir,
    key_prefix,
    load_extension,
    run_mypyc,
)

BACKENDS = ("python", "mypyc")
# what a user may choose: a backend, or ``auto`` (the default): mypyc when the program's module
# is already built (``make setup`` builds fabric.p4's; ``prebuild``), else python, so that no
# switch waits for a build it did not ask for
CHOICES = (*BACKENDS, "auto")

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


# gcc -O3 for a program built ahead (``prebuild``: fabric.p4's, by ``make setup``), where a build
# made when a switch loads a program takes -O1 (``OPT_LEVEL``): a longer build (~42 s against
# ~35 s for fabric.p4) for 2 % fewer instructions a packet-hop in the simulator
AHEAD_OPT_LEVEL = "3"

# the runtime objects of the module being loaded, which its top level reads (``module_text``)
loading: dict[str, Any] | None = None
_LOADING_LOCK = threading.Lock()
_loaded: dict[str, ModuleType] = {}  # module name -> the process's one instance of it
_OWN = re.compile(r"O\d+_\w*")  # a switch's own runtime objects (``RuntimeObjects.add_object``)
_OWN_USE = re.compile(r"\bO\d+_\w*")


def checked_backend(name: str, what: str = "unknown backend ") -> str:
    """``name`` if it is one of ``CHOICES``, else a ValueError (``what`` before the name) with them."""
    if name not in CHOICES:
        raise ValueError(f"{what}{name!r}: expected one of {', '.join(CHOICES)}")
    return name


def backend() -> str:
    """The choice new programs load with (``P4SWITCH_BACKEND``, default ``auto``)."""
    return checked_backend(os.environ.get(BACKEND_ENV) or "auto", f"{BACKEND_ENV}=")


def use_backend(name: str) -> None:
    """Load every program of this process from now on with backend ``name``: also the ones a
    P4Runtime client pushes later, which is why the choice is the process's environment."""
    os.environ[BACKEND_ENV] = checked_backend(name)


# ``runtime.Context`` as a native class: the generated functions take it as ``ctx: Ctx``, so
# their reads of ``ctx.objs``, ``ctx.nbytes``... are slot reads. (The Python backend keeps
# ``runtime.Context``, whose class-level defaults make a new one cheaper in the interpreter.)
# A pipeline keeps one as a template and makes each pass's with its ``fresh`` (its switch's
# objects, random generator and log): a class called from outside the module parses its
# arguments as a tuple and a dictionary, and through ``functools.partial`` that was 1,400
# instructions a pass; a native method without arguments constructs it as a C call.
CONTEXT_CLASS = """
class Ctx:
    sm: {sm_cls}
    nbytes: int
    now: int
    payload: bytes
    clone_type: Any
    clone_session: int
    clone_fl: int | None
    resubmit_fl: int | None
    recirc_fl: int | None
    digests: tuple[Any, ...]
    truncate: int
    objs: Objects
    randbits: Any
    logs: list[str]
    out: BytesWriter
    def __init__(self, objs: Objects, randbits: Any, logs: list[str]) -> None:
        self.objs = objs
        self.randbits = randbits
        self.logs = logs
        self.out = BytesWriter()  # the deparser's, emptied for each packet (E_deparse)
        self.nbytes = 0
        self.now = 0
        self.payload = b""
        # as E_clear (entries.py) leaves them before each pass; assigned here, not by calling
        # it, so that mypyc knows every field always defined (no check at each read)
        self.clone_type = None
        self.clone_session = 0
        self.clone_fl = None
        self.resubmit_fl = None
        self.recirc_fl = None
        self.digests = ()
        self.truncate = 0
    def random(self, lo: int, hi: int) -> int:
        return random_in(self.randbits, lo, hi)
    def log_msg(self, msg: str, values: tuple[Any, ...] = ()) -> None:
        log_message(self.logs, msg, values)
    def fresh(self) -> Ctx:
        return Ctx(self.objs, self.randbits, self.logs)
"""


# What the generated code reads frames and writes the deparser's output with (codegen.py's
# ``word_read``, ``word_writes``, ``out_type``), imported by name so that mypyc compiles each
# call to its C primitive.
LIBRT_IMPORT = ("from librt.strings import BytesWriter, read_i16_be, read_i32_be, write_i16_be, write_i32_be\n"
                "from librt.vecs import vec\nfrom mypy_extensions import i64\n")


def _stack_class() -> str:
    """The source of ``stack.Stack``, which each program's module compiles as its own class:
    a stack's list, index and methods are then slot reads and native calls in the generated
    code (as a runtime object of another compiled module, each was a generic attribute
    look-up, ten of them for an INT hop's push). One class, read from its one source."""
    source = Path(__file__).with_name("stack.py").read_text()
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "Stack")
    return (ast.get_source_segment(source, node) or "") + "\n"


STACK_CLASS = _stack_class()


def module_text(source: str, injected: dict[str, str], sm_cls: str) -> str:
    """The generated ``source`` as a module mypy accepts, given the names the executor binds
    for it (name -> annotation, most are ``Any``). The helpers every switch shares
    (``from_bytes``, hash functions...) are read at import from ``loading`` into ``Final``
    globals, which mypyc keeps in C statics (a use is a memory read; a global bound after
    import is a dictionary look-up); ``Stack`` is compiled in (``STACK_CLASS``). A switch's
    own objects (tables, registers, counters: the ``O<n>_`` names) are attributes of a native
    ``Objects`` instance, one per switch, which every function that uses them takes from
    ``ctx.objs`` once: so all the switches of a process run one copy of the compiled code.
    ``ctx`` is a native ``Ctx`` (``CONTEXT_CLASS``, its ``sm`` of the class ``sm_cls`` names)."""
    own = sorted(n for n in injected if _OWN.fullmatch(n))
    shared = "".join(f"{n}: Final[{injected[n]}] = _objects[{n!r}]\n"
                     for n in sorted(injected) if n not in ("Any", "Stack") and n not in own)
    objects = "class Objects:\n" + "".join(f"    {n}: {injected[n]}\n" for n in own) + "    pass\n"
    return ("import sys\nfrom typing import Any, Final, cast\n" + LIBRT_IMPORT
            + f"_objects: Any = sys.modules[{__name__!r}].loading\n" + shared + STACK_CLASS + objects
            + _through_objects(source, set(own)) + CONTEXT_CLASS.format(sm_cls=sm_cls))


def _through_objects(source: str, own: set[str]) -> str:
    """``source`` with each top-level function's uses of a switch's own objects read from
    ``_o``, the ``Objects`` its first statement takes from ``ctx.objs`` (``ctx`` typed ``Ctx``)."""
    out: list[str] = []
    func: list[str] = []

    def flush() -> None:
        used = False

        def attr(m: re.Match) -> str:
            nonlocal used
            if m.group(0) not in own:
                return m.group(0)
            used = True
            return "_o." + m.group(0)

        body = [_OWN_USE.sub(attr, line) for line in func[1:]]
        if func:
            out.append(func[0])
            if used:
                out.append("    _o: Objects = ctx.objs")
            out.extend(body)
        func.clear()

    for line in source.splitlines():
        if line and not line[0].isspace():
            flush()
            if line.startswith("def ") and "ctx: Any" in line:
                func.append(line.replace("ctx: Any", "ctx: Ctx"))
                continue
        (func if func else out).append(line)
    flush()
    return "\n".join(out) + "\n"


def module_name(text: str, opt_level: str = OPT_LEVEL) -> str:
    key = key_prefix(opt_level) + text
    return "p4n_" + hashlib.sha256(key.encode()).hexdigest()[:24]


def _cached(name: str) -> Path:
    """Where the cache keeps module ``name``'s extension."""
    return cache_dir() / (name + SUFFIX)


def built(text: str) -> tuple[str, Path | None]:
    """The module's name and its built extension in the cache (a build made ahead first), None
    if it is not built."""
    for level in (AHEAD_OPT_LEVEL, OPT_LEVEL):
        name = module_name(text, level)
        path = _cached(name)
        if path.exists():
            return name, path
    return module_name(text), None


def build(text: str, opt_level: str = OPT_LEVEL) -> tuple[str, Path]:
    """The module's name and its built extension in the cache, building it at ``opt_level``
    if need be: a build made ahead serves any level, a load's (-O1) does not serve a build
    asked for ahead (``prebuild`` after a switch had loaded the program left its -O1 build in
    use: 4 % more instructions a packet-hop in the simulator). Two processes building the same
    module at once each build and the last rename wins (the results are the same file)."""
    name, found = built(text)
    if found is not None and (opt_level != AHEAD_OPT_LEVEL or name == module_name(text, AHEAD_OPT_LEVEL)):
        return name, found
    name = module_name(text, opt_level)
    with tempfile.TemporaryDirectory(dir=cache_dir(), prefix="build-") as tmp:
        (Path(tmp) / f"{name}.py").write_text(text)
        out = Path(tmp) / (name + SUFFIX)
        run_mypyc(_SETUP, [opt_level, name], tmp, [out], "the generated module")
        path = _cached(name)
        os.replace(out, path)
    return name, path


def load(name: str, path: Path, objects: dict[str, Any]) -> tuple[ModuleType, Any]:
    """The built module (loaded once per process; its shared helpers taken from ``objects``
    then) and a new ``Objects`` holding this switch's own objects out of ``objects``."""
    global loading
    with _LOADING_LOCK:  # switches load their pipelines from several threads
        module = _loaded.get(name)
        if module is None:
            loading = objects
            try:
                module = load_extension(name, path)
            finally:
                loading = None
            _loaded[name] = module
    own = module.Objects()
    for key, value in objects.items():
        if _OWN.fullmatch(key):
            setattr(own, key, value)
    return module, own
