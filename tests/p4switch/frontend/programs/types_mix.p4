/* Language features: serializable enums, typedef and type, tuples, struct initializers,
 * header unions, functions, casts, slices, concatenation, saturating arithmetic, shifts,
 * ternaries, {#}, named arguments, constant folding and every int literal form. */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> mac_t;
type bit<32> flow_id_t;

enum bit<16> EtherType {
    IPV4 = 0x0800,
    ARP  = 0x0806,
    VLAN = 0x8100
}

enum Verdict { PASS, FAIL }

const bit<8>  WIDTH_A   = 8w0b1010_1010;
const int<8>  NEG       = -8s1;
const bit<16> FOLDED    = (16w0x00ff ++ 8w1)[15:0] + (bit<16>)(3 * 4 - 2);
const int     BIG       = 1 << 70;
const bit<8>  SAT       = 8w250 |+| 8w10;
const bool    FLAG      = FOLDED > 0 && !(WIDTH_A == 0);
const bit<32> OCTAL     = 0o17;
const bit<4>  FROM_BIG  = (bit<4>)(BIG >> 67);

header ethernet_t {
    mac_t     dst;
    mac_t     src;
    EtherType etherType;
}

header arp_t {
    bit<16> htype;
    bit<16> ptype;
}

header ipv4_t {
    bit<8>  ver_ihl;
    bit<8>  tos;
    bit<16> len;
}

header_union l3_t {
    arp_t  arp;
    ipv4_t ipv4;
}

struct pair_t {
    bit<8>  a;
    bit<16> b;
}

struct headers_t {
    ethernet_t eth;
    l3_t       l3;
}

struct meta_t {
    pair_t    pair;
    flow_id_t flow;
    tuple<bit<8>, bool> tup;
    Verdict   verdict;
    bit<8>    sat;
    int<8>    signed_val;
}

bit<8> max8(in bit<8> x, in bit<8> y) {
    return x > y ? x : y;
}

void swap_macs(inout ethernet_t e) {
    mac_t tmp = e.dst;
    e.dst = e.src;
    e.src = tmp;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) {
            EtherType.IPV4: parse_ipv4;
            EtherType.ARP: parse_arp;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.l3.ipv4);
        transition select(hdr.l3.ipv4.ver_ihl[7:4], hdr.l3.ipv4.tos) {
            (4, 0 .. 63): accept;
            (4, _): accept;
            default: reject;
        }
    }
    state parse_arp {
        pkt.extract(hdr.l3.arp);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t std) {
    action set_pair(bit<8> a, bit<16> b) {
        meta.pair = { a = a, b = b };
    }
    table t {
        key = { hdr.eth.etherType: exact; }
        actions = { set_pair; NoAction; }
        const entries = {
            EtherType.IPV4: set_pair(1, 2);
            EtherType.ARP: set_pair(a = 3, b = 4);
        }
        default_action = set_pair(0, FOLDED);
    }
    apply {
        t.apply();
        meta.pair = { 8w1, 16w2 };
        meta.tup = { 7, true };
        meta.flow = (flow_id_t)32w9;
        meta.sat = meta.pair.a |-| 200;
        meta.signed_val = NEG |+| -128;
        meta.verdict = FLAG ? Verdict.PASS : Verdict.FAIL;
        bit<16> ety = (bit<16>)hdr.eth.etherType;
        bit<64> wide = ety ++ 48w0 >> 48;
        bit<8> m = max8(y = meta.pair.a, x = WIDTH_A);
        m = m << 2 | 8w1 >> 1;
        std.egress_spec = (bit<9>)(m & 0x7f) + (bit<9>)FROM_BIG;
        if (hdr.eth.etherType == EtherType.VLAN || ety == 0x86dd) {
            hdr.l3.ipv4 = {#};
        }
        if (hdr.l3.isValid()) {
            swap_macs(hdr.eth);
        }
        bit<32> big = 0xFFFF_FFFF;
        big = big + 1;
        meta.pair.b[3:0] = 0xF;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t std) {
    apply { }
}

control C(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch<headers_t, meta_t>(P(), V(), I(), E(), C(), D()) main;
