/* Egress port load, measured at egress and read at ingress by DLB and spraying (and by INT
 * for the egress tx byte counter). The registers are declared at top level so both
 * pipelines reach them (simple_switch shares them; p4c accepts top-level instances). */
#ifndef _FABRIC_PORT_LOAD_P4_
#define _FABRIC_PORT_LOAD_P4_

#include "headers.p4"

/* Queue depth (packets) seen by the last packet dequeued on the port. */
register<bit<19>>(NUM_PORTS) port_qdepth;
/* Cumulative bytes sent on the port (wraps at 2^32): INT egress_tx_bytes. */
register<bit<32>>(NUM_PORTS) port_tx_bytes;
/* Bytes queued on the port behind the packet being dequeued: kept by a target that offers
 * it (our switch's --queue-bytes-register port_queue_bytes, p4src/README.md "Target
 * options"); it stays 0 on BMv2, and INT reports it only when the control plane says the
 * target keeps it (INT_DS_QUEUE_BYTES). */
register<bit<32>>(NUM_PORTS) port_queue_bytes;
/* Discounting rate estimator: recent bytes, halved every 2^dre_shift timestamp ticks. */
register<bit<32>>(NUM_PORTS) port_dre_bytes;
register<bit<48>>(NUM_PORTS) port_dre_time;

/* Length of the frame this egress pass transmits. v1model's packet_length at egress is the
 * length the switch received, so what the pipeline added or removed is added here: INT
 * bytes (source, transit hop, sink strip: all reflected in the IPv4 total length), the
 * PacketOut header a frame from the CPU came with, the PacketIn header in front of a
 * frame to the CPU. Generated frames are cut to a known size: PFC frames to
 * PFC_FRAME_BYTES, INT reports right after their own IPv4 packet (int.p4). */
control TxFrameLength(in headers_t hdr,
                      in fabric_metadata_t meta,
                      in standard_metadata_t standard_metadata,
                      out bit<32> length) {
    apply {
        if (hdr.pfc.isValid()) {
            length = PFC_FRAME_BYTES;
        } else if (hdr.report.isValid()) {
            length = ETHERNET_BYTES + (bit<32>)hdr.report_ipv4.total_len;
        } else {
            length = standard_metadata.packet_length;
            if (hdr.ipv4.isValid()) {
                length = length + (bit<32>)hdr.ipv4.total_len - (bit<32>)meta.rx_ipv4_len;
            }
            if (meta.ingress_port == CPU_PORT) {
                length = length - CPU_HEADER_BYTES;
            }
        }
        if (hdr.packet_in.isValid()) {
            length = length + CPU_HEADER_BYTES;
        }
    }
}

/* Updates the port's load registers with the frame leaving on it (its transmitted length:
 * INT egress_tx_bytes is what the link carried, as a NIC or link counter sees it). */
control PortLoadEgress(in headers_t hdr,
                       in fabric_metadata_t meta,
                       in standard_metadata_t standard_metadata) {
    TxFrameLength() tx_frame_length;

    apply {
        bit<32> length;
        tx_frame_length.apply(hdr, meta, standard_metadata, length);
        bit<32> index = (bit<32>)standard_metadata.egress_port;
        bit<48> now = standard_metadata.egress_global_timestamp;
        bit<32> tx;
        port_tx_bytes.read(tx, index);
        port_tx_bytes.write(index, tx + length);
        port_qdepth.write(index, standard_metadata.deq_qdepth);

        bit<32> recent;
        bit<48> since;
        port_dre_bytes.read(recent, index);
        port_dre_time.read(since, index);
        bit<48> periods = (now - since) >> meta.dre_shift;
        if (periods >= 32) {
            recent = 0;
        } else {
            recent = recent >> (bit<8>)periods;
        }
        if (periods != 0) {
            port_dre_time.write(index, now);
        }
        port_dre_bytes.write(index, recent + length);
    }
}

/* Load of one port as ingress sees it (lower is better): queued packets weigh 1 KiB each,
 * plus the recent byte estimate discounted to now. */
control PortQuality(in bit<9> port, in bit<48> now, in bit<8> dre_shift, out bit<48> quality) {
    apply {
        bit<32> index = (bit<32>)port;
        bit<19> qdepth;
        bit<32> recent;
        bit<48> since;
        port_qdepth.read(qdepth, index);
        port_dre_bytes.read(recent, index);
        port_dre_time.read(since, index);
        /* Egress may have stamped the register after this packet arrived. */
        bit<48> periods = 0;
        if (now > since) {
            periods = (now - since) >> dre_shift;
        }
        if (periods >= 32) {
            recent = 0;
        } else {
            recent = recent >> (bit<8>)periods;
        }
        quality = ((bit<48>)qdepth << 10) + (bit<48>)recent;
    }
}

/* Port of member `index` of the group in `lb`. */
control LbMemberPort(in lb_members_t lb, in bit<8> index, out bit<9> port) {
    apply {
        if (index == 0) {
            port = lb.port0;
        } else if (index == 1) {
            port = lb.port1;
        } else if (index == 2) {
            port = lb.port2;
        } else if (index == 3) {
            port = lb.port3;
        } else if (index == 4) {
            port = lb.port4;
        } else if (index == 5) {
            port = lb.port5;
        } else if (index == 6) {
            port = lb.port6;
        } else {
            port = lb.port7;
        }
    }
}

#endif
