// `_` as an out argument: `extract<T>(_)` skips a header's bytes, and a function's out
// header or scalar given `_` is computed and dropped (each was an executor crash).
#include <core.p4>
#include <v1model.p4>

header skip_t { bit<16> x; }
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }

bit<8> split(in bit<8> v, out h_t parts, out bit<8> low) {
    parts.setValid();
    parts.a = v >> 4;
    parts.b = v & 0xf;
    low = v & 1;
    return parts.a + parts.b;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract<skip_t>(_);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.b = split(hdr.h.a, _, _);
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
