// A sub-parser with scalar out and inout parameters (p4c's subparser-with-header-stack-bmv2
// passes one): the values it sets come back to the calling parser.
#include <core.p4>
#include <v1model.p4>

header t_t { bit<8> kind; bit<8> len; }
header x_t { bit<8> v; }
struct headers_t { t_t t; x_t x; }
struct meta_t { bit<8> seen; }

parser Sub(packet_in pkt, inout headers_t hdr, out bit<8> next, inout bit<8> count) {
    state start {
        pkt.extract(hdr.t);
        next = hdr.t.kind;
        count = count + hdr.t.len;
        transition select(hdr.t.len) { 0: reject_it; default: accept; }
    }
    state reject_it { transition accept; }
}
parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    Sub() sub;
    bit<8> next;
    state start {
        m.seen = 10;
        sub.apply(pkt, hdr, next, m.seen);
        transition select(next) { 1: parse_x; default: accept; }
    }
    state parse_x { pkt.extract(hdr.x); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.x.isValid()) { hdr.x.v = m.seen; }
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
