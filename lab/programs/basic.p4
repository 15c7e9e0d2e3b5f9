/* Basic L3 forwarding for v1model: the program of the basic PTF suite, the switch's end-to-end
 * tests, the Mininet demo topology and the switch benchmark.
 *
 * Ethernet/IPv4 parse, LPM route to a next hop (rewrite MACs, decrement TTL, update the
 * checksum), packet-in/packet-out through the CPU port with @controller_header headers,
 * an indirect per-port counter and an egress register of the queue depth each packet saw.
 * Standard P4-16 only: it compiles with p4c (--target bmv2 --arch v1model) as with ours.
 */
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_IPV4 = 0x0800;
const bit<9> CPU_PORT = 255;

typedef bit<9> port_t;
typedef bit<48> mac_t;
typedef bit<32> ip4_t;

@controller_header("packet_in")
header packet_in_t {
    port_t ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    port_t egress_port;
    bit<7> _pad;
}

header ethernet_t {
    mac_t dstAddr;
    mac_t srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4> version;
    bit<4> ihl;
    bit<8> diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3> flags;
    bit<13> fragOffset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdrChecksum;
    ip4_t srcAddr;
    ip4_t dstAddr;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t packet_in;
    ethernet_t ethernet;
    ipv4_t ipv4;
}

struct metadata_t {
}

parser BasicParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
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
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control BasicVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control BasicIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    counter(512, CounterType.packets_and_bytes) port_rx;

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action ipv4_forward(mac_t dstAddr, port_t port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dstAddr;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action send_to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
    }
    table ipv4_lpm {
        key = {
            hdr.ipv4.dstAddr: lpm;
        }
        actions = {
            ipv4_forward;
            send_to_cpu;
            drop;
        }
        size = 1024;
        default_action = drop();
    }

    apply {
        port_rx.count((bit<32>)standard_metadata.ingress_port);
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            ipv4_lpm.apply();
        } else {
            drop();
        }
    }
}

control BasicEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    register<bit<32>>(512) enq_qdepth_seen;

    apply {
        enq_qdepth_seen.write((bit<32>)standard_metadata.egress_port,
                              (bit<32>)standard_metadata.enq_qdepth);
    }
}

control BasicComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

control BasicDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(BasicParser(), BasicVerifyChecksum(), BasicIngress(), BasicEgress(),
         BasicComputeChecksum(), BasicDeparser()) main;
