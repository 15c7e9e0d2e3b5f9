// Compound assignments (P4-16 1.2.5): `a op= b` means `a = a op b`, including the
// saturating forms and as for-loop updates.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> sat; bit<8> sh; bit<8> acc; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.sat |+|= hdr.h.a;     // saturates at 0xff
        hdr.h.sh <<= 2;
        hdr.h.sh |= 1;
        hdr.h.b ^= hdr.h.a;
        hdr.h.b -= 1;
        for (bit<8> i = 0; i < 4; i += 1) { hdr.h.acc *= 2; hdr.h.acc += i; }
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
