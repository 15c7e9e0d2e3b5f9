/* v1model externs: registers, counters, meters (direct and indirect), hash, random,
 * clone/resubmit/recirculate with field lists, digest, action profiles and selectors,
 * initial entries with priorities, ternary/range/optional matches, switch on action_run. */
#include <core.p4>
#include <v1model.p4>

const bit<32> I2E_SESSION = 5;

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etherType;
}

struct headers_t {
    ethernet_t eth;
}

struct learn_t {
    bit<48> src;
    bit<9>  port;
}

struct meta_t {
    @field_list(1)
    bit<9>  in_port;
    @field_list(1, 2)
    bit<16> flow_hash;
    bit<2>  color;
    bit<32> reg_val;
    bit<8>  rnd;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t std) {
    register<bit<32>>(1024) flow_bytes;
    counter(64, CounterType.packets_and_bytes) port_pkts;
    meter(64, MeterType.bytes) port_meter;
    direct_counter(CounterType.packets) acl_hits;
    direct_meter<bit<2>>(MeterType.packets) acl_meter;
    action_selector(HashAlgorithm.crc16, 32w128, 32w14) ecmp_sel;

    action set_port(bit<9> port) {
        std.egress_spec = port;
    }
    action drop() {
        mark_to_drop(std);
    }
    action count_acl() {
        acl_hits.count();
        acl_meter.read(meta.color);
    }
    action to_cpu() {
        clone_preserving_field_list(CloneType.I2E, I2E_SESSION, 1);
    }

    table acl {
        key = {
            hdr.eth.etherType: ternary;
            std.ingress_port:  range;
            hdr.eth.dst:       optional;
        }
        actions = { count_acl; to_cpu; @defaultonly NoAction; }
        const default_action = NoAction();
        counters = acl_hits;
        meters = acl_meter;
        entries = {
            priority = 20: (0x0800 &&& 0xffff, 1 .. 8, _): count_acl();
            priority = 10: (0x88cc, _, 0x0180c200000e): to_cpu();
            (_, 9 .. 15, _): count_acl() @priority(3);
        }
        size = 256;
    }

    table ecmp {
        key = {
            hdr.eth.dst: exact;
            meta.flow_hash: selector;
        }
        actions = { set_port; drop; }
        implementation = ecmp_sel;
        default_action = drop();
    }

    table learn {
        key = { hdr.eth.src: exact; }
        actions = { NoAction; }
        size = 4096;
        support_timeout = true;
    }

    apply {
        meta.in_port = std.ingress_port;
        hash(meta.flow_hash, HashAlgorithm.crc16, 16w0, { hdr.eth.src, hdr.eth.dst }, 32w65536);
        random(meta.rnd, 0, 255);
        flow_bytes.read(meta.reg_val, (bit<32>)std.ingress_port);
        flow_bytes.write((bit<32>)std.ingress_port, meta.reg_val + std.packet_length);
        port_pkts.count((bit<32>)std.ingress_port);
        port_meter.execute_meter((bit<32>)std.ingress_port, meta.color);
        if (!learn.apply().hit) {
            digest<learn_t>(1, { hdr.eth.src, std.ingress_port });
        }
        switch (acl.apply().action_run) {
            to_cpu: { return; }
            count_acl:
            default: {
                if (meta.color == V1MODEL_METER_COLOR_RED) {
                    drop();
                    exit;
                }
            }
        }
        ecmp.apply();
        if (std.instance_type == 0 && hdr.eth.etherType == 0x9999) {
            resubmit_preserving_field_list(2);
        }
        log_msg("port {} hash {}", { std.ingress_port, meta.flow_hash });
        assert(std.egress_spec != 0);
        assume(true);
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t std) {
    apply {
        if (std.egress_port == 7) {
            recirculate_preserving_field_list(1);
        }
        if (std.instance_type == 1) {
            truncate(64);
        }
    }
}

control C(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); }
}

V1Switch(P(), V(), Ing(), Eg(), C(), D()) main;
