// v1model hash() with every algorithm over the same data {a, b}, base + modulo forms,
// random() with lo == hi, and a UDP checksum over a pseudo header plus payload
// (update_checksum_with_payload).
#include <core.p4>
#include <v1model.p4>

header in_t { bit<16> a; bit<8> b; }
header out_t {
    bit<16> crc16;
    bit<32> crc32;
    bit<16> crc16c;
    bit<32> crc32c;
    bit<16> csum;
    bit<32> ident;
    bit<16> xor;
    bit<16> based;
    bit<16> zero_max;
    bit<8>  rnd;
}
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }

struct headers { in_t i; out_t o; udp_t udp; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.i);
        pkt.extract(hdr.o);
        transition select(hdr.i.b) {
            0x11: parse_udp;
            default: accept;
        }
    }
    state parse_udp { pkt.extract(hdr.udp); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hash(hdr.o.crc16, HashAlgorithm.crc16, 16w0, { hdr.i.a, hdr.i.b }, 32w65536);
        hash(hdr.o.crc32, HashAlgorithm.crc32, 32w0, { hdr.i.a, hdr.i.b }, 64w4294967296);
        hash(hdr.o.crc16c, HashAlgorithm.crc16_custom, 16w0, { hdr.i.a, hdr.i.b }, 32w65536);
        hash(hdr.o.crc32c, HashAlgorithm.crc32_custom, 32w0, { hdr.i.a, hdr.i.b }, 64w4294967296);
        hash(hdr.o.csum, HashAlgorithm.csum16, 16w0, { hdr.i.a, hdr.i.b }, 32w65536);
        hash(hdr.o.ident, HashAlgorithm.identity, 32w0, { hdr.i.a, hdr.i.b }, 64w4294967296);
        hash(hdr.o.xor, HashAlgorithm.xor16, 16w0, { hdr.i.a, hdr.i.b }, 32w65536);
        hash(hdr.o.based, HashAlgorithm.crc16, 16w100, { hdr.i.a, hdr.i.b }, 16w10);
        hash(hdr.o.zero_max, HashAlgorithm.crc16, 16w7, { hdr.i.a, hdr.i.b }, 16w0);
        random(hdr.o.rnd, 8w42, 8w42);
        sm.egress_spec = 1;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }

control CC(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum_with_payload(hdr.udp.isValid(),
            { hdr.i.a, hdr.udp.sport, hdr.udp.dport, hdr.udp.len },
            hdr.udp.csum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.i); pkt.emit(hdr.o); pkt.emit(hdr.udp); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
