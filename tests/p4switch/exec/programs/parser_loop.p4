// A parser that loops without consuming input: stopped with ParserTimeout after a bounded
// number of transitions; the packet still reaches ingress (v1model), which reports it.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> v; }
struct headers { h_t h; }
struct metadata { bit<8> n; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition spin;
    }
    state spin {
        meta.n = meta.n + 1;
        transition select(hdr.h.v) {
            0: accept;
            default: spin;
        }
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.ParserTimeout) {
            sm.egress_spec = 2;
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
