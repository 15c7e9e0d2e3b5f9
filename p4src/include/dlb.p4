/* Dynamic load balancing by flowlets. A flow (5-tuple hash, plus the BTH destination QP
 * when lb_mode asks for it) keeps its member port while its packets come closer together
 * than the flowlet timeout of its lb_mode entry; the first packet after a longer gap starts
 * a new flowlet, which takes the member port of lowest load (port_load.p4: queue depth and
 * recent bytes measured at egress). Ties go to a per-flow pseudo-random member. */
#ifndef _FABRIC_DLB_P4_
#define _FABRIC_DLB_P4_

#include "headers.p4"
#include "port_load.p4"

control Dlb(in headers_t hdr,
            inout fabric_metadata_t meta,
            in bit<48> now) {

    /* Arrival time of the flow's last packet. */
    register<bit<48>>(FLOWLET_SLOTS) flowlet_time;
    /* 0x8000 | member port of the current flowlet; 0 = never used. */
    register<bit<16>>(FLOWLET_SLOTS) flowlet_port;
    /* Number of flowlets the slot has started (wraps). */
    register<bit<16>>(FLOWLET_SLOTS) flowlet_id;

    PortQuality() quality0;
    PortQuality() quality1;
    PortQuality() quality2;
    PortQuality() quality3;
    PortQuality() quality4;
    PortQuality() quality5;
    PortQuality() quality6;
    PortQuality() quality7;

    apply {
        bit<32> slot;
        hash(slot, HashAlgorithm.crc32, 32w0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
               meta.l4_sport, meta.l4_dport, meta.ecmp_qp, meta.nh_group },
             (bit<32>)FLOWLET_SLOTS);

        bit<48> last;
        bit<16> stored;
        flowlet_time.read(last, slot);
        flowlet_port.read(stored, slot);
        bit<9> port = stored[8:0];

        bool member = stored[15:15] == 1 && (
               (meta.lb.count > 0 && port == meta.lb.port0)
            || (meta.lb.count > 1 && port == meta.lb.port1)
            || (meta.lb.count > 2 && port == meta.lb.port2)
            || (meta.lb.count > 3 && port == meta.lb.port3)
            || (meta.lb.count > 4 && port == meta.lb.port4)
            || (meta.lb.count > 5 && port == meta.lb.port5)
            || (meta.lb.count > 6 && port == meta.lb.port6)
            || (meta.lb.count > 7 && port == meta.lb.port7));

        if (member && now - last <= (bit<48>)meta.flowlet_timeout) {
            meta.out_port = port;
        } else {
            /* Candidate key: load << 3 | (member index ^ per-flow bits) -- unique, so the
             * first minimum is the least loaded member with a per-flow tie break. */
            bit<3> tie = slot[2:0];
            bit<48> best = 0xFFFFFFFFFFFF;
            bit<9> best_port = meta.lb.port0;
            bit<48> q;
            quality0.apply(meta.lb.port0, now, meta.dre_shift, q);
            q = (q << 3) | (bit<48>)(3w0 ^ tie);
            if (q < best) { best = q; best_port = meta.lb.port0; }
            if (meta.lb.count > 1) {
                quality1.apply(meta.lb.port1, now, meta.dre_shift, q);
                q = (q << 3) | (bit<48>)(3w1 ^ tie);
                if (q < best) { best = q; best_port = meta.lb.port1; }
            }
            if (meta.lb.count > 2) {
                quality2.apply(meta.lb.port2, now, meta.dre_shift, q);
                q = (q << 3) | (bit<48>)(3w2 ^ tie);
                if (q < best) { best = q; best_port = meta.lb.port2; }
            }
            if (meta.lb.count > 3) {
                quality3.apply(meta.lb.port3, now, meta.dre_shift, q);
                q = (q << 3) | (bit<48>)(3w3 ^ tie);
                if (q < best) { best = q; best_port = meta.lb.port3; }
            }
            if (meta.lb.count > 4) {
                quality4.apply(meta.lb.port4, now, meta.dre_shift, q);
                q = (q << 3) | (bit<48>)(3w4 ^ tie);
                if (q < best) { best = q; best_port = meta.lb.port4; }
            }
            if (meta.lb.count > 5) {
                quality5.apply(meta.lb.port5, now, meta.dre_shift, q);
                q = (q << 3) | (bit<48>)(3w5 ^ tie);
                if (q < best) { best = q; best_port = meta.lb.port5; }
            }
            if (meta.lb.count > 6) {
                quality6.apply(meta.lb.port6, now, meta.dre_shift, q);
                q = (q << 3) | (bit<48>)(3w6 ^ tie);
                if (q < best) { best = q; best_port = meta.lb.port6; }
            }
            if (meta.lb.count > 7) {
                quality7.apply(meta.lb.port7, now, meta.dre_shift, q);
                q = (q << 3) | (bit<48>)(3w7 ^ tie);
                if (q < best) { best = q; best_port = meta.lb.port7; }
            }
            meta.out_port = best_port;
            flowlet_port.write(slot, 0x8000 | (bit<16>)best_port);
            bit<16> id;
            flowlet_id.read(id, slot);
            flowlet_id.write(slot, id + 1);
        }
        flowlet_time.write(slot, now);
    }
}

#endif
