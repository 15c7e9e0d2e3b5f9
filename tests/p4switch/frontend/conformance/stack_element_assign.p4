// A whole header assigned to a header-stack element chosen at run time: the element takes
// the value; an index past the end changes nothing (the spec leaves it undefined).
#include <core.p4>
#include <v1model.p4>

header i_t { bit<8> idx; }
header e_t { bit<8> v; }
struct headers_t { i_t i; e_t[2] s; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        e_t fresh = { 0x5a };
        hdr.s[hdr.i.idx] = fresh;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
