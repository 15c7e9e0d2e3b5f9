// A top-level action with a directional parameter, bound in a table's actions list and as
// its default action (p4c accepts this; the argument is fixed by the table, the rest come
// from the control plane).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> v; }
struct headers_t { h_t h; }
struct meta_t { bit<8> hits; }

action drop_it(inout standard_metadata_t smeta) { mark_to_drop(smeta); }
action to_port(inout standard_metadata_t smeta, inout headers_t hh, bit<9> port, bit<8> v) {
    smeta.egress_spec = port;
    hh.h.v = v;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    table t {
        key = { hdr.h.k : exact; }
        actions = { drop_it(sm); to_port(sm, hdr); }
        default_action = drop_it(sm);
    }
    apply { t.apply(); }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
