// Left-to-right evaluation when a call writes its inout argument: an operand read before
// the call keeps its old value; an assignment's l-value (a run-time stack index) is
// evaluated before its right-hand side; `a[f()] op= x` calls f once; a list or struct
// initializer reads its items in order.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> x; bit<8> y; bit<8> i; bit<8> j; }
header e_t { bit<8> v; }
struct pair_t { bit<8> first; bit<8> second; }
struct headers_t { h_t h; e_t[4] s; }
struct meta_t { }

bit<8> bump(inout bit<8> v) {      // returns the old value, leaves v + 1
    bit<8> old = v;
    v = v + 1;
    return old;
}
bit<8> zap(inout bit<8> v) {       // returns 100, leaves 0
    v = 0;
    return 100;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); pkt.extract(hdr.s.next); pkt.extract(hdr.s.next);
                  pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> a = hdr.h.x;
        hdr.h.x = a + zap(a);                       // x + 100
        if (hdr.h.y == bump(hdr.h.y)) {             // compares the old y: true
            hdr.h.y = hdr.h.y + 0x10;               // y + 1 + 0x10
        }
        hdr.s[hdr.h.i & 3].v = zap(hdr.h.i);        // index read before zap: s[i].v = 100
        hdr.s[bump(hdr.h.j) & 3].v |= 0x80;         // j incremented once
        pair_t p = { hdr.h.j, bump(hdr.h.j) };      // { j, j } then j + 1
        hdr.s[3].v = (p.first << 4) | p.second;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
