"""The mypyc backend (``p4switch/exec/native.py``): the generated module compiled to C gives
the same packets as the Python one, each loaded program has tables of its own, a module is
built once and then found in the cache, and what goes wrong says so. (Every STF program of
tests/p4switch/exec/programs, the conformance corpus and fabric.p4's STF tests also run on
both backends.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from p4rt.entries import ActionCall, Lpm, TableEntry
from p4switch.exec import LoadedProgram, V1Pipeline, native
from p4switch.frontend import compile_file

pytestmark = pytest.mark.slow  # builds C extensions

BASIC = Path(__file__).parent / "programs" / "basic_l3.p4"
FRAME = bytes.fromhex("00000000000100000000000208004500002100010000401165C60A0000010A000105"
                      "04D20050000DA1DA68656C6C6F")  # to 10.0.1.5, IPv4 checksum right


def _basic(backend: str, port: int) -> V1Pipeline:
    prog = LoadedProgram.from_checked(compile_file(str(BASIC)), backend=backend)
    prog.tables["MyIngress.ipv4_lpm"].insert(TableEntry(
        {"hdr.ipv4.dstAddr": Lpm(0x0A000100, 24)},
        ActionCall("MyIngress.ipv4_forward", {"dstAddr": 0xAA, "port": port})))
    return V1Pipeline(prog)


def test_compiled_program_forwards_what_the_python_one_does() -> None:
    py, c = _basic("python", 3), _basic("mypyc", 3)
    assert c.prog.compiled.backend == "mypyc" and py.prog.compiled.backend == "python"
    assert not hasattr(c.prog.compiled.hdr_cls(), "__dict__")  # a native class: fields in slots
    assert hasattr(py.prog.compiled.hdr_cls(), "__dict__")
    frames = [FRAME, FRAME[:20], FRAME[:14] + b"\x46" + FRAME[15:], FRAME[:-1] + b"\x00"]
    for now, frame in enumerate(frames):
        assert repr(c.process(0, frame, now)) == repr(py.process(0, frame, now))
    assert dict(c.stats) == dict(py.stats)
    assert c.process(0, FRAME, 9)[0][0] == 3


def test_each_load_has_tables_of_its_own() -> None:
    """mypyc keeps a module's globals in C statics; each load maps its own copy, so two
    switches of one process never see each other's entries."""
    a, b = _basic("mypyc", 5), _basic("mypyc", 7)
    assert a.prog.compiled.module_file == b.prog.compiled.module_file  # one build, cached
    assert [p for p, _ in a.process(0, FRAME, 1)] == [5]
    assert [p for p, _ in b.process(0, FRAME, 1)] == [7]
    assert [p for p, _ in a.process(0, FRAME, 2)] == [5]


def test_a_module_mypy_refuses_is_a_build_error_with_its_output(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path))
    with pytest.raises(native.NativeBuildError, match=r'Incompatible types in assignment.*"str".*"int"'):
        native.build(native.module_text("x: int = 'one'\n", {}))
    assert not list(tmp_path.glob("*" + native.SUFFIX))  # nothing half-built is cached


def test_unknown_backend_is_refused(monkeypatch) -> None:
    monkeypatch.setenv(native.BACKEND_ENV, "cython")
    with pytest.raises(ValueError, match="P4SWITCH_BACKEND='cython': expected one of python, mypyc"):
        LoadedProgram.from_checked(compile_file(str(BASIC)))


def test_build_ahead_from_the_command_line() -> None:
    run = subprocess.run([sys.executable, "-m", "p4switch.exec.native", str(BASIC)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    built = Path(run.stdout.split(" module ")[1].strip())
    assert run.stdout.startswith(f"{BASIC}: mypyc module ") and built.exists()
    assert built.parent == native.cache_dir()
