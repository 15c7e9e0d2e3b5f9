/* PFC-style pause generation (IEEE 802.1Qbb), per ingress port and priority.
 *
 * Ingress counts every forwarded packet of a PFC-enabled priority as buffered for its
 * (ingress port, priority); egress uncounts it when it leaves. When the count reaches XOFF
 * the switch pauses that priority on the ingress port: an ingress-to-egress clone to
 * session PFC_SESSION_BASE + port, which egress turns into a PFC frame (pause time =
 * quanta). While still at or above XOFF it repeats the pause every refresh interval. When
 * the count falls to XON or below, egress sends a resume (time 0) by an egress-to-egress
 * clone to the same session. Received MAC control frames are dropped by FabricIngress.
 *
 * Self-healing count. A packet counted at ingress and dropped before egress (traffic-manager
 * tail drop, PFC watchdog drop, pipeline swap) is never uncounted, and v1model tells the
 * program nothing about such drops. Real switches account in the MMU; here the count is
 * kept in two generations: the current one (packets admitted since pfc_epoch_start) and
 * the previous one (pfc_buffered_old of the pfc_buffered total). Each packet carries its
 * generation number to egress, which uncounts it from that generation (or not at all if
 * the generation is gone). The first arrival after `stale_us` since the current generation
 * began opens a new one and forgets the previous generation (or both when the current one
 * is older than 2 x stale_us): their packets were admitted more than stale_us ago and are
 * taken as lost. If that brings the count to XON or below while paused, this arrival
 * resumes the sender. A lost packet is thus forgotten between stale_us and 2 x stale_us
 * after it was counted, also under continuous traffic (p4src/README.md, "PFC frames sent").
 *
 * Refresh from buffer state. Arrivals alone keep a pause up only while the paused sender
 * still gets packets through; in a deadlock (a cyclic buffer dependency) nothing arrives, each
 * pause would expire and leak a few packets. Switch MMUs refresh XOFF on a timer; here the
 * timer is the control plane's: a packet-out of EtherType ETHERTYPE_PFC_REFRESH for (port,
 * prio) every refresh interval runs the same accounting as an arrival from that port (new
 * generation when due, resume at XON) without being counted, re-sends the pause while the
 * port is paused and above XON, and is then dropped. */
#ifndef _FABRIC_PFC_P4_
#define _FABRIC_PFC_P4_

#include "headers.p4"

/* Shared by ingress (count, pause) and egress (uncount, resume); index port * 8 + prio. */
register<bit<32>>(NUM_PORT_PRIOS) pfc_buffered;      /* both generations */
register<bit<32>>(NUM_PORT_PRIOS) pfc_buffered_old;  /* the previous generation's part */
register<bit<16>>(NUM_PORT_PRIOS) pfc_epoch;         /* current generation number */
register<bit<48>>(NUM_PORT_PRIOS) pfc_epoch_start;   /* when it began (us) */
register<bit<1>>(NUM_PORT_PRIOS) pfc_paused;
register<bit<48>>(NUM_PORT_PRIOS) pfc_last_pause;

