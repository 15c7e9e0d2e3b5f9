/* fabric.p4: leaf/spine switch of an AI-cluster RoCEv2 fabric, for v1model.
 *
 * L3 forwarding with ECMP / E-ECMP, flowlet DLB and per-packet spraying; traffic classes;
 * RED-style ECN marking; INT-MD source/transit/sink with telemetry reports; PFC pause
 * generation; counters. Compiles with `p4c --target bmv2 --arch v1model fabric.p4`.
 * The control-plane contract (tables, registers, counters, clone sessions, units) is
 * p4src/README.md. */
#include <core.p4>
#include <v1model.p4>

#include "include/defines.p4"
#include "include/headers.p4"
#include "include/parser.p4"
#include "include/checksum.p4"
#include "include/port_load.p4"
#include "include/acl.p4"
#include "include/classify.p4"
#include "include/routing.p4"
#include "include/dlb.p4"
#include "include/spray.p4"
#include "include/ecn.p4"
#include "include/int.p4"
#include "include/pfc.p4"
#include "include/counters.p4"

control FabricIngress(inout headers_t hdr,
                      inout fabric_metadata_t meta,
                      inout standard_metadata_t standard_metadata) {

    Acl() acl;
    Classify() classify;
    Routing() routing;
    Dlb() dlb;
    Spray() spray;
    NextHop() next_hop;
    IntIngress() int_ingress;
    PfcIngress() pfc;
    IngressCounters() counters;

    /* The units the target's timestamps and INT queue occupancy count in (p4src/README.md,
     * "Target options"): the DRE period shift for that timestamp unit, and the INT-MD ds_flags
     * and time scale that tell the NIC the units of the hop records. */
    action set_time_unit(bit<8> dre_shift, bit<16> int_ds_flags, bit<16> int_time_scale) {
        meta.dre_shift = dre_shift;
        meta.int_ds_flags = int_ds_flags;
        meta.int_time_scale = int_time_scale;
    }

    /* Keyless: its default action, microseconds and queue depth in packets (BMv2) until the
     * control plane says otherwise. */
    table time_unit {
        actions = {
            set_time_unit;
        }
        default_action = set_time_unit(DRE_SHIFT, 0, 0);
    }

    apply {
        bit<48> now = standard_metadata.ingress_global_timestamp;
        meta.ingress_port = standard_metadata.ingress_port;
        meta.ingress_tstamp = now;
        time_unit.apply();
        /* PFC runs once, after the branches (BMv2 applies each table from one place only):
         * for a routed packet, or for a refresh tick (which is not counted). */
        bool pfc_arrival = false;
        bool pfc_refresh = false;

        if (hdr.packet_out.isValid()) {
            if (hdr.pfc_refresh.isValid()) {
                /* The control plane's PFC refresh tick for (the port it names, prio): the
                 * pause path of an arrival from that port, not counted; the tick itself goes
                 * nowhere. */
                standard_metadata.ingress_port = hdr.packet_out.egress_port;
                meta.ingress_port = hdr.packet_out.egress_port;
                meta.prio = hdr.pfc_refresh.prio;
                meta.port_mac = hdr.ethernet.dst_addr;
                pfc_refresh = true;
                mark_to_drop(standard_metadata);
            } else {
                /* From the controller: straight out of the port it names. */
                standard_metadata.egress_spec = hdr.packet_out.egress_port;
                meta.out_port = hdr.packet_out.egress_port;
            }
            hdr.packet_out.setInvalid();
        } else {
            if (standard_metadata.parser_error != error.NoError) {
                meta.drop_reason = DROP_MALFORMED;
            } else if (hdr.ipv4.isValid() && hdr.ipv4.ihl != 5) {
                meta.drop_reason = DROP_MALFORMED;
            } else if (standard_metadata.checksum_error == 1) {
                meta.drop_reason = DROP_CHECKSUM;
            } else if (hdr.pfc.isValid()) {
                meta.drop_reason = DROP_MAC_CONTROL;
            } else {
                acl.apply(hdr, meta, standard_metadata);
                if (meta.drop_reason == 0 && meta.to_cpu == 0) {
                    if (!hdr.ipv4.isValid()) {
                        meta.drop_reason = DROP_NOT_IPV4;
                    } else if (hdr.ipv4.ttl <= 1) {
                        meta.drop_reason = DROP_TTL;
                    } else {
                        meta.port_mac = hdr.ethernet.dst_addr;
                        classify.apply(hdr, meta, standard_metadata);
                        routing.apply(hdr, meta, standard_metadata);
                        if (meta.routed == 1) {
                            if (meta.lb_mode == LB_DLB) {
                                dlb.apply(hdr, meta, now);
                            } else if (meta.lb_mode != LB_ECMP) {
                                spray.apply(meta, now);
                            }
                            next_hop.apply(hdr, meta, standard_metadata);
                            int_ingress.apply(hdr, meta, standard_metadata);
                            pfc_arrival = true;
                        }
                    }
                }
            }
            if (meta.to_cpu == 1 && meta.drop_reason == 0) {
                standard_metadata.egress_spec = CPU_PORT;
                meta.out_port = CPU_PORT;
            } else if (meta.drop_reason != 0 || meta.routed == 0) {
                mark_to_drop(standard_metadata);
            }
            counters.apply(meta, standard_metadata);
        }
        if (pfc_arrival || pfc_refresh) {
            pfc.apply(meta, standard_metadata, pfc_refresh);
        }
        if (meta.drop_reason == 0) {
            if (meta.clone_kind == CLONE_PFC) {
                /* The session id is computed into a variable first: every p4c version
                 * passes a plain variable to BMv2's clone primitive. */
                bit<32> pfc_session = PFC_SESSION_BASE + (bit<32>)standard_metadata.ingress_port;
                clone_preserving_field_list(CloneType.I2E, pfc_session, CLONE_FIELD_LIST);
            } else if (meta.clone_kind == CLONE_INT_REPORT) {
                clone_preserving_field_list(CloneType.I2E, INT_REPORT_SESSION,
                    CLONE_FIELD_LIST);
            }
        }
    }
}

