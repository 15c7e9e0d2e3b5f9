/* Every kind of select the path walker steers: the ingress port, a masked value, a range,
 * lookahead, a header-stack element (.last) with a stack overflow, a tuple with a don't-care,
 * a slice, a select without default (NoMatch), and a value computed from a field under a
 * verify() condition, counted down in a loop. Each state records its number in
 * meta.path; ingress sends the packet to that port (+64 after a parser error: NoMatch,
 * StackOutOfBounds; an explicit reject leaves parser_error alone), so the port a frame
 * leaves on says where the parser ended. */
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> kind; }
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header vlan_t { bit<3> pcp; bit<1> dei; bit<12> vid; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
header l4_t { bit<16> sport; bit<16> dport; }
header hop_t { bit<8> v; }

struct headers_t { tag_t tag; ethernet_t eth; vlan_t[2] vlan; ipv4_t ipv4; l4_t l4; hop_t[4] hop; }
struct meta_t { bit<9> path; bit<8> hops; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) { 7: tagged; default: eth; }
    }
    state tagged {
        meta.path = 1;
        pkt.extract(hdr.tag);
        transition select(hdr.tag.kind) { 0x00 &&& 0x80: eth; default: bad_tag; }
    }
    state eth {
        meta.path = 2;
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            0x8100: vlan;
            0x0800: ipv4;
            0x9000 .. 0x90ff: peek;
            default: accept;
        }
    }
    state vlan {
        meta.path = 3;
        pkt.extract(hdr.vlan.next);
        transition select(hdr.vlan.last.ether_type) { 0x8100: vlan; 0x0800: ipv4; 0x86dd: accept; }
    }
    state peek {
        meta.path = 4;
        transition select(pkt.lookahead<bit<8>>()) { 0x45: ipv4; default: accept; }
    }
    state ipv4 {
        meta.path = 5;
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.proto) {
            (5, 6): l4;
            (5, 17): l4;
            (_, 47): frag;
            default: accept;
        }
    }
    state frag {
        meta.path = 6;
        transition select(hdr.ipv4.frag[12:8]) { 0: accept; default: bad_frag; }
    }
    state bad_tag {
        meta.path = 8;
        transition reject;
    }
    state bad_frag {
        meta.path = 9;
        transition reject;
    }
    state l4 {
        meta.path = 7;
        pkt.extract(hdr.l4);
        /* a hop count computed from a field, checked by verify, counted down in a loop */
        verify(hdr.l4.dport[1:0] == 0 && hdr.l4.dport < 16, error.HeaderTooShort);
        meta.hops = (bit<8>)(hdr.l4.dport >> 2);
        transition select(meta.hops) { 0: accept; default: hop; }
    }
    state hop {
        meta.path = 10;
        pkt.extract(hdr.hop.next);
        meta.hops = meta.hops - 1;
        transition select(meta.hops) { 0: accept; default: hop; }
    }
}

control NoVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error != error.NoError) {
            sm.egress_spec = meta.path + 64;
        } else {
            sm.egress_spec = meta.path;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(P(), NoVerify(), I(), E(), NoCompute(), D()) main;
