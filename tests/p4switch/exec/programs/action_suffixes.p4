// Two actions whose names end the same way: STF names the first by its local name.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> v; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action forward(bit<9> port) { sm.egress_spec = port; hdr.h.v = 1; }
    action ipv4_forward(bit<9> port) { sm.egress_spec = port; hdr.h.v = 2; }
    table t { key = { hdr.h.k : exact; } actions = { forward; ipv4_forward; } }
    apply { t.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
