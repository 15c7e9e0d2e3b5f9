// A table whose actions list is empty (p4c accepts `actions = { }`; only a table with no
// actions property at all is an error): it always runs NoAction and misses.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> r; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    table nothing { key = { hdr.h.k : exact; } actions = { } }
    table nothing_keyless { actions = { } }
    apply {
        sm.egress_spec = 1;
        switch (nothing.apply().action_run) {
            default: { hdr.h.r = 1; }
        }
        if (!nothing_keyless.apply().hit) { hdr.h.r = hdr.h.r + 2; }
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
