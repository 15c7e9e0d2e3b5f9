// Struct-typed constants (folded, usable in constant expressions and at run time) and
// `typedef struct S { ... } T;` (P4-16 spec example 12), which declares both names.
#include <core.p4>
#include <v1model.p4>

typedef struct Point { bit<8> x; bit<8> y; } Pt;
const Pt ORIGIN = { x = 3, y = 4 };
const bit<8> SUM = ORIGIN.x + ORIGIN.y;   // folded: 7

header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers_t { h_t h; }
struct meta_t { Point p; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    const Point SHIFTED = ORIGIN;
    apply {
        sm.egress_spec = 1;
        m.p = SHIFTED;
        m.p.x = m.p.x + hdr.h.a;
        hdr.h.a = m.p.x;
        hdr.h.b = SHIFTED.y;        // the constant itself did not change
        hdr.h.c = SUM;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
