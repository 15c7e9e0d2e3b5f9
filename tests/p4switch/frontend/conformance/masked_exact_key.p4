// A `field & MASK : exact` key: STF files name it by the field alone, as p4c's BMv2 back end
// does (the mask goes into the key), with entries holding masked values; an isValid() key is
// `hdr.$valid` there (BMv2's `$valid$` field).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<16> f; bit<8> res; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.res = v; }
    table t {
        key = { hdr.h.isValid() : exact; hdr.h.f & 16w0xff00 : exact; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply { sm.egress_spec = 1; t.apply(); }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
