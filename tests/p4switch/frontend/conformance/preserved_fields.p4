// Old-style resubmit(data), recirculate(data) and clone3(type, session, data) (P4_14
// translations use them): the metadata fields named in `data` survive into the next pass,
// the others start at 0, as BMv2 runs the field list p4c makes from the list.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<8> kept; bit<8> lost; bit<8> passes; }
struct counts_t { bit<8> kept; bit<8> lost; }
struct meta_t { counts_t c; bit<8> passes; }
struct headers_t { h_t h; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        m.passes = m.passes + 1;
        if (hdr.h.op == 1 && m.passes < 3) {
            m.c.kept = m.c.kept + 10;
            m.c.lost = m.c.lost + 10;
            resubmit({ m.c.kept, m.passes });
        }
        hdr.h.kept = m.c.kept;
        hdr.h.lost = m.c.lost;
        hdr.h.passes = m.passes;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (hdr.h.op == 2 && m.c.kept < 3) {
            m.c.kept = m.c.kept + 1;
            m.c.lost = m.c.lost + 2;
            recirculate({ m.c });
        }
        if (hdr.h.op == 3 && sm.instance_type == 0) {
            m.c.kept = 0x77;
            m.c.lost = 0x77;
            clone3(CloneType.E2E, 32w4, { m.c.kept });
        }
        if (sm.instance_type == 2) {   // the E2E clone
            hdr.h.kept = m.c.kept;
            hdr.h.lost = m.c.lost;
        }
    }
}
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
