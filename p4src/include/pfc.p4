/* PFC-style pause generation (IEEE 802.1Qbb), per ingress port and priority.
 *
 * Ingress counts every forwarded packet of a PFC-enabled priority as buffered for its
 * (ingress port, priority); egress uncounts it when it leaves. When the count reaches XOFF
 * the switch pauses that priority on the ingress port: an ingress-to-egress clone to
 * session PFC_SESSION_BASE + port, which egress turns into a PFC frame (pause time =
 * quanta). While still at or above XOFF it repeats the pause every refresh interval. When
 * the count falls to XON or below, egress sends a resume (time 0) by an egress-to-egress
 * clone to the same session. Received MAC control frames are dropped by FabricIngress. */
#ifndef _FABRIC_PFC_P4_
#define _FABRIC_PFC_P4_

#include "headers.p4"

/* Shared by ingress (count, pause) and egress (uncount, resume); index port * 8 + prio. */
register<bit<32>>(NUM_PORT_PRIOS) pfc_buffered;
register<bit<1>>(NUM_PORT_PRIOS) pfc_paused;
register<bit<48>>(NUM_PORT_PRIOS) pfc_last_pause;

control PfcIngress(inout fabric_metadata_t meta,
                   in standard_metadata_t standard_metadata) {

    /* Pause frames sent, by ingress port * 8 + priority. */
    counter(NUM_PORT_PRIOS, CounterType.packets) pfc_pauses_sent;

    bit<8>  enable_mask = 0;
    bit<16> xoff = 0;
    bit<32> refresh = 0;

    /* Thresholds in packets buffered from this port at one priority; quanta of 512 bit
     * times in the pause frame; refresh in microseconds. */
    action set_pfc_port(bit<8> enable_mask_value, bit<16> xoff_pkts, bit<16> xon_pkts,
                        bit<16> pause_quanta, bit<32> refresh_us) {
        enable_mask = enable_mask_value;
        xoff = xoff_pkts;
        meta.pfc_xon = xon_pkts;
        meta.pfc_quanta = pause_quanta;
        refresh = refresh_us;
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
                bit<32> buffered;
                pfc_buffered.read(buffered, index);
                buffered = buffered + 1;
                pfc_buffered.write(index, buffered);
                meta.pfc_counted = 1;
                if (buffered >= (bit<32>)xoff) {
                    bit<1> paused;
                    bit<48> last;
                    pfc_paused.read(paused, index);
                    pfc_last_pause.read(last, index);
                    bit<48> now = standard_metadata.ingress_global_timestamp;
                    if (paused == 0 || now - last >= (bit<48>)refresh) {
                        pfc_paused.write(index, 1);
                        pfc_last_pause.write(index, now);
                        meta.clone_kind = CLONE_PFC;
                        meta.pfc_pause = 1;
                        pfc_pauses_sent.count(index);
                    }
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
            }
            hdr.pfc_pad.setValid();
            hdr.pfc_pad.zeros = 0;
            /* Drop whatever payload the cloned packet carried. */
            truncate(PFC_FRAME_BYTES);
        } else if (meta.pfc_counted == 1) {
            bit<32> index = (bit<32>)meta.ingress_port * 8 + (bit<32>)meta.prio;
            bit<32> buffered;
            pfc_buffered.read(buffered, index);
            if (buffered > 0) {
                buffered = buffered - 1;
            }
            pfc_buffered.write(index, buffered);
            if (buffered <= (bit<32>)meta.pfc_xon) {
                bit<1> paused;
                pfc_paused.read(paused, index);
                if (paused == 1) {
                    pfc_paused.write(index, 0);
                    meta.clone_kind = CLONE_PFC;
                    meta.pfc_pause = 0;
                    pfc_resumes_sent.count(index);
                    bit<32> pfc_session = PFC_SESSION_BASE + (bit<32>)meta.ingress_port;
                    clone_preserving_field_list(CloneType.E2E, pfc_session, CLONE_FIELD_LIST);
                }
            }
        }
    }
}

#endif
