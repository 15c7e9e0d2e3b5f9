// Copy-in/copy-out of directional parameters: `exit` inside an action (also one called from
// another action) still copies its inout arguments out; an action that reaches its inout
// argument under another name works on a copy, which the copy-out then writes back; a
// whole-value assignment to an out/inout struct or header parameter reaches the caller.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }

void refill(out h_t x) { x = { 7, 8, 9 }; }

control Swap(inout headers_t hh) {
    apply { headers_t t = hh; t.h.a = hh.h.b; t.h.b = hh.h.a; hh = t; }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    Swap() swap;
    action set_exit(inout bit<8> v) { v = 0xee; exit; }
    action outer(inout bit<8> v) { v = 0x11; set_exit(v); v = 0x22; }
    action alias(inout headers_t c) { hdr.h.b = 0x99; c.h.a = c.h.a + 1; }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.op == 1) { set_exit(hdr.h.a); }
        if (hdr.h.op == 2) { outer(hdr.h.b); }
        if (hdr.h.op == 3) { alias(hdr); }
        if (hdr.h.op == 4) { refill(hdr.h); }
        if (hdr.h.op == 5) { headers_t t = hdr; t.h.a = 0x55; hdr = t; }
        if (hdr.h.op == 6) { swap.apply(hdr); }
        hdr.h.op = hdr.h.op | 0x80;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
