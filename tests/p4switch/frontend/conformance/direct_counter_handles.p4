// STF `add ... = NAME` then `check_counter COUNTER($NAME) packets == N`: the direct counter
// of one table entry (p4c's counter tests use this form).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) hits;
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { hdr.h.k : exact; }
        actions = { fwd; NoAction; }
        default_action = NoAction();
        counters = hits;
    }
    apply { t.apply(); }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
