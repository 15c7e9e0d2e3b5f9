// Tables whose action profile, selector, direct counter and direct meter are constructed
// in place as table properties, named by the property's @name as p4c requires for P4Runtime.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers_t { ethernet_t ethernet; }
struct metadata_t { bit<32> color; }

parser MyParser(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action set_port(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }

    table prof_fwd {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { set_port; drop; }
        @name("ap") implementation = action_profile(32w128);
    }
    table sel_fwd {
        key = { hdr.ethernet.etherType: exact; hdr.ethernet.srcAddr: selector; }
        actions = { set_port; drop; }
        @name(".global_sel") implementation = action_selector(HashAlgorithm.crc16, 32w128, 32w16);
    }
    table counted {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { set_port; NoAction; }
        default_action = NoAction();
        @name("hits") counters = direct_counter(CounterType.packets);
        @name("policer") meters = direct_meter<bit<32>>(MeterType.packets);
    }
    apply {
        if (hdr.ethernet.etherType == 0x0800) {
            sel_fwd.apply();
        } else {
            prof_fwd.apply();
        }
        counted.apply();
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); } }

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
