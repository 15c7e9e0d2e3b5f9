/* Which parser error a variable-size extract raises when several apply: BMv2's order (and
 * P4-16's extract pseudocode) is ParserInvalidArgument (size not whole bytes), then
 * PacketTooShort, then HeaderTooShort (size beyond the varbit's maximum). Found by
 * p4switch-difftest: ours raised HeaderTooShort first. Ingress writes the error into the
 * last byte of the destination MAC. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> len_bits; }
header opt_t { varbit<16> options; }
struct headers_t { eth_t eth; opt_t opt; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.opt, (bit<32>)hdr.eth.len_bits[7:0]);
        transition accept;
    }
}
control NoVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> code = 9;
        if (sm.parser_error == error.NoError) { code = 0; }
        else if (sm.parser_error == error.PacketTooShort) { code = 1; }
        else if (sm.parser_error == error.HeaderTooShort) { code = 4; }
        else if (sm.parser_error == error.ParserInvalidArgument) { code = 6; }
        hdr.eth.dst[7:0] = code;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), NoVerify(), I(), E(), NoCompute(), D()) main;