control PfcIngress(inout fabric_metadata_t meta,
                   in standard_metadata_t standard_metadata,
                   in bool is_refresh) {

    /* Pause frames sent, by ingress port * 8 + priority. */
    counter(NUM_PORT_PRIOS, CounterType.packets) pfc_pauses_sent;

    bit<8>  enable_mask = 0;
    bit<16> xoff = 0;
    bit<32> refresh = 0;
    bit<32> stale = 0;

    /* Thresholds in packets buffered from this port at one priority; quanta of 512 bit
     * times in the pause frame; refresh and stale time in microseconds (stale 0 = never
     * forget a counted packet). */
    action set_pfc_port(bit<8> enable_mask_value, bit<16> xoff_pkts, bit<16> xon_pkts,
                        bit<16> pause_quanta, bit<32> refresh_us, bit<32> stale_us) {
        enable_mask = enable_mask_value;
        xoff = xoff_pkts;
        meta.pfc_xon = xon_pkts;
        meta.pfc_quanta = pause_quanta;
        refresh = refresh_us;
        stale = stale_us;
    }

    table pfc_port {
        key = {
            standard_metadata.ingress_port: exact;
        }
        actions = {
            set_pfc_port;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = NUM_PORTS;
    }

    apply {
        if (pfc_port.apply().hit) {
            if (((enable_mask >> meta.prio) & 1) == 1) {
                bit<32> index = (bit<32>)standard_metadata.ingress_port * 8 + (bit<32>)meta.prio;
                bit<48> now = standard_metadata.ingress_global_timestamp;
                bit<32> buffered;
                bit<32> old;
                bit<16> epoch;
                bit<48> start;
                pfc_buffered.read(buffered, index);
                pfc_buffered_old.read(old, index);
                pfc_epoch.read(epoch, index);
                pfc_epoch_start.read(start, index);
                bit<48> age = now - start;
                if (stale != 0 && age >= (bit<48>)stale) {
                    /* New generation: what the older one still counts is lost. */
                    if (age - (bit<48>)stale >= (bit<48>)stale) {
                        buffered = 0;
                    } else {
                        buffered = buffered - old;
                    }
                    epoch = epoch + 1;
                    pfc_epoch.write(index, epoch);
                    pfc_epoch_start.write(index, now);
                    pfc_buffered_old.write(index, buffered);
                }
                if (!is_refresh) {
                    buffered = buffered + 1;
                    meta.pfc_counted = 1;
                    meta.pfc_epoch = epoch;
                }
                pfc_buffered.write(index, buffered);
                bit<1> paused;
                pfc_paused.read(paused, index);
                /* A refresh tick keeps a paused port paused until it falls to XON (the XOFF
                 * state of an MMU), and comes once per interval: it always re-pauses. */
                if (buffered >= (bit<32>)xoff
                        || (is_refresh && paused == 1 && buffered > (bit<32>)meta.pfc_xon)) {
                    bit<48> last;
                    pfc_last_pause.read(last, index);
                    if (is_refresh || paused == 0 || now - last >= (bit<48>)refresh) {
                        pfc_paused.write(index, 1);
                        pfc_last_pause.write(index, now);
                        meta.clone_kind = CLONE_PFC;
                        meta.pfc_pause = 1;
                        pfc_pauses_sent.count(index);
                    }
                } else if (paused == 1 && buffered <= (bit<32>)meta.pfc_xon) {
                    /* Forgetting lost packets brought the count to XON: resume now. */
                    pfc_paused.write(index, 0);
                    meta.clone_kind = CLONE_PFC;
                    meta.pfc_pause = 0;
                }
            }
        }
    }
}

control PfcEgress(inout headers_t hdr,
                  inout fabric_metadata_t meta,
                  inout standard_metadata_t standard_metadata,
                  in bool is_pfc_clone) {

    /* Resume frames sent, by ingress port * 8 + priority. */
    counter(NUM_PORT_PRIOS, CounterType.packets) pfc_resumes_sent;

    apply {
        if (is_pfc_clone) {
            /* Turn the clone into a PFC frame for its priority. */
            hdr.packet_in.setInvalid();
            hdr.report_ethernet.setInvalid();
            hdr.report_ipv4.setInvalid();
            hdr.report_udp.setInvalid();
            hdr.report.setInvalid();
            hdr.ipv4.setInvalid();
            hdr.udp.setInvalid();
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
            hdr.bth.setInvalid();
            hdr.pfc_refresh.setInvalid();
            hdr.ethernet.setValid();
            hdr.ethernet.dst_addr = PFC_DST_MAC;
            hdr.ethernet.src_addr = meta.port_mac;
            hdr.ethernet.ether_type = ETHERTYPE_MAC_CONTROL;
            hdr.pfc.setValid();
            hdr.pfc.opcode = PFC_OPCODE;
            hdr.pfc._reserved = 0;
            hdr.pfc.class_enable = (bit<8>)1 << meta.prio;
            hdr.pfc.time0 = 0;
            hdr.pfc.time1 = 0;
            hdr.pfc.time2 = 0;
            hdr.pfc.time3 = 0;
            hdr.pfc.time4 = 0;
            hdr.pfc.time5 = 0;
            hdr.pfc.time6 = 0;
            hdr.pfc.time7 = 0;
            if (meta.pfc_pause == 1) {
                if (meta.prio == 0) {
                    hdr.pfc.time0 = meta.pfc_quanta;
                } else if (meta.prio == 1) {
                    hdr.pfc.time1 = meta.pfc_quanta;
                } else if (meta.prio == 2) {
                    hdr.pfc.time2 = meta.pfc_quanta;
                } else if (meta.prio == 3) {
                    hdr.pfc.time3 = meta.pfc_quanta;
                } else if (meta.prio == 4) {
                    hdr.pfc.time4 = meta.pfc_quanta;
                } else if (meta.prio == 5) {
                    hdr.pfc.time5 = meta.pfc_quanta;
                } else if (meta.prio == 6) {
                    hdr.pfc.time6 = meta.pfc_quanta;
                } else {
                    hdr.pfc.time7 = meta.pfc_quanta;
                }
            } else {
                /* Resumes come from egress (count fell to XON) or from ingress (lost
                 * packets forgotten); both are counted here, where the frame is made. */
                pfc_resumes_sent.count((bit<32>)meta.ingress_port * 8 + (bit<32>)meta.prio);
            }
            hdr.pfc_pad.setValid();
            hdr.pfc_pad.zeros = 0;
            /* Drop whatever payload the cloned packet carried. */
            truncate(PFC_FRAME_BYTES);
        } else if (meta.pfc_counted == 1) {
            /* Uncount the packet from the generation that counted it; nothing if that
             * generation has been forgotten (the packet was taken as lost). */
            bit<32> index = (bit<32>)meta.ingress_port * 8 + (bit<32>)meta.prio;
            bit<32> buffered;
            bit<32> old;
            bit<16> epoch;
            pfc_buffered.read(buffered, index);
            pfc_buffered_old.read(old, index);
            pfc_epoch.read(epoch, index);
            bool uncounted = false;
            if (meta.pfc_epoch == epoch) {
                if (buffered > old) {
                    uncounted = true;
                }
            } else if (meta.pfc_epoch == epoch - 1) {
                if (old > 0) {
                    pfc_buffered_old.write(index, old - 1);
                    uncounted = true;
                }
            }
            if (uncounted) {
                buffered = buffered - 1;
                pfc_buffered.write(index, buffered);
                if (buffered <= (bit<32>)meta.pfc_xon) {
                    bit<1> paused;
                    pfc_paused.read(paused, index);
                    if (paused == 1) {
                        pfc_paused.write(index, 0);
                        meta.clone_kind = CLONE_PFC;
                        meta.pfc_pause = 0;
                        bit<32> pfc_session = PFC_SESSION_BASE + (bit<32>)meta.ingress_port;
                        clone_preserving_field_list(CloneType.E2E, pfc_session, CLONE_FIELD_LIST);
                    }
                }
            }
        }
    }
}

#endif
