/* In-band network telemetry, INT-MD over UDP as p4src/include/INT_LAYOUT.md lays it out.
 *
 * Source (ingress, first switch): a RoCEv2 data packet (SEND/WRITE) of a flow on the watch
 * list gets the shim and INT-MD header; UDP dport becomes 4792.
 * Transit (egress, every switch including the source and a forwarding sink): pushes one
 * 32-byte hop record while remaining_hop_cnt > 0, else sets the e bit.
 * Sink (ingress decides by egress port, egress acts), three modes: forward the INT to the
 * host for the NIC to echo (HPCC); strip it, restore the UDP dport and lengths, and send a
 * telemetry report to the collector; or both, forward with INT and report (HPCC with
 * fabric-wide telemetry). The report is an ingress-to-egress clone (the original still
 * carries the INT then; an egress clone would copy the stripped packet) that gets the
 * sink's own hop record and the report encapsulation at egress, the same whichever port the
 * collector session points at (p4src/README.md).
 * Single hop (source and sink are this switch, two hosts on one leaf): the forwarded packet
 * gets the INT at ingress and its one hop at egress as on any path; the report clone is the
 * packet as received, without that INT, so egress adds the source's INT to it again (the
 * same max_hops, preserved in the clone) before pushing the hop: the report is the one a
 * multi-hop sink sends, with hop_count 1. A target whose ingress-to-egress clone kept the
 * ingress changes would report it unchanged, as the clone would already carry the INT.
 * MTU: INT never grows a packet beyond its egress port's IP MTU (int_port_mtu; no entry = no
 * limit). The source does not instrument a packet whose IPv4 total length plus the INT header
 * and one hop would exceed it; a transit (or forwarding sink) that has no room for its hop sets
 * the M bit instead (INT 2.1: "MTU exceeded"). Both are counted per egress port
 * (int_source_mtu_skips, int_transit_mtu_skips), so no frame that the kernel would refuse as
 * too big leaves the pipeline counted as sent because of INT. */
#ifndef _FABRIC_INT_P4_
#define _FABRIC_INT_P4_

#include "headers.p4"
#include "port_load.p4"

/* The INT the source adds: shim and INT-MD header, UDP dport 4792, lengths grown. Applied
 * at ingress by the source, and at egress to a report clone when source and sink are this
 * one switch (the clone is the packet as received, without that INT). Holds no table, so
 * it is instantiated once per use. */
control IntSourceHeaders(inout headers_t hdr, in bit<8> max_hops, in bit<16> ds_flags,
                         in bit<16> time_scale) {
    apply {
        hdr.int_shim.setValid();
        hdr.int_shim.int_type = INT_TYPE_MD;
        hdr.int_shim.npt = INT_NPT_UDP_PORT;
        hdr.int_shim._reserved = 0;
        hdr.int_shim.len = INT_MD_WORDS;
        hdr.int_shim.udp_dport = hdr.udp.dst_port;
        hdr.int_md.setValid();
        hdr.int_md.ver = INT_VERSION;
        hdr.int_md.d = 0;
        hdr.int_md.e = 0;
        hdr.int_md.m = 0;
        hdr.int_md._reserved1 = 0;
        hdr.int_md.hop_ml = INT_HOP_WORDS;
        hdr.int_md.remaining_hop_cnt = max_hops;
        hdr.int_md.instructions = INT_INSTRUCTIONS;
        hdr.int_md.time_scale = time_scale;
        hdr.int_md.domain_id = INT_DOMAIN_ID;
        hdr.int_md.ds_flags = ds_flags;
        hdr.udp.dst_port = UDP_PORT_INT;
        hdr.udp.checksum = 0;
        hdr.udp.length = hdr.udp.length + INT_SHIM_MD_BYTES;
        hdr.ipv4.total_len = hdr.ipv4.total_len + INT_SHIM_MD_BYTES;
    }
}

