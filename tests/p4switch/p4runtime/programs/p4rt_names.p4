// Control-plane names that differ from the plain source spelling: a key with an explicit
// cast and a slice, an action parameter renamed with @name. P4Info and the executor must
// agree on every one of them, or a controller cannot program the table.
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { eth_t eth; }
struct meta_t { bit<8> unused; }

parser NParser(packet_in pk, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.eth); transition accept; }
}
control NVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control NIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    action forward(@name("out_port") bit<9> port) { sm.egress_spec = port; }
    table by_type {
        key = { (bit<8>)hdr.eth.type : exact; hdr.eth.dst[7:0] : exact; }
        actions = { forward; drop; }
        default_action = drop();
    }
    apply { by_type.apply(); }
}
control NEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control NCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control NDeparser(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.eth); } }

V1Switch(NParser(), NVerify(), NIngress(), NEgress(), NCompute(), NDeparser()) main;
