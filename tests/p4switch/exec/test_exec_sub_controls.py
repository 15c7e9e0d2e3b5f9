"""Sub-controls applied from controls run inside their caller (p4switch/exec/inline.py):
the packets still see call semantics: per-instance tables, locals of their own, `out`
parameters copied out, `exit` ending the whole ingress."""

import re
from pathlib import Path

import pytest

from p4rt.entries import ActionCall, Exact, TableEntry
from p4switch.exec import LoadedProgram, V1Pipeline

PROGRAM = Path(__file__).parent / "programs" / "sub_controls.p4"


@pytest.fixture(scope="module")
def pipe() -> V1Pipeline:
    prog = LoadedProgram.from_file(PROGRAM)
    for inst, port in (("first", 5), ("second", 7)):
        for et in (0x0800, 0xDEAD):
            prog.tables[f"MyIngress.{inst}.ports"].insert(
                TableEntry({"hdr.ethernet.etherType": Exact(et)}, ActionCall("MyIngress.first.set_port"
                           if inst == "first" else "MyIngress.second.set_port", {"port": port})))
    return V1Pipeline(prog)


def _frame(src: int, ether_type: int) -> bytes:
    return bytes(6) + src.to_bytes(6, "big") + ether_type.to_bytes(2, "big") + b"payload"


def test_sub_controls_run_as_calls(pipe):
    # each Stamp adds (3 + 1) twice to src; meta.a = 3 + 3; Double's out d = 12;
    # dst = d + the caller's t (10)
    out = pipe.process(0, _frame(0x100, 0x0800))
    assert out == [(7, (22).to_bytes(6, "big") + (0x110).to_bytes(6, "big") + bytes.fromhex("0800") + b"payload")]


def test_exit_in_a_sub_control_ends_ingress(pipe):
    # the first Stamp exits after its adds: the second never runs, dst is not written
    out = pipe.process(0, _frame(0x100, 0xDEAD))
    assert out == [(5, bytes(6) + (0x108).to_bytes(6, "big") + bytes.fromhex("dead") + b"payload")]


def test_sub_control_calls_are_inlined(pipe):
    body = re.search(r"^def K\d+_MyIngress\(.*?(?=^def |\Z)", pipe.prog.source, re.S | re.M).group(0)
    assert not re.search(r"K\d+_(Stamp|AddTo|Double)\(", body, re.M), body
