/* Per-packet spraying over the group's members, for traffic whose NICs reassemble out of
 * order. Modes (lb_mode): round robin per group (exact rotation), uniform random, and
 * best of two random distinct members by port load (port_load.p4). */
#ifndef _FABRIC_SPRAY_P4_
#define _FABRIC_SPRAY_P4_

#include "headers.p4"
#include "port_load.p4"

control Spray(inout fabric_metadata_t meta, in bit<48> now) {

    /* Next member index per group (group ids below LB_GROUPS). */
    register<bit<8>>(LB_GROUPS) spray_rr_next;

    LbMemberPort() member_a;
    LbMemberPort() member_b;
    PortQuality() quality_a;
    PortQuality() quality_b;

    apply {
        bit<8> last = meta.lb.count - 1;
        bit<8> a = 0;
        bit<8> b = 0;
        if (meta.lb_mode == LB_SPRAY_RR) {
            bit<32> group = (bit<32>)meta.nh_group;
            spray_rr_next.read(a, group);
            if (a > last) {
                a = 0;
            }
            bit<8> following = a + 1;
            if (following > last) {
                following = 0;
            }
            spray_rr_next.write(group, following);
        } else {
            random(a, 8w0, last);
        }
        bit<9> port_a;
        member_a.apply(meta.lb, a, port_a);
        meta.out_port = port_a;

        if (meta.lb_mode == LB_SPRAY_BEST_OF_TWO && meta.lb.count > 1) {
            /* A second member, distinct from the first. */
            bit<8> step;
            random(step, 8w1, last);
            b = a + step;
            if (b > last) {
                b = b - meta.lb.count;
            }
            bit<9> port_b;
            member_b.apply(meta.lb, b, port_b);
            bit<48> qa;
            bit<48> qb;
            quality_a.apply(port_a, now, meta.dre_shift, qa);
            quality_b.apply(port_b, now, meta.dre_shift, qb);
            if (qb < qa) {
                meta.out_port = port_b;
            }
        }
    }
}

#endif
