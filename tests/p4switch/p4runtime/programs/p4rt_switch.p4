/* A switch with one of every control-plane object, for the P4Runtime server tests.
 * CPU port 64: packets from it carry a packet_out header; packets sent to it get a
 * packet_in header. */
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 64;

@controller_header("packet_out")
header packet_out_header_t {
    bit<9> egress_port;
    bit<7> _pad;
}

@controller_header("packet_in")
header packet_in_header_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<8>  version_ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<32> ident_flags;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

struct learn_t {
    bit<48> srcAddr;
    bit<9>  ingress_port;
}

struct metadata {
    bit<2> color;
    bit<1> custom;
}

struct headers {
    packet_out_header_t packet_out;
    packet_in_header_t  packet_in;
    ethernet_t          ethernet;
    ipv4_t              ipv4;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    value_set<bit<16>>(4) custom_ethertypes;

    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x800: parse_ipv4;
            custom_ethertypes: mark_custom;
            default: accept;
        }
    }
    state mark_custom {
        meta.custom = 1;
        transition accept;
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    counter(512, CounterType.packets) port_packets;
    direct_counter(CounterType.packets_and_bytes) route_hits;
    meter(16, MeterType.packets) policer;
    register<bit<32>>(16) last_length;
    action_selector(HashAlgorithm.crc16, 64, 14) ecmp_selector;
    direct_meter<bit<2>>(MeterType.bytes) l2_meter;
    action_profile(32) nexthop_profile;

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
    }
    action forward(bit<48> dstAddr, bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dstAddr = dstAddr;
    }
    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action l2_forward(bit<9> port) {
        standard_metadata.egress_spec = port;
        l2_meter.read(meta.color);
    }
    action flood(bit<16> group) {
        standard_metadata.mcast_grp = group;
    }

    table routes {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { forward; drop; NoAction; }
        counters = route_hits;
        default_action = drop();
    }

    table acl {
        key = {
            hdr.ethernet.etherType: ternary;
            hdr.ipv4.protocol: range;
            standard_metadata.ingress_port: optional;
        }
        actions = { to_cpu; drop; @defaultonly NoAction; }
        const default_action = NoAction();
        size = 8;
    }

    table l2 {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { l2_forward; flood; drop; }
        meters = l2_meter;
        size = 4;
        default_action = drop();
    }

    table ecmp {
        key = {
            hdr.ipv4.dstAddr: exact;
            hdr.ipv4.srcAddr: selector;
        }
        actions = { set_port; drop; }
        implementation = ecmp_selector;
        size = 16;
    }

    /* A plain action profile (members only, no selector); empty unless a test fills it. */
    table nexthops {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { set_port; NoAction; }
        implementation = nexthop_profile;
        size = 8;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        port_packets.count((bit<32>) standard_metadata.ingress_port);
        last_length.write((bit<32>) standard_metadata.ingress_port[3:0], standard_metadata.packet_length);
        if (hdr.ethernet.etherType == 0x9000) {
            digest<learn_t>(1, { hdr.ethernet.srcAddr, standard_metadata.ingress_port });
        }
        if (!l2.apply().hit && hdr.ipv4.isValid()) {
            if (!ecmp.apply().hit) {
                routes.apply();
            }
        }
        nexthops.apply();
        acl.apply();
        if (meta.custom == 1) {
            standard_metadata.egress_spec = 4;
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = standard_metadata.ingress_port;
            hdr.packet_in._pad = 0;
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
