// Queueing and timestamp metadata as egress sees it, priority chosen in ingress, and a
// digest sent from ingress. Used by test_exec_pipeline.py through the ingress/egress API.
#include <core.p4>
#include <v1model.p4>

header q_t {
    bit<8>  prio;
    bit<32> enq_ts;
    bit<24> enq_depth;   // 19-bit field widened
    bit<32> deq_delta;
    bit<24> deq_depth;
    bit<48> ig_ts;
    bit<48> eg_ts;
    bit<16> eg_port;
    bit<32> pkt_len;
}
struct headers { q_t q; }
struct learn_t { bit<8> prio; bit<9> port; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.q); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 3;
        sm.priority = (bit<3>)hdr.q.prio;
        hdr.q.ig_ts = sm.ingress_global_timestamp;
        digest<learn_t>(1, { hdr.q.prio, sm.ingress_port });
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.q.enq_ts = sm.enq_timestamp;
        hdr.q.enq_depth = (bit<24>)sm.enq_qdepth;
        hdr.q.deq_delta = sm.deq_timedelta;
        hdr.q.deq_depth = (bit<24>)sm.deq_qdepth;
        hdr.q.eg_ts = sm.egress_global_timestamp;
        hdr.q.eg_port = (bit<16>)sm.egress_port;
        hdr.q.pkt_len = sm.packet_length;
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.q); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
