// setValid() on an invalid header zeroes its fields (BMv2's add_header), also after
// push_front left an old element's values in the pushed slots; on a valid header, or a
// valid member of a union, it changes nothing.
#include <core.p4>
#include <v1model.p4>

header e_t { bit<8> v; }
header op_t { bit<8> op; }
header a_t { bit<8> x; }
header b_t { bit<8> y; }
header_union u_t { a_t a; b_t b; }
struct headers_t { op_t op; e_t[3] s; a_t keep; u_t u; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.op); pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); pkt.extract(hdr.s.next);
        pkt.extract(hdr.keep); pkt.extract(hdr.u.a);
        transition accept;
    }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.s.push_front(2);        // s[0], s[1] invalid, holding old values
        hdr.s[0].setValid();        // zeroed
        hdr.keep.setValid();        // already valid: unchanged
        hdr.u.a.setValid();         // already valid: unchanged
        if (hdr.op.op == 1) {
            hdr.keep.setInvalid();
            hdr.keep.setValid();    // was invalid: zeroed
            hdr.u.b.setValid();     // a becomes invalid, b zeroed
        }
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
