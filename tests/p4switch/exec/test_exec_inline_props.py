"""Externs constructed in place as table properties (``@name("ap") implementation =
action_profile(32w128);`` and the selector/direct counter/direct meter forms): the executor
names them as P4Info does and they work on packets."""

from pathlib import Path

import pytest

from p4rt.entries import ActionCall, Exact, GroupRef, MemberRef, TableEntry
from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info

PROGRAM = Path(__file__).parent / "programs" / "inline_props.p4"


@pytest.fixture(scope="module")
def checked():
    return compile_file(str(PROGRAM))


def _frame(src: int, ether_type: int) -> bytes:
    return bytes.fromhex("000000000001") + src.to_bytes(6, "big") + ether_type.to_bytes(2, "big") + b"payload"


def test_executor_and_p4info_agree_on_names(checked):
    prog = LoadedProgram.from_checked(checked)
    info = generate_p4info(checked)
    assert set(prog.action_profiles) == {p.preamble.name for p in info.action_profiles} == {"ap", "global_sel"}
    assert "hits" in prog.counters
    assert [c.preamble.name for c in info.direct_counters] == ["hits"]
    assert "policer" in prog.meters
    assert [m.preamble.name for m in info.direct_meters] == ["policer"]
    assert prog.tables["MyIngress.prof_fwd"].implementation == "ap"
    assert prog.tables["MyIngress.sel_fwd"].implementation == "global_sel"
    assert not prog.action_profiles["ap"].has_selector
    assert prog.action_profiles["global_sel"].has_selector


def test_inline_profile_member_forwards(checked):
    prog = LoadedProgram.from_checked(checked)
    prog.action_profiles["ap"].add_member(7, ActionCall("MyIngress.set_port", {"port": 3}))
    prog.tables["MyIngress.prof_fwd"].insert(TableEntry({"hdr.ethernet.dstAddr": Exact(1)}, MemberRef(7)))
    frame = _frame(0xbb, 0x1234)
    assert V1Pipeline(prog).process(0, frame) == [(3, frame)]


def test_inline_selector_spreads_flows_by_hash(checked):
    prog = LoadedProgram.from_checked(checked)
    sel = prog.action_profiles["global_sel"]
    sel.add_member(1, ActionCall("MyIngress.set_port", {"port": 1}))
    sel.add_member(2, ActionCall("MyIngress.set_port", {"port": 2}))
    sel.add_group(10, [(1, 1), (2, 1)])
    prog.tables["MyIngress.sel_fwd"].insert(TableEntry({"hdr.ethernet.etherType": Exact(0x0800)}, GroupRef(10)))
    pipe = V1Pipeline(prog)
    ports = {}
    for src in range(1, 33):
        frame = _frame(src, 0x0800)
        out = pipe.process(0, frame)
        assert len(out) == 1 and out[0][1] == frame
        ports[src] = out[0][0]
        assert pipe.process(0, frame)[0][0] == ports[src]  # one flow, one member
    assert set(ports.values()) == {1, 2}