control FabricEgress(inout headers_t hdr,
                     inout fabric_metadata_t meta,
                     inout standard_metadata_t standard_metadata) {

    IntEgress() int_egress;
    Ecn() ecn;
    PfcEgress() pfc;
    PortLoadEgress() port_load;
    EgressCounters() counters;

    apply {
        bool is_clone = standard_metadata.instance_type == INSTANCE_INGRESS_CLONE
                     || standard_metadata.instance_type == INSTANCE_EGRESS_CLONE;
        bool is_pfc_clone = is_clone && meta.clone_kind == CLONE_PFC;
        bool is_report = standard_metadata.instance_type == INSTANCE_INGRESS_CLONE
                      && meta.clone_kind == CLONE_INT_REPORT;
        bool keep = true;

        if (is_clone && !is_pfc_clone && !is_report) {
            mark_to_drop(standard_metadata);
            keep = false;
        } else {
            if (standard_metadata.egress_port == CPU_PORT) {
                /* Punted packets, and INT reports when the collector is the controller. */
                hdr.packet_in.setValid();
                hdr.packet_in.ingress_port = meta.ingress_port;
                hdr.packet_in._pad = 0;
            }
            bool cpu_io = !is_clone && (standard_metadata.egress_port == CPU_PORT
                                        || meta.ingress_port == CPU_PORT);
            if (!cpu_io) {
                if (!is_clone) {
                    meta.out_port = standard_metadata.egress_port;
                }
                if (!is_pfc_clone) {
                    int_egress.apply(hdr, meta, standard_metadata, is_report);
                }
                if (!is_clone) {
                    ecn.apply(hdr, meta, standard_metadata);
                }
                pfc.apply(hdr, meta, standard_metadata, is_pfc_clone);
            }
        }
        if (keep && meta.drop_reason == 0) {
            port_load.apply(hdr, meta, standard_metadata);
            counters.apply(meta, standard_metadata);
        }
    }
}

V1Switch(FabricParser(),
         FabricVerifyChecksum(),
         FabricIngress(),
         FabricEgress(),
         FabricComputeChecksum(),
         FabricDeparser()) main;
