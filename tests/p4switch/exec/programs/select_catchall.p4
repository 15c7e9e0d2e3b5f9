// Catch-all cases: a select whose default case is not the last one (the cases after it
// never match), a select with only a default, and switch statements with a lone default
// case and with a default after other labels.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> res; }
struct headers { h_t h; }
struct metadata { bit<8> path; }

parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        transition select(hdr.h.a) {
            1: one;
            _: other;
            2: one;      // unreachable: the catch-all above takes 2
        }
    }
    state one { meta.path = 1; transition finish; }
    state other { meta.path = 2; transition finish; }
    state finish { transition select(hdr.h.b) { default: accept; } }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action nop() { }
    table t { key = { hdr.h.b : exact; } actions = { nop; } default_action = nop(); }
    apply {
        sm.egress_spec = 1;
        switch (t.apply().action_run) {
            default: { hdr.h.res = meta.path; }
        }
        switch (hdr.h.b) {
            7: { hdr.h.res = hdr.h.res + 0x70; }
            default: { hdr.h.res = hdr.h.res + 0x10; }
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
