/* Access control before routing: punt frames to the controller (packet-in) or drop them.
 * Non-IPv4 frames (ARP, LLDP) are dropped unless an entry punts them. */
#ifndef _FABRIC_ACL_P4_
#define _FABRIC_ACL_P4_

#include "headers.p4"

control Acl(in headers_t hdr,
            inout fabric_metadata_t meta,
            in standard_metadata_t standard_metadata) {

    direct_counter(CounterType.packets_and_bytes) acl_counter;

    action punt_to_cpu() {
        meta.to_cpu = 1;
    }

    action drop() {
        meta.drop_reason = DROP_ACL;
    }

    action allow() {
    }

    /* Larger priority wins. */
    table acl {
        key = {
            standard_metadata.ingress_port: ternary;
            hdr.ethernet.ether_type:        ternary;
            hdr.ipv4.dst_addr:              ternary;
            hdr.ipv4.protocol:              ternary;
            meta.l4_dport:                  ternary;
        }
        actions = {
            punt_to_cpu;
            drop;
            allow;
        }
        default_action = allow();
        counters = acl_counter;
        size = 256;
    }

    apply {
        acl.apply();
    }
}

#endif
