// for loops in actions and apply blocks: C-style (init/update lists, break, continue),
// for-in over an inclusive range, a list and a header stack (element copies), and return
// from inside a loop in an action.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  op;
    bit<8>  n;
    bit<16> r;
}
header e_t { bit<8> v; }
struct headers_t { h_t h; e_t[3] st; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.op) { 5: stack; default: accept; }
    }
    state stack { pkt.extract(hdr.st.next); pkt.extract(hdr.st.next); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    // sum of 1..n, skipping multiples of 3, stopping once the sum passes 40
    action sum_skip() {
        hdr.h.r = 0;
        for (bit<8> i = 1, bit<8> unused = 0; i <= hdr.h.n; i = i + 1, unused = unused + 1) {
            if (i % 3 == 0) { continue; }
            hdr.h.r = hdr.h.r + (bit<16>)i;
            if (hdr.h.r > 40) { break; }
        }
    }
    // index of the first i*i >= n, returned from inside two nested loops
    action first_square() {
        hdr.h.r = 0xffff;
        for (bit<8> i = 0; i < 16; i = i + 1) {
            for (bit<8> j = 0; j < 1; j = j + 1) {
                if (i * i >= hdr.h.n) {
                    hdr.h.r = (bit<16>)i;
                    return;
                }
            }
        }
        hdr.h.r = 0xeeee;
    }
    action range_sum() {
        hdr.h.r = 0;
        for (bit<16> v in 2 .. 5) { hdr.h.r = hdr.h.r + v; }       // 2+3+4+5
        for (bit<16> w in {100, 200}) { hdr.h.r = hdr.h.r + w; }   // + 300
    }
    table t {
        key = { hdr.h.op : exact; }
        actions = { sum_skip; first_square; range_sum; }
        const entries = { 1 : sum_skip(); 2 : first_square(); 3 : range_sum(); }
    }
    apply {
        sm.egress_spec = 2;
        t.apply();
        if (hdr.h.op == 4) {
            // a loop in the apply block with no condition, left by break
            bit<8> k = 0;
            for ( ; ; k = k + 2) { if (k >= hdr.h.n) { break; } }
            hdr.h.r = (bit<16>)k;
        }
        if (hdr.h.op == 5) {
            // sum of the valid elements (invalid ones read as 0 here: never written)
            hdr.h.r = 0;
            for (e_t e in hdr.st) {
                if (e.isValid()) { hdr.h.r = hdr.h.r + (bit<16>)e.v; }
                e.v = 0;   // a copy: the stack keeps its values
            }
        }
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.st); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
