"""Table look-ups that generated code makes itself (exact index, remembered LPM and ternary
answers, direct counters counted inline) follow every change of the entries: a packet after
an insert, a modify, a delete or a new default sees it, on both backends."""

from __future__ import annotations

import pytest

from p4rt.entries import ActionCall, Exact, Lpm, TableEntry, Ternary
from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.frontend import compile_file

# one byte written by each table's action: (a: exact, b: LPM, c: ternary with the ingress port
# beside it, a look-up remembered under both fields packed into one int; d: exact with a direct
# counter), from the key byte k
PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header t_t { bit<8> k; bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { t_t t; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.t); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) d_hits;
    action set_a(bit<8> v) { hdr.t.a = v; }
    action set_b(bit<8> v) { hdr.t.b = v; }
    action set_c(bit<8> v) { hdr.t.c = v; }
    action set_d(bit<8> v) { hdr.t.d = v; }
    table ta { key = { hdr.t.k: exact; } actions = { set_a; } default_action = set_a(0xA0); }
    table tb { key = { hdr.t.k: lpm; } actions = { set_b; } default_action = set_b(0xB0); }
    table tc { key = { hdr.t.k: ternary; sm.ingress_port: exact; } actions = { set_c; } default_action = set_c(0xC0); }
    table td { key = { hdr.t.k: exact; } actions = { set_d; } default_action = set_d(0xD0); counters = d_hits; }
    apply { sm.egress_spec = 1; ta.apply(); tb.apply(); tc.apply(); td.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.t); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

KEY, PORT = 0x12, 3


def _entries(v: int) -> dict[str, TableEntry]:
    return {
        "I.ta": TableEntry({"hdr.t.k": Exact(KEY)}, ActionCall("I.set_a", {"v": v | 0xA0})),
        "I.tb": TableEntry({"hdr.t.k": Lpm(KEY, 8)}, ActionCall("I.set_b", {"v": v | 0xB0})),
        "I.tc": TableEntry({"hdr.t.k": Ternary(KEY, 0xFF), "sm.ingress_port": Exact(PORT)},
                           ActionCall("I.set_c", {"v": v | 0xC0}), priority=1),
        "I.td": TableEntry({"hdr.t.k": Exact(KEY)}, ActionCall("I.set_d", {"v": v | 0xD0})),
    }


@pytest.mark.parametrize("backend", ["python", pytest.param("mypyc", marks=pytest.mark.slow)])
def test_a_packet_sees_every_change_of_the_entries(backend: str, tmp_path) -> None:
    (tmp_path / "changes.p4").write_text(PROGRAM)
    prog = LoadedProgram.from_checked(compile_file(str(tmp_path / "changes.p4")), backend=backend)
    pipe = V1Pipeline(prog)

    def written() -> str:
        (port, frame), = pipe.process(PORT, bytes([KEY, 0, 0, 0, 0]))
        assert port == 1
        return frame[1:].hex()

    assert written() == "a0b0c0d0"  # every default, the same key remembered as a miss
    for name, entry in _entries(1).items():
        prog.tables[name].insert(entry)
    assert written() == "a1b1c1d1"
    for name, entry in _entries(2).items():
        prog.tables[name].modify(entry)
    assert written() == "a2b2c2d2"
    assert written() == "a2b2c2d2"
    # the counted table's hits, counted into the entry's counter (a modify keeps counting)
    count = prog.tables["I.td"].get({"hdr.t.k": Exact(KEY)}).counter
    assert (count.packets, count.bytes) == (3, 15)
    for name, entry in _entries(2).items():
        prog.tables[name].delete(entry)
    assert written() == "a0b0c0d0"
    for name, call in (("I.ta", "set_a"), ("I.tb", "set_b"), ("I.tc", "set_c"), ("I.td", "set_d")):
        prog.tables[name].set_default(ActionCall(f"I.{call}", {"v": 0x33}))
    assert written() == "33333333"
