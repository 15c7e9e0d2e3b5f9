/* Headers and metadata of fabric.p4. One definition per wire format; field layouts follow
 * the standards (IEEE 802.3/802.1Qbb, RFC 791/768, IBA RoCEv2 annex) and INT_LAYOUT.md. */
#ifndef _FABRIC_HEADERS_P4_
#define _FABRIC_HEADERS_P4_

#include "defines.p4"

/* Controller headers (P4Runtime PacketIn / PacketOut metadata). */
@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

/* IEEE 802.1Qbb priority flow control frame body (after an Ethernet header with type
 * 0x8808 and destination 01-80-C2-00-00-01). Times are in quanta of 512 bit times;
 * 0 = resume. */
header pfc_t {
    bit<16> opcode;
    bit<8>  _reserved;
    bit<8>  class_enable;   /* bit i = priority i */
    bit<16> time0;
    bit<16> time1;
    bit<16> time2;
    bit<16> time3;
    bit<16> time4;
    bit<16> time5;
    bit<16> time6;
    bit<16> time7;
}

/* Zero padding that brings a generated PFC frame to the 60-byte minimum. */
header pfc_pad_t {
    bit<208> zeros;
}

/* Body of a PFC refresh packet-out (EtherType ETHERTYPE_PFC_REFRESH): re-send the pause of
 * (the packet_out's egress_port, prio) if that ingress port is still paused (pfc.p4). */
header pfc_refresh_t {
    bit<5> _reserved;
    bit<3> prio;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<6>  dscp;
    bit<2>  ecn;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

/* InfiniBand base transport header (12 bytes). */
header bth_t {
    bit<8>  opcode;
    bit<1>  solicited;
    bit<1>  migreq;
    bit<2>  pad_count;
    bit<4>  tver;
    bit<16> pkey;
    bit<1>  fecn;
    bit<1>  becn;
    bit<6>  _resv6;
    bit<24> dest_qp;
    bit<1>  ack_req;
    bit<7>  _resv7;
    bit<24> psn;
}

/* INT shim for INT over UDP (INT_LAYOUT.md). */
header int_shim_t {
    bit<4>  int_type;
    bit<2>  npt;
    bit<2>  _reserved;
    bit<8>  len;            /* words of INT-MD header + hop stack = 3 + 8 x hops */
    bit<16> udp_dport;      /* original UDP destination port */
}

/* INT-MD header (12 bytes, INT_LAYOUT.md). */
header int_md_t {
    bit<4>  ver;
    bit<1>  d;
    bit<1>  e;
    bit<1>  m;
    bit<12> _reserved1;
    bit<5>  hop_ml;
    bit<8>  remaining_hop_cnt;
    bit<16> instructions;
    bit<16> time_scale;     /* timestamp ticks per fabric tick, INT_LAYOUT.md (0: 1) */
    bit<16> domain_id;
    bit<16> ds_flags;
}

/* One hop of INT metadata (8 words, INT_LAYOUT.md); newest hop first. */
header int_hop_t {
    bit<32> switch_id;
    bit<16> ingress_port;
    bit<16> egress_port;
    bit<32> hop_latency;
    bit<8>  queue_id;
    bit<24> queue_occupancy;
    bit<32> ingress_tstamp;
    bit<32> egress_tstamp;
    bit<32> egress_tx_bytes;
    bit<32> egress_link_rate;
}

/* Telemetry report header (16 bytes) that follows the report's outer UDP header. */
header int_report_t {
    bit<4>  ver;
    bit<4>  kind;
    bit<8>  hop_count;
    bit<16> _reserved;
    bit<32> switch_id;
    bit<32> seq_no;
    bit<32> ingress_tstamp;
}

struct headers_t {
    packet_out_t  packet_out;
    packet_in_t   packet_in;
    /* Outer headers of an INT report (valid only in report clones). */
    ethernet_t    report_ethernet;
    ipv4_t        report_ipv4;
    udp_t         report_udp;
    int_report_t  report;
    ethernet_t    ethernet;
    pfc_t         pfc;
    pfc_pad_t     pfc_pad;
    pfc_refresh_t pfc_refresh;
    ipv4_t        ipv4;
    udp_t         udp;
    int_shim_t    int_shim;
    int_md_t      int_md;
    int_hop_t[INT_MAX_HOPS] int_hops;
    bth_t         bth;
}

/* Group members for DLB and spraying, from MyIngress.lb_group. */
struct lb_members_t {
    bit<8> count;
    bit<9> port0;
    bit<9> port1;
    bit<9> port2;
    bit<9> port3;
    bit<9> port4;
    bit<9> port5;
    bit<9> port6;
    bit<9> port7;
}

struct fabric_metadata_t {
    /* Parser results. */
    bit<16> l4_sport;
    bit<16> l4_dport;
    bit<1>  is_roce;
    bit<8>  bth_opcode;
    bit<24> bth_dest_qp;
    bit<8>  parser_int_hops;
    bit<16> rx_ipv4_len;    /* IPv4 total length as received (0 without IPv4) */

    /* Fields marked @field_list(CLONE_FIELD_LIST) are preserved into clones
     * (clone_preserving_field_list); simple_switch zeroes the rest of a clone's metadata.
     * Set for every packet at ingress; normal packets keep all metadata into egress. */
    @field_list(CLONE_FIELD_LIST)
    bit<8>  clone_kind;
    @field_list(CLONE_FIELD_LIST)
    bit<3>  prio;
    @field_list(CLONE_FIELD_LIST)
    bit<9>  ingress_port;
    @field_list(CLONE_FIELD_LIST)
    bit<48> ingress_tstamp;
    @field_list(CLONE_FIELD_LIST)
    bit<9>  out_port;
    @field_list(CLONE_FIELD_LIST)
    bit<48> port_mac;       /* this switch's MAC on the ingress port (the frame's dst) */
    @field_list(CLONE_FIELD_LIST)
    bit<1>  pfc_pause;      /* PFC clone: 1 = pause, 0 = resume */
    @field_list(CLONE_FIELD_LIST)
    bit<16> pfc_quanta;
    /* Target time and queue units (the time_unit table in fabric.p4): the DRE period shift,
     * the INT-MD ds_flags and time scale. */
    @field_list(CLONE_FIELD_LIST)
    bit<8>  dre_shift;
    @field_list(CLONE_FIELD_LIST)
    bit<16> int_ds_flags;
    @field_list(CLONE_FIELD_LIST)
    bit<16> int_time_scale;

    /* Forwarding. */
    bit<8>  drop_reason;    /* 0 = forward; else a DROP_* code */
    bit<1>  to_cpu;
    bit<1>  routed;
    bit<16> nh_group;
    bit<3>  lb_mode;
    bit<1>  lb_hash_qp;
    bit<24> ecmp_qp;
    bit<32> flowlet_timeout;
    lb_members_t lb;

    /* INT. */
    bit<1>  int_source;
    @field_list(CLONE_FIELD_LIST)
    bit<8>  int_max_hops;   /* a report clone of a single-hop path rebuilds the source's INT */
    bit<1>  int_sink_strip;
    bit<16> int_ip_mtu;     /* largest IPv4 total length INT may grow the packet to (0: no limit) */

    /* PFC accounting of this packet (carried to egress for normal packets). */
    bit<1>  pfc_counted;
    bit<16> pfc_xon;
    bit<16> pfc_epoch;      /* generation that counted it (pfc.p4) */
}

#endif
