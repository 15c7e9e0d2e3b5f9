// Language constructs in controls: functions with out/inout parameters and return values,
// sub-control instances, actions called directly with inout arguments and an early return,
// switch on values and enums, serializable enums, struct and header assignment (copies),
// setValid/setInvalid, push_front, bool values, const declarations and type/typedef, and a
// control with a constructor parameter instantiated twice (each instance its own table).
#include <core.p4>
#include <v1model.p4>

typedef bit<8> byte_t;
type bit<8> Tag_t;
const byte_t MAGIC = 0x5A;

enum bit<8> Kind { A = 1, B = 2, C = 3 }
enum Color { RED, GREEN }

header h_t { byte_t k; byte_t x; byte_t y; byte_t z; }
header tag_t { bit<8> t; }
struct pair_t { byte_t lo; byte_t hi; }
struct headers { h_t h; h_t copy; tag_t[2] tags; }
struct metadata { pair_t p; bool flag; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

bit<8> add_sat(in bit<8> a, in bit<8> b, out bool clipped) {
    clipped = (bit<9>)a + (bit<9>)b > 255;
    return a |+| b;
}

// an out header parameter starts invalid: the caller's header is invalid after the call
bool invalidate(out h_t x) {
    return true;
}

void swap(inout pair_t p) {
    byte_t t = p.lo;
    p.lo = p.hi;
    p.hi = t;
}

control Sub(inout h_t h, in byte_t delta) {
    action bump(inout byte_t v) { v = v + delta; }
    apply {
        bump(h.z);
        if (h.k == 9) {
            return;
        }
        bump(h.z);
    }
}

control AddK(inout h_t h)(bit<8> k) {
    action add() { h.y = h.y + k; }
    table t { actions = { add; } default_action = add(); }
    apply { t.apply(); }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Sub() sub;
    AddK(8w0x10) add16;
    AddK(8w0x01) add1;
    action early(inout byte_t v, byte_t w) {
        v = w;
        if (w == 1) {
            return;
        }
        v = v + 0x10;
    }
    apply {
        sm.egress_spec = 1;
        bool clipped;
        hdr.h.x = add_sat(hdr.h.x, hdr.h.y, clipped);
        meta.flag = clipped;
        meta.p = { hdr.h.x, hdr.h.y };
        swap(meta.p);
        hdr.h.y = meta.p.lo;
        Kind kind = (Kind)hdr.h.k;
        switch (kind) {
            Kind.A: { hdr.h.z = 0xA0; }
            Kind.B:
            Kind.C: { hdr.h.z = 0xBC; }
            default: { hdr.h.z = 0; }
        }
        Color c = meta.flag ? Color.RED : Color.GREEN;
        if (c == Color.RED) {
            hdr.h.z = hdr.h.z | 1;
        }
        sub.apply(hdr.h, 2);
        if (hdr.h.k == 6) {
            add16.apply(hdr.h);
            add1.apply(hdr.h);
        }
        switch (hdr.h.k) {
            4: { early(hdr.h.x, 1); }
            5: { early(hdr.h.x, 2); }
        }
        hdr.copy = hdr.h;
        hdr.copy.k = MAGIC;      // the copy is a new header: hdr.h keeps its k
        Tag_t tg = (Tag_t)hdr.h.k;
        hdr.tags.push_front(1);
        hdr.tags[0].setValid();
        hdr.tags[0].t = (bit<8>)tg;
        hdr.tags.push_front(1);
        hdr.tags[0].setValid();
        hdr.tags[0].t = 0xEE;
        if (hdr.h.k == 3) {
            bool done = invalidate(hdr.copy);
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.h); pkt.emit(hdr.copy); pkt.emit(hdr.tags); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
