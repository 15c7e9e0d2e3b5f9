/* One exact table on a 32-bit header field with a constant default (drop): a packet leaves
 * only if a table entry matched it, so generated entries are seen to be hit. Before it, a
 * ternary + range table with priorities that rewrites the TOS byte (entries overlap, so the
 * priority order is visible in the output). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
struct headers_t { ethernet_t eth; ipv4_t ipv4; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) { 0x0800: ipv4; default: accept; }
    }
    state ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    action fwd(bit<9> port, bit<8> ttl) {
        sm.egress_spec = port;
        hdr.ipv4.ttl = ttl;
    }
    action mark(bit<8> tos) { hdr.ipv4.tos = tos; }
    table acl {
        key = { hdr.ipv4.src : ternary; hdr.ipv4.proto : range; }
        actions = { mark; NoAction; }
        default_action = NoAction();
    }
    table route {
        key = { hdr.ipv4.dst : exact; }
        actions = { fwd; drop; }
        const default_action = drop();
    }
    apply {
        acl.apply();
        route.apply();
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), NoVerify(), I(), E(), NoCompute(), D()) main;
