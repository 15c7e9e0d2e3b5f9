// A parser value_set filled by the control plane selects the parse path.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<16> type; }
header x_t { bit<8> v; }
struct headers { h_t h; x_t x; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) special;
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.type) {
            special: parse_x;
            default: accept;
        }
    }
    state parse_x { pkt.extract(hdr.x); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.x.isValid()) { hdr.x.v = hdr.x.v + 1; }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.x); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
