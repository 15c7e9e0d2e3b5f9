"""The generated entry points (``p4switch/exec/entries.py``): a packet's headers are reused
for a later packet once it has been sent, and a later packet must still find them as new
(fields zero, every header invalid, a stack's nextIndex 0), on both backends."""

from __future__ import annotations

import pytest

from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.frontend import compile_file

# ``a.seen`` shows what the ingress read: b.f ^ s[0].v while b is invalid (fresh headers give
# 0), s[0].v while b is valid (the element the parser's ``s.next`` filled)
PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> kind; bit<8> seen; }
header b_t { bit<8> f; }
header s_t { bit<8> v; }
struct headers { a_t a; b_t b; s_t[2] s; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.a); transition select(hdr.a.kind) { 1: parse_b; default: accept; } }
    state parse_b { pkt.extract(hdr.b); pkt.extract(hdr.s.next); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.b.isValid()) { hdr.a.seen = hdr.s[0].v; } else { hdr.a.seen = hdr.b.f ^ hdr.s[0].v; }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.a); pkt.emit(hdr.b); pkt.emit(hdr.s); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.mark.parametrize("backend", ["python", pytest.param("mypyc", marks=pytest.mark.slow)])
def test_a_later_packet_finds_reused_headers_as_new(backend: str, tmp_path) -> None:
    (tmp_path / "reuse.p4").write_text(PROGRAM)
    pipe = V1Pipeline(LoadedProgram.from_checked(compile_file(str(tmp_path / "reuse.p4")), backend=backend))
    assert pipe.process(0, bytes.fromhex("0100AB11")) == [(1, bytes.fromhex("0111AB11"))]
    # b and s[0] were valid in the packet before: read while invalid they are zero now
    assert pipe.process(0, bytes.fromhex("0077")) == [(1, bytes.fromhex("0000"))]
    # s.next fills s[0] again: the stack's nextIndex starts at 0
    assert pipe.process(0, bytes.fromhex("01002233")) == [(1, bytes.fromhex("01332233"))]
    # the same through the device's path: ingress, then egress of the queued job
    for frame, out in ((bytes.fromhex("0100AB11"), "0111AB11"), (bytes.fromhex("0077"), "0000")):
        job, = pipe.ingress(0, frame).to_egress
        assert pipe.egress(job).transmit == [(1, bytes.fromhex(out))]
