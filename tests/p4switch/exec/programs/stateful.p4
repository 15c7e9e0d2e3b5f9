// Stateful externs: register (read, write, read-modify-write), counter, meter, a table
// with a direct counter, a table with a direct meter, and an action selector.
#include <core.p4>
#include <v1model.p4>

header ctl_t { bit<8> op; bit<8> idx; bit<32> v; bit<8> color; bit<8> port; }
struct headers { ctl_t ctl; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ctl); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(8) regs;
    counter(8, CounterType.packets_and_bytes) ctr;
    meter(4, MeterType.packets) mtr;
    direct_counter(CounterType.packets_and_bytes) dctr;
    direct_meter<bit<8>>(MeterType.bytes) dmtr;
    action_selector(HashAlgorithm.crc16, 32w64, 32w16) sel;

    action set_port(bit<9> port) { sm.egress_spec = port; }
    table fwd {
        key = { hdr.ctl.op: exact; }
        actions = { set_port; NoAction; }
        counters = dctr;
        default_action = set_port(1);
    }
    action mark() { dmtr.read(hdr.ctl.color); }
    table pol {
        key = { hdr.ctl.idx: exact; }
        actions = { mark; NoAction; }
        meters = dmtr;
    }
    action pick(bit<8> p) { hdr.ctl.port = p; }
    table ecmp {
        key = { hdr.ctl.idx: exact; hdr.ctl.v: selector; }
        actions = { pick; NoAction; }
        implementation = sel;
    }
    apply {
        fwd.apply();
        ctr.count((bit<32>)hdr.ctl.idx);
        if (hdr.ctl.op == 1) {
            regs.write((bit<32>)hdr.ctl.idx, hdr.ctl.v);
        } else if (hdr.ctl.op == 2) {
            regs.read(hdr.ctl.v, (bit<32>)hdr.ctl.idx);
        } else if (hdr.ctl.op == 3) {
            bit<32> cur;
            regs.read(cur, (bit<32>)hdr.ctl.idx);
            regs.write((bit<32>)hdr.ctl.idx, cur + hdr.ctl.v);
            hdr.ctl.v = cur + hdr.ctl.v;
        } else if (hdr.ctl.op == 4) {
            mtr.execute_meter((bit<32>)hdr.ctl.idx, hdr.ctl.color);
        } else if (hdr.ctl.op == 5) {
            pol.apply();
        } else if (hdr.ctl.op == 6) {
            ecmp.apply();
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.ctl); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
