// @field_list arguments naming members of a serializable enum (as p4c's P4_14 translations
// write them): resubmit_preserving_field_list keeps exactly the fields of that list.
#include <core.p4>
#include <v1model.p4>

enum bit<8> Lists { none = 0, kept_list = 1, other_list = 2 }
header h_t { bit<8> kept; bit<8> lost; bit<8> passes; }
struct meta_t {
    @field_list(Lists.kept_list) bit<8> kept;
    @field_list(Lists.other_list) bit<8> lost;
    @field_list(Lists.kept_list, Lists.other_list) bit<8> passes;
}
struct headers_t { h_t h; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        m.passes = m.passes + 1;
        if (m.passes < 3) {
            m.kept = m.kept + 10;
            m.lost = m.lost + 10;
            resubmit_preserving_field_list((bit<8>)Lists.kept_list);
        }
        hdr.h.kept = m.kept;
        hdr.h.lost = m.lost;
        hdr.h.passes = m.passes;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
