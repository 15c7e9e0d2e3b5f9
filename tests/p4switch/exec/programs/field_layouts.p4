// Fields at every kind of position in a header: sub-byte fields across byte boundaries, a
// bool, a 72-bit field (wider than a machine word), a 64-bit one not aligned to a byte, and
// fields that end a header in the middle of a byte. Ingress copies each field extracted from
// `src` into `dst` (emitted from its fields, in another order), so the output shows every
// value the parser read; the compiled backend reads fields byte by byte, the Python one
// shifts the whole header, and both must agree with these bytes.
#include <core.p4>
#include <v1model.p4>

header src_t {
    bit<3> a; bit<13> b; bool c; bit<7> d; bit<72> e; bit<1> f; bit<64> g; bit<7> h; bit<8> i;
}
header dst_t {
    bit<8> i; bit<7> h; bit<1> f; bit<64> g; bit<72> e; bit<7> d; bool c; bit<13> b; bit<3> a;
}
header tail_t { bit<4> x; bit<12> y; }  // 2 bytes: y crosses the byte boundary
struct headers { src_t src; dst_t dst; tail_t tail; }
struct metadata { bit<8> unused; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.src); pkt.extract(hdr.tail); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.dst.setValid();
        hdr.dst.a = hdr.src.a; hdr.dst.b = hdr.src.b; hdr.dst.c = hdr.src.c; hdr.dst.d = hdr.src.d;
        hdr.dst.e = hdr.src.e; hdr.dst.f = hdr.src.f; hdr.dst.g = hdr.src.g; hdr.dst.h = hdr.src.h;
        hdr.dst.i = hdr.src.i;
        hdr.src.setInvalid();
        hdr.tail.x = hdr.tail.x + 1;
        hdr.tail.y = hdr.tail.y + 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.src); pkt.emit(hdr.dst); pkt.emit(hdr.tail); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
