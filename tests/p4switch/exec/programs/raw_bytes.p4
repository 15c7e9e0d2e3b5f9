// Headers keep the bytes they were extracted from until a field is written: every way of
// writing a field must make the deparser emit the new value (op selects one), an untouched
// header must leave as it came, and the IPv4 checksum is verified from the extracted bytes
// and rewritten only when it is wrong or a covered field changed.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header op_t { bit<8> op; bit<8> a; bit<16> b; bit<32> c; }
header elem_t { bit<8> v; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen; bit<16> identification;
    bit<3> flags; bit<13> fragOffset; bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}
struct headers { ethernet_t ethernet; op_t h; op_t h2; elem_t[2] s; ipv4_t ipv4; }
struct metadata { bit<8> unused; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.h);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition select(hdr.h.op) {
            13: set_in_parser;
            default: parse_ipv4;
        }
    }
    state set_in_parser {
        hdr.h.a = 0x77;
        transition parse_ipv4;
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control SetB(inout op_t h) {
    apply { h.b = 0x0707; }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<16>>(1) r;
    SetB() set_b;
    action bump(inout bit<8> x) { x = x + 1; }
    apply {
        sm.egress_spec = 1;
        if (sm.checksum_error == 1) {
            hdr.h.a = 0xEE;
        }
        if (hdr.h.op == 2) {
            hdr.h.c[7:0] = 0xAB;
        } else if (hdr.h.op == 3) {
            bump(hdr.h.a);
        } else if (hdr.h.op == 4) {
            r.write(0, 0x1234);
            r.read(hdr.h.b, 0);
        } else if (hdr.h.op == 5) {
            hash(hdr.h.c, HashAlgorithm.crc32, 32w0, { hdr.h.a }, 32w0xFFFFFFFF);
        } else if (hdr.h.op == 6) {
            hdr.h2 = hdr.h;
            hdr.h.a = 9;
        } else if (hdr.h.op == 7) {
            hdr.h.setInvalid();
            hdr.h.setValid();
        } else if (hdr.h.op == 8) {
            hdr.h = { 8, 1, 2, 3 };
        } else if (hdr.h.op == 9) {
            set_b.apply(hdr.h);
        } else if (hdr.h.op == 10) {
            hdr.s[hdr.h.a[0:0]].v = 0x55;
        } else if (hdr.h.op == 11) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.h.op == 12) {
            hdr.h.b = (bit<16>) sm.egress_port;
        }
    }
}

control CC(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.h);
        pkt.emit(hdr.h2);
        pkt.emit(hdr.s);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
