// Expression operators: wrap-around and saturating arithmetic, signed values, shifts,
// slices (read and write), concatenation, casts, comparisons and the ?: operator.
#include <core.p4>
#include <v1model.p4>

header in_t {
    bit<8>  a;
    bit<8>  b;
    int<8>  s;
    int<8>  t;
    bit<16> x;
}

header out_t {
    bit<8>  add;
    bit<8>  sub;
    bit<8>  mul;
    bit<8>  sadd;
    bit<8>  ssub;
    int<8>  sadd_s;
    int<8>  ssub_s;
    bit<8>  shl;
    bit<8>  shr;
    int<8>  sshr;
    bit<4>  hi;
    bit<4>  lo;
    bit<16> cat;
    bit<16> widen_s;
    bit<8>  neg;
    bit<8>  inv;
    bit<8>  flags;
    bit<8>  tern;
    bit<8>  vshl;
}

struct headers { in_t i; out_t o; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.i);
        pkt.extract(hdr.o);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        bit<8> a = hdr.i.a;
        bit<8> b = hdr.i.b;
        hdr.o.add = a + b;
        hdr.o.sub = a - b;
        hdr.o.mul = a * b;
        hdr.o.sadd = a |+| b;
        hdr.o.ssub = a |-| b;
        hdr.o.sadd_s = hdr.i.s |+| hdr.i.t;
        hdr.o.ssub_s = hdr.i.s |-| hdr.i.t;
        hdr.o.shl = a << 3;
        hdr.o.shr = a >> 2;
        hdr.o.sshr = hdr.i.s >> 2;
        hdr.o.hi = hdr.i.x[15:12];
        hdr.o.lo = hdr.i.x[3:0];
        hdr.o.cat = a ++ b;
        hdr.o.widen_s = (bit<16>)(int<16>)hdr.i.s;
        hdr.o.neg = -a;
        hdr.o.inv = ~a;
        bit<8> f = 0;
        if (hdr.i.s < hdr.i.t) { f = f | 1; }
        if (a < b) { f = f | 2; }
        if (a == b) { f = f | 4; }
        if (hdr.i.s > hdr.i.t) { f = f | 8; }
        f[7:4] = 0xA;
        hdr.o.flags = f;
        hdr.o.tern = (a > b) ? a : b;
        hdr.o.vshl = a << hdr.i.x[1:0];
        sm.egress_spec = 2;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.o); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
