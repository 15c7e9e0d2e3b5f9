"""Headers (and header stacks) of a struct share one read-only invalid instance per type
until written (runtime.SharedInvalid / SharedStack). The write paths are covered by
programs/lazy_headers.stf (test_exec_stf); here: a write that reaches the shared instance
fails loudly instead of changing what every other packet reads, and a packet that writes a
header leaves the next packet's headers invalid."""

from pathlib import Path

import pytest

from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.exec.runtime import SharedHeaderWrite, assign_into

PROG = Path(__file__).parent / "programs" / "lazy_headers.p4"
ETH = bytes.fromhex("000000000001" "000000000002" "1234")


@pytest.fixture(scope="module")
def prog() -> LoadedProgram:
    return LoadedProgram.from_file(PROG)


def test_fresh_headers_are_shared_and_invalid(prog):
    h1, h2 = prog.compiled.hdr_cls(), prog.compiled.hdr_cls()
    assert h1.a is h2.a and h1.b is h1.c  # one instance per header type
    assert h1.s is h2.s
    assert not h1.a.v_ and h1.a.x == 0 and h1.s.h[2].v == 0 and h1.s.nxt == 0
    copy = h1.a.copy()  # a copy is a header of its own
    copy.x = 5
    assert copy.x == 5 and h2.a.x == 0


def test_stores_into_the_shared_instance_are_refused(prog):
    hdr = prog.compiled.hdr_cls()
    with pytest.raises(SharedHeaderWrite, match="field x"):
        hdr.a.x = 1
    with pytest.raises(SharedHeaderWrite):
        hdr.a.setv()
    with pytest.raises(SharedHeaderWrite):
        assign_into(hdr.a, prog.compiled.hdr_cls().a.copy())
    with pytest.raises(SharedHeaderWrite):
        hdr.s.nxt = 1
    with pytest.raises(SharedHeaderWrite):
        hdr.s.push_front(1)
    with pytest.raises(TypeError):
        hdr.s.h[0] = hdr.a.copy()
    assert hdr.a.x == 0 and not hdr.a.v_ and hdr.s.nxt == 0


def test_a_written_header_does_not_leak_into_the_next_packet(prog):
    pipe = V1Pipeline(prog)
    written = pipe.process(0, ETH + bytes.fromhex("03000000AABB"))
    assert written == [(1, ETH + bytes.fromhex("03000000" "0300" "AABB"))]
    assert pipe.process(0, ETH + bytes.fromhex("00000000AABB")) == [(1, ETH + bytes.fromhex("00000000AABB"))]
    assert pipe.stats.get("dropped_internal_error", 0) == 0
