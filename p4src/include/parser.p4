/* Parser and deparser of fabric.p4.
 *
 * Ethernet / [802.1Qbb MAC control] | IPv4 / UDP / [INT shim / INT-MD / hops] / BTH.
 * A frame that fails a check keeps its parser_error and is dropped (and counted) by
 * MyIngress; v1model does not drop it by itself. */
#ifndef _FABRIC_PARSER_P4_
#define _FABRIC_PARSER_P4_

#include "headers.p4"

error {
    IntLengthInvalid
}

parser FabricParser(packet_in packet,
                    out headers_t hdr,
                    inout fabric_metadata_t meta,
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
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_MAC_CONTROL: parse_mac_control;
            ETHERTYPE_PFC_REFRESH: parse_pfc_refresh;
            default: accept;
        }
    }

    /* A PFC refresh tick; from a front port it is dropped as non-IPv4 like any other. */
    state parse_pfc_refresh {
        packet.extract(hdr.pfc_refresh);
        transition accept;
    }

    /* Any MAC control frame (PAUSE or PFC): MyIngress drops it. */
    state parse_mac_control {
        packet.extract(hdr.pfc);
        transition accept;
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        meta.rx_ipv4_len = hdr.ipv4.total_len;
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        meta.l4_sport = hdr.udp.src_port;
        meta.l4_dport = hdr.udp.dst_port;
        transition select(hdr.udp.dst_port) {
            UDP_PORT_ROCE: parse_bth;
            UDP_PORT_INT: parse_int_shim;
            default: accept;
        }
    }

    state parse_int_shim {
        packet.extract(hdr.int_shim);
        packet.extract(hdr.int_md);
        /* len = 3 + 8 x hops, at most INT_MAX_HOPS hops. */
        verify(hdr.int_shim.len >= INT_MD_WORDS
               && hdr.int_shim.len <= INT_MD_WORDS + 8 * INT_MAX_HOPS
               && ((hdr.int_shim.len - INT_MD_WORDS) & 7) == 0,
               error.IntLengthInvalid);
        meta.parser_int_hops = (hdr.int_shim.len - INT_MD_WORDS) >> 3;
        /* The flow keys are those of the original packet. */
        meta.l4_dport = hdr.int_shim.udp_dport;
        transition select(meta.parser_int_hops) {
            0: parse_after_int;
            default: parse_int_hop;
        }
    }

    state parse_int_hop {
        packet.extract(hdr.int_hops.next);
        meta.parser_int_hops = meta.parser_int_hops - 1;
        transition select(meta.parser_int_hops) {
            0: parse_after_int;
            default: parse_int_hop;
        }
    }

    state parse_after_int {
        transition select(hdr.int_shim.udp_dport) {
            UDP_PORT_ROCE: parse_bth;
            default: accept;
        }
    }

    state parse_bth {
        packet.extract(hdr.bth);
        meta.is_roce = 1;
        meta.bth_opcode = hdr.bth.opcode;
        meta.bth_dest_qp = hdr.bth.dest_qp;
        transition accept;
    }
}

control FabricDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.report_ethernet);
        packet.emit(hdr.report_ipv4);
        packet.emit(hdr.report_udp);
        packet.emit(hdr.report);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.pfc);
        packet.emit(hdr.pfc_pad);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.int_shim);
        packet.emit(hdr.int_md);
        packet.emit(hdr.int_hops);
        packet.emit(hdr.bth);
    }
}

#endif
