// v1model hash() over a field list with a field of a header that may be invalid (left out
// of the packed data when it is, as BMv2 does).
#include <core.p4>
#include <v1model.p4>
header flag_t { bit<8> has_a; }
header a_t { bit<16> x; }
header b_t { bit<8> y; bit<16> h; }
struct headers { flag_t f; a_t a; b_t b; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.f);
        transition select(hdr.f.has_a) { 1: parse_a; default: parse_b; }
    }
    state parse_a { pkt.extract(hdr.a); transition parse_b; }
    state parse_b { pkt.extract(hdr.b); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hash(hdr.b.h, HashAlgorithm.crc16, 16w0, { hdr.b.y, hdr.a.x }, 32w65536);
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.f); pkt.emit(hdr.a); pkt.emit(hdr.b); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
