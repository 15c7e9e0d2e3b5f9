// Packet replication and the end-of-pipeline logic: I2E and E2E clones, multicast with
// replication ids, resubmit and recirculate with preserved field lists, mark_to_drop in
// ingress and egress, truncate, exit. The op byte selects the behaviour.
#include <core.p4>
#include <v1model.p4>

const bit<32> NORMAL = 0;
const bit<32> I2E_CLONE = 1;
const bit<32> E2E_CLONE = 2;
const bit<32> RECIRC = 4;
const bit<32> REPLICATION = 5;
const bit<32> RESUBMIT = 6;

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ctl_t { bit<8> op; bit<8> itype; bit<16> rid; bit<8> m; bit<8> port; }

struct headers { ethernet_t ethernet; ctl_t ctl; }
struct metadata {
    @field_list(1) bit<8> resub_count;
    @field_list(2) bit<8> recirc_mark;
    @field_list(3) bit<8> e2e_mark;
    bit<8> not_preserved;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ctl);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.ctl.op == 1) {
            clone(CloneType.I2E, 5);
            hdr.ctl.m = 0x11;
        } else if (hdr.ctl.op == 2) {
            sm.mcast_grp = 7;
        } else if (hdr.ctl.op == 3) {
            if (sm.instance_type == NORMAL) {
                meta.resub_count = 0x33;
                meta.not_preserved = 0x44;
                hdr.ctl.m = 0xFF;  // lost: resubmit restarts from the original packet
                resubmit_preserving_field_list(1);
            } else {
                hdr.ctl.m = meta.resub_count | meta.not_preserved;
            }
        } else if (hdr.ctl.op == 4) {
            if (sm.instance_type == RECIRC) {
                hdr.ctl.m = meta.recirc_mark;
                hdr.ctl.port = (bit<8>)sm.ingress_port;
            }
        } else if (hdr.ctl.op == 6) {
            mark_to_drop(sm);
        } else if (hdr.ctl.op == 9) {
            sm.egress_spec = 2;
            exit;
        }
        hdr.ctl.itype = (bit<8>)sm.instance_type;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == I2E_CLONE) {
            hdr.ctl.itype = 0xC1;
            hdr.ctl.port = (bit<8>)sm.egress_port;
        } else if (sm.instance_type == REPLICATION) {
            hdr.ctl.rid = sm.egress_rid;
            hdr.ctl.port = (bit<8>)sm.egress_port;
        } else if (sm.instance_type == E2E_CLONE) {
            hdr.ctl.itype = 0xE2;
            hdr.ctl.m = meta.e2e_mark;
        } else if (hdr.ctl.op == 4 && sm.instance_type == NORMAL) {
            meta.recirc_mark = 0x77;
            recirculate_preserving_field_list(2);
        } else if (hdr.ctl.op == 5) {
            meta.e2e_mark = 0x55;
            hdr.ctl.m = 0x5A;
            clone_preserving_field_list(CloneType.E2E, 6, 3);
        } else if (hdr.ctl.op == 7) {
            mark_to_drop(sm);
        } else if (hdr.ctl.op == 8) {
            truncate(16);
        }
    }
}

control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ctl); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
