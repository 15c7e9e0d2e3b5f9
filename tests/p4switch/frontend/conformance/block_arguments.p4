// Controls handed to other controls as constructor arguments, and a control type applied
// directly (`Scale.apply(...)`, which p4c turns into an instance named after the type).
// One instance passed to two controls is one instance: both calls count in the same counter.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers_t { h_t h; }
struct meta_t { }

control Step(inout bit<8> x);

control Bump(inout bit<8> x) {
    counter(256, CounterType.packets) hits;
    apply { x = x + 1; hits.count((bit<32>)x); }
}
control Twice(inout bit<8> x)(Step s) {
    apply { x = x << 1; s.apply(x); }
}
control Thrice(inout bit<8> x)(Step s) {
    apply { x = x * 3; s.apply(x); }
}
control Scale(inout headers_t hdr) {
    Bump() shared;
    Twice(shared) two;
    Thrice(shared) three;
    apply { two.apply(hdr.h.a); three.apply(hdr.h.b); }
}
parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; Scale.apply(hdr); Bump.apply(hdr.h.c); }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
