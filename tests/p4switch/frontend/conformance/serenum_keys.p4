// Serializable-enum table keys: entries may give values of the enum's underlying type
// (p4c converts the key implicitly), e.g. a cast member with a mask.
#include <core.p4>
#include <v1model.p4>

enum bit<16> Kind { A = 0x0a00, B = 0xab00 }
header h_t { Kind k; bit<8> res; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.res = v; }
    table t {
        key = { hdr.h.k : ternary; }
        actions = { set; }
        default_action = set(0xee);
        const entries = {
            Kind.A : set(1);
            ((bit<16>)Kind.B) &&& 0xff00 : set(2);
            16w0x0c00 &&& 0xff00 : set(3);
        }
    }
    apply { sm.egress_spec = 1; t.apply(); }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
