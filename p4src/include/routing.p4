/* L3 forwarding: longest prefix match on the IPv4 destination to a next-hop group, the
 * load-balancing mode of the (group, class), then ECMP through an action selector (hash of
 * the 5-tuple, plus the BTH destination QP when the mode asks for it: "E-ECMP"), or the
 * group's member list for DLB and spraying (dlb.p4, spray.p4). NextHop rewrites the MACs
 * for the chosen port once a member is chosen. */
#ifndef _FABRIC_ROUTING_P4_
#define _FABRIC_ROUTING_P4_

#include "headers.p4"

control Routing(in headers_t hdr,
                inout fabric_metadata_t meta,
                inout standard_metadata_t standard_metadata) {

    direct_counter(CounterType.packets_and_bytes) routing_v4_counter;

    action set_nh_group(bit<16> group_id) {
        meta.routed = 1;
        meta.nh_group = group_id;
    }

    action route_to_port(bit<9> port) {
        meta.routed = 1;
        meta.out_port = port;
        meta.lb_mode = LB_ECMP;
        meta.nh_group = 0;
    }

    action punt_to_cpu() {
        meta.to_cpu = 1;
    }

    action drop() {
        meta.drop_reason = DROP_ROUTE;
    }

    table routing_v4 {
        key = {
            hdr.ipv4.dst_addr: lpm;
        }
        actions = {
            set_nh_group;
            route_to_port;
            punt_to_cpu;
            drop;
        }
        default_action = drop();
        counters = routing_v4_counter;
        size = 4096;
    }

    action set_lb_mode(bit<3> mode, bit<1> hash_qp, bit<32> flowlet_timeout_us) {
        meta.lb_mode = mode;
        meta.lb_hash_qp = hash_qp;
        meta.flowlet_timeout = flowlet_timeout_us;
    }

    /* Mode per destination (group) and class (priority); larger priority wins. */
    table lb_mode {
        key = {
            meta.nh_group: ternary;
            meta.prio:     ternary;
        }
        actions = {
            set_lb_mode;
        }
        default_action = set_lb_mode(LB_ECMP, 0, 0);
        size = 256;
    }

    action set_egress_port(bit<9> port) {
        meta.out_port = port;
    }

    action_selector(HashAlgorithm.crc16, 32w1024, 32w16) ecmp_selector;

    table ecmp {
        key = {
            meta.nh_group:     exact;
            hdr.ipv4.src_addr: selector;
            hdr.ipv4.dst_addr: selector;
            hdr.ipv4.protocol: selector;
            meta.l4_sport:     selector;
            meta.l4_dport:     selector;
            meta.ecmp_qp:      selector;
        }
        actions = {
            set_egress_port;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        implementation = ecmp_selector;
        size = 1024;
    }

    action set_lb_members(bit<8> count, bit<9> port0, bit<9> port1, bit<9> port2,
                          bit<9> port3, bit<9> port4, bit<9> port5, bit<9> port6,
                          bit<9> port7) {
        meta.lb.count = count;
        meta.lb.port0 = port0;
        meta.lb.port1 = port1;
        meta.lb.port2 = port2;
        meta.lb.port3 = port3;
        meta.lb.port4 = port4;
        meta.lb.port5 = port5;
        meta.lb.port6 = port6;
        meta.lb.port7 = port7;
    }

    /* Member ports of a group for DLB and spraying (the data plane must see them to weigh
     * their load; an action selector hides its members). */
    table lb_group {
        key = {
            meta.nh_group: exact;
        }
        actions = {
            set_lb_members;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = LB_GROUPS;
    }

    apply {
        switch (routing_v4.apply().action_run) {
            set_nh_group: {
                lb_mode.apply();
                if (meta.lb_hash_qp == 1) {
                    meta.ecmp_qp = meta.bth_dest_qp;
                }
                bool use_ecmp = meta.lb_mode == LB_ECMP;
                if (!use_ecmp) {
                    if (lb_group.apply().hit) {
                        if (meta.lb.count == 0 || meta.lb.count > LB_MAX_MEMBERS) {
                            use_ecmp = true;
                        }
                    } else {
                        use_ecmp = true;
                    }
                }
                if (use_ecmp) {
                    meta.lb_mode = LB_ECMP;
                    if (!ecmp.apply().hit) {
                        meta.routed = 0;
                        meta.drop_reason = DROP_NO_MEMBER;
                    }
                }
            }
        }
    }
}

control NextHop(inout headers_t hdr,
                inout fabric_metadata_t meta,
                inout standard_metadata_t standard_metadata) {

    action set_next_hop_macs(bit<48> src_mac, bit<48> dst_mac) {
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
    }

    /* Links are point to point: the next hop is the neighbour on the egress port. */
    table next_hop_mac {
        key = {
            standard_metadata.egress_spec: exact;
        }
        actions = {
            set_next_hop_macs;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = NUM_PORTS;
    }

    apply {
        standard_metadata.egress_spec = meta.out_port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        next_hop_mac.apply();
    }
}

#endif
