// Entry priorities as p4c and BMv2 order them: @priority(N) on const entries is BMv2's
// priority (smaller wins, unannotated entries count 1, 2, ... by position); `priority = N`
// in (non-const) entries: larger wins, entries without one continue downwards; STF `add`
// priorities: larger wins.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> tag; bit<16> k; bit<8> res; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.res = v; }
    table annotated {
        key = { hdr.h.k : ternary; }
        actions = { set; }
        const entries = {
            0x0011 &&& 0x00ff : set(1) @priority(3);
            0x1111            : set(2);              // position 2
            0x1011 &&& 0xf0ff : set(3) @priority(1); // wins over both
        }
    }
    table explicit {
        key = { hdr.h.k : ternary; }
        actions = { set; }
        entries = {
            priority = 10 : 0x0022 &&& 0x00ff : set(4);
            0x2222 &&& 0xffff : set(5);               // 9
            priority = 20 : 0x2022 &&& 0xf0ff : set(6);
        }
    }
    table runtime {
        key = { hdr.h.k : ternary; }
        actions = { set; }
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.tag == 1) { annotated.apply(); }
        else if (hdr.h.tag == 2) { explicit.apply(); }
        else { runtime.apply(); }
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
