/* Traffic classes: DSCP (and, for RoCEv2, the BTH opcode) to a priority, which is the
 * egress queue (standard_metadata.priority; simple_switch --priority-queues 8) and the PFC
 * class. Typical entries: RoCE data DSCP 26 -> lossless priority 3; CNP (opcode 0x81) and
 * ACK/NAK (0x11) -> priority 6; everything else priority 0. */
#ifndef _FABRIC_CLASSIFY_P4_
#define _FABRIC_CLASSIFY_P4_

#include "headers.p4"

control Classify(in headers_t hdr,
                 inout fabric_metadata_t meta,
                 inout standard_metadata_t standard_metadata) {

    action set_priority(bit<3> priority) {
        meta.prio = priority;
    }

    table classify {
        key = {
            hdr.ipv4.dscp:   ternary;
            meta.is_roce:    ternary;
            meta.bth_opcode: ternary;
        }
        actions = {
            set_priority;
        }
        default_action = set_priority(0);
        size = 256;
    }

    apply {
        classify.apply();
        standard_metadata.priority = meta.prio;
    }
}

#endif