control IntIngress(inout headers_t hdr,
                   inout fabric_metadata_t meta,
                   in standard_metadata_t standard_metadata) {

    IntSourceHeaders() source_headers;

    /* Sources that did not instrument a watched packet (too big for INT), by egress port. */
    counter(NUM_PORTS, CounterType.packets) int_source_mtu_skips;

    action set_int_mtu(bit<16> ip_mtu) {
        meta.int_ip_mtu = ip_mtu;
    }

    /* Per egress port: the IP MTU (largest IPv4 total length) INT may grow a packet to. A port
     * without an entry has no limit. */
    table int_port_mtu {
        key = {
            standard_metadata.egress_spec: exact;
        }
        actions = {
            set_int_mtu;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = NUM_PORTS;
    }

    action int_source(bit<8> max_hops) {
        meta.int_source = 1;
        meta.int_max_hops = max_hops;
    }

    /* Flows to instrument at this (first-hop) switch; larger priority wins. */
    table int_watchlist {
        key = {
            hdr.ipv4.src_addr: ternary;
            hdr.ipv4.dst_addr: ternary;
            meta.l4_sport:     ternary;
            meta.l4_dport:     ternary;
        }
        actions = {
            int_source;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = 256;
    }

    action int_sink_to_host() {
        meta.int_sink_strip = 0;
    }

    action int_sink_report() {
        meta.int_sink_strip = 1;
        meta.clone_kind = CLONE_INT_REPORT;
    }

    /* HPCC and telemetry: the host gets the INT to echo, the collector a report. */
    action int_sink_to_host_and_report() {
        meta.int_sink_strip = 0;
        meta.clone_kind = CLONE_INT_REPORT;
    }

    /* Ports towards hosts, where INT ends. */
    table int_sink {
        key = {
            standard_metadata.egress_spec: exact;
        }
        actions = {
            int_sink_to_host;
            int_sink_report;
            int_sink_to_host_and_report;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = NUM_PORTS;
    }

    apply {
        if (hdr.udp.isValid() && !hdr.int_shim.isValid() && meta.is_roce == 1
                && meta.bth_opcode <= BTH_OPCODE_LAST_DATA) {
            int_watchlist.apply();
        }
        if (meta.int_source == 1 || hdr.int_shim.isValid()) {
            int_port_mtu.apply();
        }
        if (meta.int_source == 1) {
            /* Room for the INT header and at least this switch's own hop. */
            if (meta.int_ip_mtu != 0 && (bit<32>)hdr.ipv4.total_len
                    + (bit<32>)(INT_SHIM_MD_BYTES + INT_HOP_BYTES) > (bit<32>)meta.int_ip_mtu) {
                meta.int_source = 0;
                int_source_mtu_skips.count((bit<32>)standard_metadata.egress_spec);
            } else {
                source_headers.apply(hdr, meta.int_max_hops, meta.int_ds_flags, meta.int_time_scale);
            }
        }
        if (hdr.int_shim.isValid()) {
            int_sink.apply();
        }
    }
}

control IntEgress(inout headers_t hdr,
                  inout fabric_metadata_t meta,
                  inout standard_metadata_t standard_metadata,
                  in bool is_report) {

    /* Telemetry reports sent, by the sink's egress port towards the host. */
    counter(NUM_PORTS, CounterType.packets) int_reports;
    /* Hops not added because the packet would have exceeded the port's MTU (M bit set). */
    counter(NUM_PORTS, CounterType.packets) int_transit_mtu_skips;
    /* Report sequence number (one per switch). */
    register<bit<32>>(1) int_report_seq;

    IntSourceHeaders() source_headers;

    bit<32> tx_bytes = 0;
    bit<32> qdepth = 0;
    bit<32> switch_id = 0;
    bit<32> hop_switch_id = 0;
    bit<32> hop_link_rate = 0;

    /* The hop record's switch id and port rate; the record is pushed in apply, when it fits. */
    action int_transit(bit<32> switch_id_value, bit<32> link_rate_mbps) {
        hop_switch_id = switch_id_value;
        hop_link_rate = link_rate_mbps;
    }

    /* Per egress port: this switch's id and the port's rate. A port without an entry
     * adds no hop. */
    table int_transit_port {
        key = {
            meta.out_port: exact;
        }
        actions = {
            int_transit;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = NUM_PORTS;
    }

    action set_report_encap(bit<48> src_mac, bit<48> dst_mac, bit<32> src_ip,
                            bit<32> dst_ip, bit<16> udp_dport, bit<32> switch_id_value) {
        switch_id = switch_id_value;
        hdr.report_ethernet.setValid();
        hdr.report_ethernet.dst_addr = dst_mac;
        hdr.report_ethernet.src_addr = src_mac;
        hdr.report_ethernet.ether_type = ETHERTYPE_IPV4;
        hdr.report_ipv4.setValid();
        hdr.report_ipv4.version = 4;
        hdr.report_ipv4.ihl = 5;
        hdr.report_ipv4.dscp = 0;
        hdr.report_ipv4.ecn = 0;
        hdr.report_ipv4.identification = 0;
        hdr.report_ipv4.flags = 0;
        hdr.report_ipv4.frag_offset = 0;
        hdr.report_ipv4.ttl = 64;
        hdr.report_ipv4.protocol = IP_PROTO_UDP;
        hdr.report_ipv4.hdr_checksum = 0;
        hdr.report_ipv4.src_addr = src_ip;
        hdr.report_ipv4.dst_addr = dst_ip;
        hdr.report_udp.setValid();
        hdr.report_udp.src_port = UDP_PORT_INT_REPORT;
        hdr.report_udp.dst_port = udp_dport;
        hdr.report_udp.checksum = 0;
    }

    /* Where reports go (keyless: one default action). */
    table int_report_encap {
        actions = {
            set_report_encap;
            @defaultonly NoAction;
        }
        default_action = NoAction();
    }

    apply {
        if (is_report && !hdr.int_shim.isValid()) {
            /* Single-hop path: this switch was the source too. The ingress-to-egress clone
             * is the packet as received, before the source added its INT; add that INT again
             * (the same max_hops, preserved in the clone) so that the report carries what the
             * forwarded packet carried: this switch's one hop. Only a packet the source
             * instrumented here reaches the sink without INT. */
            source_headers.apply(hdr, meta.int_max_hops, meta.int_ds_flags, meta.int_time_scale);
        }
        if (hdr.int_shim.isValid()) {
            bit<8> hops = (hdr.int_shim.len - INT_MD_WORDS) >> 3;
            bool strip = !is_report && meta.int_sink_strip == 1;
            if (!strip) {
                if (hdr.int_md.remaining_hop_cnt == 0 || hops >= INT_MAX_HOPS) {
                    hdr.int_md.e = 1;
                } else {
                    port_tx_bytes.read(tx_bytes, (bit<32>)meta.out_port);
                    if ((meta.int_ds_flags & INT_DS_QUEUE_BYTES) != 0) {
                        /* Bytes, kept by the target when each packet (this one, or for a
                         * report clone the last one on the sink port) left the queue. */
                        port_queue_bytes.read(qdepth, (bit<32>)meta.out_port);
                    } else if (is_report) {
                        /* The clone queued towards the collector: the sink port's depth is
                         * the one the last packet leaving that port saw. */
                        bit<19> last_qdepth;
                        port_qdepth.read(last_qdepth, (bit<32>)meta.out_port);
                        qdepth = (bit<32>)last_qdepth;
                    } else {
                        qdepth = (bit<32>)standard_metadata.deq_qdepth;
                    }
                    if (qdepth > 0xFFFFFF) {
                        qdepth = 0xFFFFFF;   /* the 24-bit field saturates */
                    }
                    if (int_transit_port.apply().hit) {
                        /* A report clone is cut after the BTH: only forwarded packets are
                         * held to the MTU (a clone's int_ip_mtu is 0). */
                        if (meta.int_ip_mtu != 0 && (bit<32>)hdr.ipv4.total_len
                                + (bit<32>)INT_HOP_BYTES > (bit<32>)meta.int_ip_mtu) {
                            hdr.int_md.m = 1;
                            int_transit_mtu_skips.count((bit<32>)meta.out_port);
                        } else {
                            /* This switch's hop record, newest first. */
                            hdr.int_hops.push_front(1);
                            hdr.int_hops[0].setValid();
                            hdr.int_hops[0].switch_id = hop_switch_id;
                            hdr.int_hops[0].ingress_port = (bit<16>)meta.ingress_port;
                            hdr.int_hops[0].egress_port = (bit<16>)meta.out_port;
                            hdr.int_hops[0].hop_latency =
                                (bit<32>)(standard_metadata.egress_global_timestamp - meta.ingress_tstamp);
                            hdr.int_hops[0].queue_id = (bit<8>)meta.prio;
                            hdr.int_hops[0].queue_occupancy = (bit<24>)qdepth;
                            hdr.int_hops[0].ingress_tstamp = (bit<32>)meta.ingress_tstamp;
                            hdr.int_hops[0].egress_tstamp = (bit<32>)standard_metadata.egress_global_timestamp;
                            hdr.int_hops[0].egress_tx_bytes = tx_bytes;
                            hdr.int_hops[0].egress_link_rate = hop_link_rate;
                            hdr.int_md.remaining_hop_cnt = hdr.int_md.remaining_hop_cnt - 1;
                            hdr.int_shim.len = hdr.int_shim.len + (bit<8>)INT_HOP_WORDS;
                            hdr.udp.length = hdr.udp.length + INT_HOP_BYTES;
                            hdr.ipv4.total_len = hdr.ipv4.total_len + INT_HOP_BYTES;
                            hops = hops + 1;
                        }
                    }
                }
            }
            if (strip) {
                bit<16> int_bytes = ((bit<16>)hdr.int_shim.len << 2) + 4;
                hdr.udp.dst_port = hdr.int_shim.udp_dport;
                hdr.udp.length = hdr.udp.length - int_bytes;
                hdr.ipv4.total_len = hdr.ipv4.total_len - int_bytes;
                hdr.int_shim.setInvalid();
                hdr.int_md.setInvalid();
                hdr.int_hops[0].setInvalid();
                hdr.int_hops[1].setInvalid();
                hdr.int_hops[2].setInvalid();
                hdr.int_hops[3].setInvalid();
                hdr.int_hops[4].setInvalid();
                hdr.int_hops[5].setInvalid();
                hdr.int_hops[6].setInvalid();
                hdr.int_hops[7].setInvalid();
            }
            if (is_report) {
                /* A keyless table always misses: test which action its default ran. */
                bool encap = false;
                switch (int_report_encap.apply().action_run) {
                    set_report_encap: {
                        encap = true;
                    }
                }
                if (encap) {
                    /* Inner packet: Ethernet, IPv4, UDP, INT, BTH (payload cut off). */
                    bit<16> inner = 14 + 20 + 8 + 4 + ((bit<16>)hdr.int_shim.len << 2);
                    if (hdr.bth.isValid()) {
                        inner = inner + 12;
                    }
                    bit<32> seq;
                    int_report_seq.read(seq, 0);
                    int_report_seq.write(0, seq + 1);
                    hdr.report.setValid();
                    hdr.report.ver = REPORT_VERSION;
                    hdr.report.kind = REPORT_KIND_INT;
                    hdr.report.hop_count = hops;
                    hdr.report._reserved = 0;
                    hdr.report.switch_id = switch_id;
                    hdr.report.seq_no = seq;
                    hdr.report.ingress_tstamp = (bit<32>)meta.ingress_tstamp;
                    hdr.report_udp.length = 8 + REPORT_HDR_BYTES + inner;
                    hdr.report_ipv4.total_len = 20 + 8 + REPORT_HDR_BYTES + inner;
                    bit<32> cut = (bit<32>)(14 + 20 + 8 + REPORT_HDR_BYTES + inner);
                    if (hdr.packet_in.isValid()) {
                        cut = cut + 2;   /* the PacketIn header in front of a report to the CPU */
                    }
                    truncate(cut);
                    int_reports.count((bit<32>)meta.out_port);
                } else {
                    meta.drop_reason = DROP_NO_REPORT;
                    mark_to_drop(standard_metadata);
                }
            }
        }
    }
}

#endif
