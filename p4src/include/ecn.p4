/* RED-style ECN marking at egress on the depth of the packet's queue when it was enqueued
 * (enq_qdepth, packets), with Kmin, Kmax and Pmax per (egress port, priority):
 *   depth <= Kmin: never marked;  Kmin < depth < Kmax: marked with probability
 *   Pmax * (depth - Kmin) / (Kmax - Kmin);  depth >= Kmax: always marked.
 * Only ECT(0)/ECT(1) packets become CE; Not-ECT packets are never touched. */
#ifndef _FABRIC_ECN_P4_
#define _FABRIC_ECN_P4_

#include "headers.p4"

control Ecn(inout headers_t hdr,
            in fabric_metadata_t meta,
            in standard_metadata_t standard_metadata) {

    /* Packets set to CE, by egress port * 8 + priority. */
    counter(NUM_PORT_PRIOS, CounterType.packets) ecn_marks;

    bit<19> kmin = 0;
    bit<19> kmax = 0;
    bit<32> pmax = 0;

    /* kmin, kmax in packets of queue depth; pmax in 1/65536 (65536 = 1.0). */
    action set_ecn_thresholds(bit<19> kmin_pkts, bit<19> kmax_pkts, bit<32> pmax_scaled) {
        kmin = kmin_pkts;
        kmax = kmax_pkts;
        pmax = pmax_scaled;
    }

    table ecn_thresholds {
        key = {
            standard_metadata.egress_port: exact;
            meta.prio:                     exact;
        }
        actions = {
            set_ecn_thresholds;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = NUM_PORT_PRIOS;
    }

    apply {
        if (hdr.ipv4.isValid() && hdr.ipv4.ecn != ECN_NOT_ECT && hdr.ipv4.ecn != ECN_CE) {
            if (ecn_thresholds.apply().hit) {
                bit<19> depth = standard_metadata.enq_qdepth;
                bool mark = false;
                if (depth >= kmax) {
                    mark = true;
                } else if (depth > kmin) {
                    /* P(r < pmax * (depth - kmin)) with r uniform below (kmax - kmin) << 16. */
                    bit<48> span = (bit<48>)(kmax - kmin) << 16;
                    bit<48> r;
                    random(r, 48w0, span - 1);
                    if (r < (bit<48>)pmax * (bit<48>)(depth - kmin)) {
                        mark = true;
                    }
                }
                if (mark) {
                    hdr.ipv4.ecn = ECN_CE;
                    ecn_marks.count((bit<32>)standard_metadata.egress_port * 8
                                    + (bit<32>)meta.prio);
                }
            }
        }
    }
}

#endif
