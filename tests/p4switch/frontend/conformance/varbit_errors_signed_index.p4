// BMv2 parser errors for varbit extraction (a size that is not whole bytes is
// ParserInvalidArgument, one above the maximum HeaderTooShort), and a header stack indexed
// by a signed int<8> field at run time (p4c accepts int<W> indexes).
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> nbits; int<8> idx; bit<8> err; }
header opt_t { varbit<16> data; }
header e_t { bit<8> v; }
struct headers_t { len_t l; opt_t opt; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.l);
        pkt.extract(hdr.opt, (bit<32>)hdr.l.nbits);
        transition accept;
    }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    e_t[3] st;
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.ParserInvalidArgument) { hdr.l.err = 6; }
        else if (sm.parser_error == error.HeaderTooShort) { hdr.l.err = 4; }
        else if (sm.parser_error == error.NoError) { hdr.l.err = 0; }
        else { hdr.l.err = 9; }
        st[0].setValid(); st[1].setValid(); st[2].setValid();
        st[0].v = 10; st[1].v = 11; st[2].v = 12;
        st[hdr.l.idx].v = st[hdr.l.idx].v + 100;   // idx 0..2 valid; others change nothing
        hdr.l.nbits = st[0].v + st[1].v + st[2].v;
    }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.l); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
