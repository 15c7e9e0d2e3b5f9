// Sub-controls applied from controls (inlined by the executor): two instances of one
// control with their own tables, one instance applied twice, locals named like the
// caller's, an `out` parameter, and `exit` inside a sub-control.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t ethernet; }
struct metadata { bit<8> a; }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control AddTo(inout headers hdr, in bit<8> x) {
    apply {
        bit<8> t = x + 1;  // a local named like its caller's, which keeps its value
        hdr.ethernet.src = hdr.ethernet.src + (bit<48>)t;
    }
}

control Double(in bit<8> x, out bit<8> r) {
    apply { r = x + x; }
}

control Stamp(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    bit<8> t = 3;
    AddTo() add;
    action set_port(bit<9> port) { sm.egress_spec = port; }
    table ports {
        key = { hdr.ethernet.etherType: exact; }
        actions = { set_port; NoAction; }
        default_action = NoAction();
    }
    apply {
        ports.apply();
        add.apply(hdr, t);
        add.apply(hdr, t);
        if (hdr.ethernet.etherType == 0xdead) { exit; }
        meta.a = meta.a + t;
    }
}

control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Stamp() first;
    Stamp() second;
    Double() dbl;
    apply {
        bit<8> t = 10;
        bit<8> d;
        first.apply(hdr, meta, sm);
        second.apply(hdr, meta, sm);
        dbl.apply(meta.a, d);
        hdr.ethernet.dst = (bit<48>)d + (bit<48>)t;
    }
}

control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.ethernet); } }

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
