/* Generic per port and per queue counters. Feature counters live with their feature:
 * ECN marks (ecn.p4), pauses/resumes sent (pfc.p4), INT reports (int.p4). Index
 * "port * 8 + priority" addresses one egress queue (or one ingress port's class). */
#ifndef _FABRIC_COUNTERS_P4_
#define _FABRIC_COUNTERS_P4_

#include "headers.p4"

control IngressCounters(in fabric_metadata_t meta,
                        in standard_metadata_t standard_metadata) {

    /* Every frame received, by ingress port. */
    counter(NUM_PORTS, CounterType.packets_and_bytes) rx_port;
    /* Frames ingress dropped, by ingress port * 8 + priority. */
    counter(NUM_PORT_PRIOS, CounterType.packets_and_bytes) ingress_drops;
    /* Frames ingress dropped, by DROP_* reason code. */
    counter(256, CounterType.packets) drop_reasons;
    /* Member chosen by the load balancer, by egress port * 8 + LB_* mode. */
    counter(NUM_PORT_PRIOS, CounterType.packets) lb_choices;

    apply {
        rx_port.count((bit<32>)standard_metadata.ingress_port);
        if (meta.drop_reason != 0) {
            ingress_drops.count((bit<32>)standard_metadata.ingress_port * 8
                                + (bit<32>)meta.prio);
            drop_reasons.count((bit<32>)meta.drop_reason);
        } else if (meta.routed == 1) {
            lb_choices.count((bit<32>)meta.out_port * 8 + (bit<32>)meta.lb_mode);
        }
    }
}

control EgressCounters(in fabric_metadata_t meta,
                       in standard_metadata_t standard_metadata) {

    /* Frames sent (including generated PFC frames and INT reports), by egress port * 8
     * + priority. */
    counter(NUM_PORT_PRIOS, CounterType.packets_and_bytes) tx_queue;

    apply {
        tx_queue.count((bit<32>)standard_metadata.egress_port * 8 + (bit<32>)meta.prio);
    }
}

#endif
