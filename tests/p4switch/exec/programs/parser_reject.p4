// Explicit `transition reject`. BMv2 has no reject state: p4c's BMv2 back end warns
// "Explicit transition to reject not supported on this target" and ends parsing there as if
// it were accept. So a packet that reaches reject without a failed extract/verify starts
// ingress with parser_error == error.NoError, the headers extracted before stay valid and
// the payload starts after the last of them. A `verify(false, e)` before the reject (what
// p4c itself generates for a select without a match) is what sets parser_error.
#include <core.p4>
#include <v1model.p4>

error { Refused }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header tag_t { bit<8> k; bit<8> err; }
header more_t { bit<16> v; }

struct headers { ethernet_t ethernet; tag_t tag; more_t more; }
struct metadata { bit<8> path; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88B7: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition select(hdr.tag.k) {
            0x00: accept;
            0x01: parse_more;
            0x03: refuse;
            0xFF: reject;          // explicit reject straight from a select case
            default: give_up;
        }
    }
    state parse_more {
        pkt.extract(hdr.more);
        meta.path = 1;             // statements run before the reject are kept
        transition reject;
    }
    state give_up {
        meta.path = 2;
        transition reject;         // explicit reject as the whole transition
    }
    state refuse {
        verify(false, error.Refused);
        transition reject;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        // parser_error cannot be cast to bits: expose it as a code in tag.err / the egress port
        if (sm.parser_error == error.NoError) {
            sm.egress_spec = 1;
            hdr.tag.err = 0xE0;
        } else if (sm.parser_error == error.Refused) {
            sm.egress_spec = 2;
            hdr.tag.err = 0xE2;
        } else {
            sm.egress_spec = 3;
            hdr.tag.err = 0xEE;
        }
        hdr.ethernet.src[7:0] = meta.path;
        if (hdr.more.isValid()) {
            hdr.more.v = hdr.more.v + 1;
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.tag);
        pkt.emit(hdr.more);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
