// Generic headers/structs (P4-16 1.2.2), a struct-typed header field, and calls whose
// arguments compare with < and > (not type arguments: p4c parses `f(a < b, c > (d))` as
// two comparisons because b is not a type).
#include <core.p4>
#include <v1model.p4>

struct Pair<T> { T lo; T hi; }
header Tagged<T> { bit<8> tag; T val; }

struct headers_t {
    Tagged<bit<16>> a;
    Tagged<Pair<bit<8>>> b;
}
struct meta_t { Pair<bit<16>> p; }

bit<8> both(in bool x, in bool y) { return x && y ? 8w1 : 8w0; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.a); pkt.extract(hdr.b); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        m.p = { lo = hdr.a.val, hi = 16w1000 };
        bit<8> lo = hdr.b.val.lo;
        bit<8> hi = hdr.b.val.hi;
        bit<8> two = 2;
        // (lo < hi) && (hi > two)
        hdr.b.tag = both(lo < hi, hi > (two));
        Pair<bit<8>> swapped = { lo = hi, hi = lo };
        hdr.b.val = swapped;
        hdr.a.tag = both(m.p.lo < m.p.hi, true) + 8w0x10;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
