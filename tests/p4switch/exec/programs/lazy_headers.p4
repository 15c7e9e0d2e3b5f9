// Every way a header that is still invalid can be written first (extract, a sub-parser,
// setValid, a field store, a slice, a header copy, a struct initializer, an action's, a
// function's and an inlined sub-control's inout parameter, copy-in/copy-out, stack
// push/constant/run-time index, register read, hash, random, a struct of headers in
// metadata and in a local, a union member, egress, the checksum update; a store after a
// branch that wrote the header, a store after a stack shift), one op each. Written for
// lazy headers (a shared read-only invalid instance per header type until the first write,
// measured in README "Speed", third round, and not adopted): a write path that a lazy
// scheme missed would fail here, and nothing written may leak into the next packet.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header op_t { bit<8> op; bit<8> idx; bit<16> res; }
header a_t { bit<8> x; bit<8> y; }
header e_t { bit<8> v; }
header k_t { bit<16> ck; }
header_union u_t { a_t a; e_t e; }
struct headers { ethernet_t ethernet; op_t op; a_t a; a_t b; a_t c; e_t[3] s; u_t u; k_t k; }
struct metadata { a_t m; }

parser SubP(packet_in pkt, inout a_t h) {
    state start {
        pkt.extract(h);
        transition accept;
    }
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    SubP() sub;
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.op);
        transition select(hdr.op.op) {
            1: parse_a;
            2: parse_s;
            26: parse_sub;
            30: assign_in_parser;
            default: accept;
        }
    }
    state parse_a {
        pkt.extract(hdr.a);
        transition accept;
    }
    state parse_s {
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
    state parse_sub {
        sub.apply(pkt, hdr.a);
        transition accept;
    }
    state assign_in_parser {
        hdr.b.setValid();
        hdr.b.x = 30;
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) {
    apply { }
}

control SetA(inout a_t h) {
    apply {
        h.setValid();
        h.y = 8;
    }
}

void set_by_function(inout a_t h) {
    h.setValid();
    h.x = 9;
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<8>>(1) r;
    SetA() set_a;
    action fill(inout a_t h, bit<8> v) {
        h.setValid();
        h.x = v;
    }
    action both(inout a_t h) {
        h.setValid();
        h.x = 19;
        hdr.b.setValid();
        hdr.b.x = 1;
    }
    apply {
        sm.egress_spec = 1;
        headers local;
        if (hdr.op.op == 1) {
            hdr.a.y = hdr.a.y + 1;
        } else if (hdr.op.op == 2) {
            hdr.s[1].v = hdr.s[1].v + 1;
        } else if (hdr.op.op == 3) {
            hdr.a.setValid();
            hdr.a.x = 3;
        } else if (hdr.op.op == 4) {
            hdr.a.x = 0x44;
            hdr.op.res = (bit<16>)hdr.a.x;
        } else if (hdr.op.op == 5) {
            hdr.b = hdr.c;
            hdr.b.setValid();
            hdr.b.y = 5;
        } else if (hdr.op.op == 6) {
            hdr.a = { 6, 7 };
        } else if (hdr.op.op == 7) {
            fill(hdr.a, 7);
        } else if (hdr.op.op == 8) {
            set_a.apply(hdr.a);
        } else if (hdr.op.op == 9) {
            set_by_function(hdr.a);
        } else if (hdr.op.op == 10) {
            hdr.s.push_front(1);
            hdr.s[0].setValid();
            hdr.s[0].v = 10;
        } else if (hdr.op.op == 11) {
            hdr.s[2].setValid();
            hdr.s[2].v = 11;
        } else if (hdr.op.op == 12) {
            hdr.s[hdr.op.idx[0:0]].setValid();
            hdr.s[hdr.op.idx[0:0]].v = 12;
        } else if (hdr.op.op == 13) {
            r.write(0, 0x13);
            r.read(hdr.a.x, 0);
            hdr.op.res = (bit<16>)hdr.a.x;
        } else if (hdr.op.op == 14) {
            hash(hdr.a.y, HashAlgorithm.identity, 8w0, { hdr.op.idx }, 16w256);
            hdr.op.res = (bit<16>)hdr.a.y;
        } else if (hdr.op.op == 15) {
            hdr.a.x[3:0] = 4w0xF;  // the first write (then all bits: BMv2 keeps old values)
            hdr.a.x[7:4] = 4w0x1;
            hdr.op.res = (bit<16>)hdr.a.x;
        } else if (hdr.op.op == 16) {
            hdr.a.setInvalid();
            hdr.s[1].setInvalid();
            hdr.op.res = 16;
        } else if (hdr.op.op == 17) {
            meta.m.setValid();
            meta.m.x = 17;
            hdr.a = meta.m;
        } else if (hdr.op.op == 18) {
            local.a.setValid();
            local.a.y = 18;
            hdr.b = local.a;
        } else if (hdr.op.op == 19) {
            both(hdr.a);
        } else if (hdr.op.op == 21) {
            hdr.u.a.setValid();
            hdr.u.a.x = 21;
        } else if (hdr.op.op == 23) {
            // made its own in a branch not taken: the store after the branch checks again
            if (hdr.op.idx == 1) {
                hdr.a.x = 1;
            }
            hdr.a.y = 23;
            hdr.op.res = (bit<16>)hdr.a.y;
        } else if (hdr.op.op == 25) {
            // a shift brings an unwritten element to index 1 again
            hdr.s[1].setValid();
            hdr.s[1].v = 1;
            hdr.s.push_front(1);
            hdr.s[1].v = 25;
            hdr.op.res = (bit<16>)hdr.s[1].v;
        } else if (hdr.op.op == 24) {
            random(hdr.a.x, 8w24, 8w24);
            hdr.op.res = (bit<16>)hdr.a.x;
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.op.op == 22) {
            hdr.c.setValid();
            hdr.c.x = 22;
        }
    }
}

control CC(inout headers hdr, inout metadata meta) {
    apply {
        // op 20: the checksum of an invalid header is stored (the header stays invalid)
        update_checksum(hdr.op.op == 20, { hdr.op.idx }, hdr.k.ck, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.op);
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
        pkt.emit(hdr.c);
        pkt.emit(hdr.s);
        pkt.emit(hdr.u);
        pkt.emit(hdr.k);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
