// Parser features: select on values, masks, ranges, tuples and default; header stacks
// (next, last, lastIndex) and pop_front; varbit extraction sized by lookahead; header
// unions; advance; verify; parser errors that reach ingress in parser_error.
#include <core.p4>
#include <v1model.p4>

error { BadUnion }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header vh_t { bit<8> len; varbit<64> data; }
header ua_t { bit<8> tag; bit<8> v; }
header ub_t { bit<8> tag; bit<24> v; }
header_union u_t { ua_t a; ub_t b; }
header sel_t { bit<8> k; bit<8> m; }
header tail_t { bit<16> v; }

struct headers {
    ethernet_t ethernet;
    mpls_t[3]  mpls;
    vh_t       vh;
    u_t        u;
    sel_t      sel;
    tail_t     tail;
}
struct metadata { bit<8> depth; bit<8> path; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x8847: parse_mpls;
            0x88B4: parse_vh;
            0x88B5: parse_union;
            0x88B6: parse_advance;
            0x9000: parse_sel;
            default: accept;
        }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        transition select(hdr.mpls.last.bos) {
            1: mpls_done;
            default: parse_mpls;
        }
    }
    state mpls_done {
        meta.depth = (bit<8>)hdr.mpls.lastIndex;
        meta.path = 1;
        transition accept;
    }
    state parse_vh {
        pkt.extract(hdr.vh, (bit<32>)pkt.lookahead<bit<8>>() * 8);
        meta.path = 2;
        transition accept;
    }
    state parse_union {
        transition select(pkt.lookahead<bit<8>>()) {
            1: parse_ua;
            2: parse_ub;
            default: bad_union;
        }
    }
    state parse_ua { pkt.extract(hdr.u.a); meta.path = 3; transition accept; }
    state parse_ub { pkt.extract(hdr.u.b); meta.path = 4; transition accept; }
    state bad_union {
        verify(false, error.BadUnion);
        transition accept;
    }
    state parse_advance {
        pkt.advance(16);
        pkt.extract(hdr.tail);
        meta.path = 5;
        transition accept;
    }
    state parse_sel {
        pkt.extract(hdr.sel);
        transition select(hdr.sel.k, hdr.sel.m) {
            (0x10 &&& 0xF0, _): sel_a;
            (0x20 .. 0x2F, 0x01): sel_b;
            (_, 0x02): sel_c;
            default: accept;
        }
    }
    state sel_a { meta.path = 0xA; transition accept; }
    state sel_b { meta.path = 0xB; transition accept; }
    state sel_c { meta.path = 0xC; transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.PacketTooShort) {
            sm.egress_spec = 4;
            hdr.ethernet.etherType = 0xEEE1;
        } else if (sm.parser_error == error.StackOutOfBounds) {
            sm.egress_spec = 5;
            hdr.ethernet.etherType = 0xEEE2;
        } else if (sm.parser_error == error.BadUnion) {
            sm.egress_spec = 3;
            hdr.ethernet.etherType = 0xEEE3;
        }
        hdr.ethernet.src[7:0] = meta.depth;
        hdr.ethernet.src[15:8] = meta.path;
        if (hdr.u.isValid()) {
            hdr.ethernet.src[23:16] = 0x55;
        }
        if (sm.parser_error == error.NoError && hdr.mpls[1].isValid()) {
            hdr.mpls.pop_front(1);
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.mpls);
        pkt.emit(hdr.vh);
        pkt.emit(hdr.u);
        pkt.emit(hdr.sel);
        pkt.emit(hdr.tail);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
