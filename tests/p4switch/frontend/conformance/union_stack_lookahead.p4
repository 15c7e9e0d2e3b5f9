// Extracting into a member of the next element of a stack of header unions advances the
// stack; `lookahead<S>()` of a struct reads its fields (nested ones too) without consuming
// them, and fails with PacketTooShort when the packet is shorter than the struct.
#include <core.p4>
#include <v1model.p4>

header one_t { bit<8> v; }
header two_t { bit<16> v; }
header_union u_t { one_t one; two_t two; }
header tag_t { bit<8> kind; }
struct inner_t { bit<3> hi; bool flag; bit<4> lo; }
struct peek_t { bit<8> kind; inner_t mid; bit<16> rest; }
struct headers_t { tag_t tag; u_t[2] u; }
struct meta_t { bit<8> seen; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        peek_t p = pkt.lookahead<peek_t>();
        m.seen = (p.mid.hi ++ (bit<1>)p.mid.flag ++ p.mid.lo) + 1;
        pkt.extract(hdr.tag);
        transition select(hdr.tag.kind) { 1: one_two; default: two_one; }
    }
    state one_two { pkt.extract(hdr.u.next.one); pkt.extract(hdr.u.next.two); transition accept; }
    state two_one { pkt.extract(hdr.u.next.two); pkt.extract(hdr.u.next.one); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error != error.NoError) { mark_to_drop(sm); exit; }
        sm.egress_spec = 1;
        if (hdr.u[0].one.isValid()) { hdr.u[0].one.v = m.seen; }
        if (hdr.u[1].one.isValid()) { hdr.u[1].one.v = m.seen; }
        if (hdr.u[0].two.isValid()) { hdr.u[0].two.v = 0xffff; }
        if (hdr.u[1].two.isValid()) { hdr.u[1].two.v = 0xffff; }
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
