// Hash (and digest) data holding a plain enum or an error: as in p4c's v1model mid end and
// BMv2, an enum member is its 32-bit position and an error its 32-bit code (were refused).
#include <core.p4>
#include <v1model.p4>

enum Color { Red, Green, Blue }
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); verify(hdr.h.b != 0xee, error.NoMatch); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        Color c = hdr.h.a == 1 ? Color.Green : Color.Blue;
        hash(hdr.h.a, HashAlgorithm.identity, 8w0, { c }, 16w256);
        hash(hdr.h.b, HashAlgorithm.identity, 8w0, { 24w0, sm.parser_error }, 16w256);
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
