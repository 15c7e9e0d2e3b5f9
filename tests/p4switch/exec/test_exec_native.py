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

from netbase import build_cache
from netbase.hotpath import DATA_PATH
from p4rt.entries import ActionCall, Lpm, TableEntry
from p4switch.exec import LoadedProgram, V1Pipeline, native
from p4switch.exec.stack import Stack
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


def test_a_compiled_programs_header_stacks_are_its_own_native_class() -> None:
    """The mypyc backend compiles ``Stack`` into each program's module (``native.STACK_CLASS``),
    so the generated code reads a stack's list and index from slots; the Python backend uses
    the one runtime class. (parser_features.stf runs the stack operations on both.)"""
    program = compile_file(str(BASIC.with_name("parser_features.p4")))
    c = LoadedProgram.from_checked(program, backend="mypyc").compiled
    py = LoadedProgram.from_checked(program, backend="python").compiled
    stack, runtime_stack = c.hdr_cls().mpls, py.hdr_cls().mpls
    assert type(stack).__module__ == c.hdr_cls.__module__ and not hasattr(stack, "__dict__")
    assert type(runtime_stack) is Stack
    assert len(stack.h) == len(runtime_stack.h) == 3


def test_each_load_has_tables_of_its_own() -> None:
    """Two switches of one process run one loaded module, each with its own ``Objects``: they
    never see each other's entries."""
    a, b = _basic("mypyc", 5), _basic("mypyc", 7)
    assert a.prog.compiled.module_file == b.prog.compiled.module_file  # one build, cached
    assert a.prog.compiled.hdr_cls is b.prog.compiled.hdr_cls  # and one module loaded
    assert [p for p, _ in a.process(0, FRAME, 1)] == [5]
    assert [p for p, _ in b.process(0, FRAME, 1)] == [7]
    assert [p for p, _ in a.process(0, FRAME, 2)] == [5]


def test_a_module_mypy_refuses_is_a_build_error_with_its_output(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(build_cache.CACHE_ENV, str(tmp_path))
    with pytest.raises(build_cache.NativeBuildError, match=r'Incompatible types in assignment.*"str".*"int"'):
        native.build(native.module_text("x: int = 'one'\n", {}, "Any"))
    assert not list(tmp_path.glob("*" + native.SUFFIX))  # nothing half-built is cached


def test_a_build_made_ahead_is_the_one_a_load_finds(tmp_path, monkeypatch) -> None:
    """``prebuild`` builds at native.AHEAD_OPT_LEVEL (gcc -O3), a load at -O1 only what it
    does not find: a program built ahead is not built again."""
    monkeypatch.setenv(build_cache.CACHE_ENV, str(tmp_path))
    text = native.module_text("def seven() -> int:\n    return 7\n",
                              {n: "Any" for n in ("ParserError", "random_in", "log_message")}, "Any")
    assert native.built(text)[1] is None
    name, path = native.build(text, native.AHEAD_OPT_LEVEL)
    assert name == native.module_name(text, native.AHEAD_OPT_LEVEL) != native.module_name(text)
    assert native.built(text) == (name, path) == native.build(text)
    assert len(list(tmp_path.glob("*" + native.SUFFIX))) == 1


def test_a_build_asked_for_ahead_is_made_beside_a_loads(tmp_path, monkeypatch) -> None:
    """A switch that loaded the program first built it at -O1; ``prebuild`` still builds it
    ahead (gcc -O3), and every load from then on finds that one."""
    monkeypatch.setenv(build_cache.CACHE_ENV, str(tmp_path))
    text = native.module_text("def eight() -> int:\n    return 8\n",
                              {n: "Any" for n in ("ParserError", "random_in", "log_message")}, "Any")
    loaded = native.build(text)
    assert loaded[0] == native.module_name(text)
    ahead = native.build(text, native.AHEAD_OPT_LEVEL)
    assert ahead[0] == native.module_name(text, native.AHEAD_OPT_LEVEL) != loaded[0]
    assert native.built(text) == ahead == native.build(text)


def test_unknown_backend_is_refused(monkeypatch) -> None:
    monkeypatch.setenv(native.BACKEND_ENV, "cython")
    with pytest.raises(ValueError, match="P4SWITCH_BACKEND='cython': expected one of python, mypyc, auto"):
        LoadedProgram.from_checked(compile_file(str(BASIC)))


def test_auto_runs_the_compiled_module_once_it_is_built_and_never_builds_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(build_cache.CACHE_ENV, str(tmp_path))
    monkeypatch.delenv(native.BACKEND_ENV, raising=False)  # auto is the default
    first = LoadedProgram.from_checked(compile_file(str(BASIC)))
    assert first.compiled.backend == "python" and not list(tmp_path.glob("*" + native.SUFFIX))
    built = LoadedProgram.from_checked(compile_file(str(BASIC)), backend="mypyc")
    again = LoadedProgram.from_checked(compile_file(str(BASIC)))
    assert again.compiled.backend == "mypyc" and again.compiled.module_file == built.compiled.module_file
    pipe = V1Pipeline(again)
    pipe.prog.tables["MyIngress.ipv4_lpm"].insert(TableEntry(
        {"hdr.ipv4.dstAddr": Lpm(0x0A000100, 24)},
        ActionCall("MyIngress.ipv4_forward", {"dstAddr": 0xAA, "port": 3})))
    assert [port for port, _ in pipe.process(0, FRAME)] == [3]


def test_build_ahead_from_the_command_line() -> None:
    run = subprocess.run([sys.executable, "-m", "p4switch.exec.prebuild", str(BASIC)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    program, switch = run.stdout.splitlines()
    built = Path(program.split(" module ")[1])
    assert program.startswith(f"{BASIC}: mypyc module ") and built.exists()
    assert built.parent == native.cache_dir()
    assert Path(switch.split(" built in ")[1]) == DATA_PATH.build_dir()  # the switch's own modules too


COUNTING = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { eth_t eth; }
struct metadata { bit<32> seen; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(4) seen;
    counter(4, CounterType.packets_and_bytes) frames;
    apply {
        seen.read(meta.seen, 2);
        seen.write(2, meta.seen + 1);
        frames.count(1);
        hdr.eth.src = (bit<48>) meta.seen;
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.mark.parametrize("backend", ["python", "mypyc"])
def test_registers_and_counters_the_control_plane_sees_and_resets(tmp_path, backend) -> None:
    """The generated code holds a register's cells and a counter's lists itself (as typed
    globals when compiled): what it writes is what the control plane reads, and a reset by the
    control plane is what the next packet reads."""
    path = tmp_path / "counting.p4"
    path.write_text(COUNTING)
    pipe = V1Pipeline(LoadedProgram.from_checked(compile_file(str(path)), backend=backend))
    frame = bytes(14)
    seen = [int.from_bytes(pipe.process(0, frame, t)[0][1][6:12]) for t in range(3)]
    assert seen == [0, 1, 2]
    reg, ctr = pipe.prog.register("seen"), pipe.prog.counter("frames")
    assert reg.read(2) == 3 and (ctr.read(1).packets, ctr.read(1).bytes) == (3, 42)
    reg.reset()
    reg.write(1, 7)
    assert int.from_bytes(pipe.process(0, frame, 4)[0][1][6:12]) == 0
    assert reg.read(2) == 1 and reg.read(1) == 7 and ctr.read(1).packets == 4
