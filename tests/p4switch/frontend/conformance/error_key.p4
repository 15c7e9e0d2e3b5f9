// A table keyed on a value of type error (BMv2 holds errors as 32-bit codes), with const
// entries naming error members and control-plane entries given by code.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action to(bit<9> port) { sm.egress_spec = port; }
    table by_error {
        key = { sm.parser_error : exact; }
        actions = { to; }
        const entries = {
            error.NoError : to(1);
            error.PacketTooShort : to(2);
        }
        default_action = to(3);
    }
    apply { by_error.apply(); }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
