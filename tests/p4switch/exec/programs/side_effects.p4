// Side effects inside expressions, in P4's evaluation order: a table applied in the
// condition of ?:, a function with an out argument used inside an arithmetic expression,
// nested function calls, and an exit from a table action.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> r1; bit<8> r2; bit<8> r3; }
struct headers { h_t h; }
struct metadata { }

bit<8> twice(in bit<8> v, out bit<8> half) {
    half = v >> 1;
    return v << 1;
}
bit<8> inc(in bit<8> v) { return v + 1; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action leave() { hdr.h.r3 = 0xEE; exit; }
    action stay() { }
    table t {
        key = { hdr.h.k: exact; }
        actions = { leave; stay; }
        default_action = stay();
    }
    apply {
        sm.egress_spec = 1;
        hdr.h.r1 = (t.apply().hit ? 8w0x11 : 8w0x22);
        bit<8> half;
        hdr.h.r2 = twice(hdr.h.k, half) + half;
        hdr.h.r3 = inc(inc(hdr.h.r3));
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
