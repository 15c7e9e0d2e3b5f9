// Every match kind with priorities, const entries, default actions, hit/miss and
// action_run switches. Input header: a, b, c; outputs written to r1, r2, r3.
#include <core.p4>
#include <v1model.p4>

header t_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<8>  r1;
    bit<8>  r2;
    bit<8>  r3;
    bit<8>  r4;
}

struct headers { t_t t; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.t);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set1(bit<8> v) { hdr.t.r1 = v; }
    action set2(bit<8> v) { hdr.t.r2 = v; }
    action set3(bit<8> v) { hdr.t.r3 = v; }
    action miss1() { hdr.t.r1 = 0xEE; }
    action nop() { }
    action sa() { }
    action sb() { }

    // ternary: larger priority wins
    table tern {
        key = { hdr.t.a: ternary; }
        actions = { set1; miss1; }
        default_action = miss1();
    }
    // range + exact; priorities from the control plane
    table rng {
        key = { hdr.t.c: range; hdr.t.b: exact; }
        actions = { set2; nop; }
        default_action = set2(0xDD);
    }
    // optional + const entries: the first listed entry wins
    table opt {
        key = { hdr.t.a: optional; hdr.t.b: ternary; }
        actions = { set3; nop; }
        const entries = {
            (0x01, 0x10 &&& 0xF0) : set3(0x31);
            (_, 0x12)             : set3(0x32);
            (_, _)                : set3(0x33);
        }
    }
    // const default action; exact key; used for action_run
    table sel {
        key = { hdr.t.b: exact; }
        actions = { sa; sb; nop; }
        const default_action = nop();
    }
    table chk {
        key = { hdr.t.b: exact; }
        actions = { nop; }
        default_action = nop();
    }
    apply {
        if (tern.apply().hit) {
            hdr.t.r4 = 1;
        } else {
            hdr.t.r4 = 2;
        }
        rng.apply();
        opt.apply();
        switch (sel.apply().action_run) {
            sa: { hdr.t.r4 = hdr.t.r4 | 0x10; }
            sb:
            nop: { hdr.t.r4 = hdr.t.r4 | 0x20; }
        }
        if (chk.apply().miss) {
            hdr.t.r4 = hdr.t.r4 | 0x40;
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.t); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
