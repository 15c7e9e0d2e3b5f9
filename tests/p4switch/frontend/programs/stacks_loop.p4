/* Header stacks and a parser loop: an MPLS label stack parsed until bottom-of-stack, IPv4
 * with options (varbit), lookahead, advance and verify; push/pop in ingress. */
#include <core.p4>
#include <v1model.p4>

#define MAX_LABELS 4

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etherType;
}

header mpls_t {
    bit<20> label;
    bit<3>  tc;
    bit<1>  bos;
    bit<8>  ttl;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  tos;
    bit<16> totalLen;
    bit<16> id;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> csum;
    bit<32> src;
    bit<32> dst;
    varbit<320> options;
}

header pad_t {
    bit<8> kind;
}

struct headers_t {
    ethernet_t          eth;
    mpls_t[MAX_LABELS]  mpls;
    ipv4_t              ipv4;
    pad_t               pad;
}

struct meta_t {
    bit<8>  labels;
    bit<32> last_index;
}

parser StackParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                   inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) {
            0x8847: parse_mpls;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        meta.labels = meta.labels + 1;
        meta.last_index = hdr.mpls.lastIndex;
        transition select(hdr.mpls.last.bos) {
            0: parse_mpls;
            1: after_mpls;
        }
    }
    state after_mpls {
        /* peek at the IP version nibble without consuming it */
        transition select(pkt.lookahead<bit<4>>()) {
            4: parse_ipv4;
            default: skip_one;
        }
    }
    state skip_one {
        pkt.advance(8);
        transition accept;
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4, (bit<32>)(((bit<16>)pkt.lookahead<bit<8>>()[3:0] - 5) * 32));
        verify(hdr.ipv4.version == 4, error.NoMatch);
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control StackIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t std) {
    action pop_label() {
        hdr.mpls.pop_front(1);
    }
    action push_label(bit<20> label) {
        hdr.mpls.push_front(1);
        hdr.mpls[0].setValid();
        hdr.mpls[0].label = label;
        hdr.mpls[0].ttl = 64;
        hdr.mpls[0].bos = hdr.mpls[1].isValid() ? 1w0 : 1w1;
    }
    table mpls_tbl {
        key = {
            hdr.mpls[0].label: exact;
            hdr.mpls[0].isValid(): exact @name("mpls_valid");
        }
        actions = { pop_label; push_label; NoAction; }
        default_action = NoAction();
    }
    apply {
        mpls_tbl.apply();
        std.egress_spec = 1;
        if (hdr.mpls.size == MAX_LABELS && hdr.ipv4.isValid()) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        }
    }
}

control NoEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t std) {
    apply { }
}

control NoCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control StackDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.mpls);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(StackParser(), NoVerify(), StackIngress(), NoEgress(), NoCompute(), StackDeparser()) main;
