"""Writes the STF tests of fabric.p4 (``p4src/tests/*.stf``).

Expected frames are built with scapy and ``ptf_tests/fabric/fabric_packets.py`` from what the
control-plane contract (p4src/README.md) and INT_LAYOUT.md say, not from the P4 code, so the
STF files check the program against the documents. ``*`` nibbles stand for values the STF
clock decides (timestamps). Entries of tables with ternary keys carry an explicit priority
(in STF the larger wins): p4c's BMv2 STF driver turns an ``add`` into ``table_add`` and BMv2
refuses a ternary entry without one. Run ``python p4src/tests/make_stf.py`` after changing a test.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scapy.layers.inet import IP, UDP, IPOption_NOP  # noqa: E402
from scapy.layers.l2 import ARP, Ether  # noqa: E402

from ptf_tests.fabric.fabric_packets import (  # noqa: E402
    ECT0,
    OP_ACK,
    OP_CNP,
    Hop,
    IntStack,
    pfc,
    report,
    roce,
    routed,
    udp,
    with_int,
)

HERE = Path(__file__).resolve().parent
SW_MAC = "02:00:00:00:00:01"      # the switch's MAC, as hosts address it
H = {p: f"00:00:00:00:0{p}:0{p}" for p in range(1, 6)}   # neighbour on port p
PORT_MAC = {p: f"02:00:00:00:00:0{p}" for p in range(1, 6)}
CPU = 255

ROUTE = "FabricIngress.routing.routing_v4"
NEXT_HOP = "FabricIngress.next_hop.next_hop_mac"
CLASSIFY = "FabricIngress.classify.classify"


def hexs(frame: bytes) -> str:
    return frame.hex().upper()


def mac_int(mac: str) -> str:
    return "0x" + mac.replace(":", "")


def next_hops(ports: list[int]) -> list[str]:
    return [f"add {NEXT_HOP} standard_metadata.egress_spec:{p} "
            f"FabricIngress.next_hop.set_next_hop_macs(src_mac:{mac_int(PORT_MAC[p])}, dst_mac:{mac_int(H[p])})"
            for p in ports]


def fwd(frame: bytes, port: int, ecn: int | None = None) -> bytes:
    return routed(frame, PORT_MAC[port], H[port], ecn)


def wild(frame: bytes, spans: list[tuple[int, int]]) -> str:
    """Hex of ``frame`` with the byte ranges [start, end) as ``*``."""
    h = list(hexs(frame))
    for start, end in spans:
        for i in range(2 * start, 2 * end):
            h[i] = "*"
    return "".join(h)


def routing() -> str:
    ok = udp(dst_ip="10.0.2.2")
    wide = udp(dst_ip="10.0.9.9")
    bad_sum = bytearray(udp(dst_ip="10.0.2.2"))
    bad_sum[24] ^= 0xFF
    arp = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=H[1]) / ARP(psrc="10.0.1.1", pdst="10.0.1.254"))
    pause = pfc(H[1], 3, 0xFFFF)
    options = bytes(Ether(src=H[1], dst=SW_MAC) / IP(src="10.0.1.1", dst="10.0.2.2", options=[IPOption_NOP()] * 4)
                    / UDP(sport=1, dport=2) / b"options")
    out_frame = udp(dst_ip="10.0.3.3", src_mac=PORT_MAC[3], dst_mac=H[3])
    short_roce = roce(dst_ip="10.0.2.2", payload=b"")[:14 + 20 + 8 + 6]
    bad_int = bytearray(with_int(roce(dst_ip="10.0.2.2"), IntStack(4, [Hop(1, 1, 2)])))
    bad_int[14 + 20 + 8 + 1] = 5     # shim length: 3 + 8 x hops only
    lines = [
        "# L3: longest prefix match, next-hop MACs, TTL, checksum; drops with their reasons;",
        "# ACL punt to the CPU port (PacketIn header), PacketOut from the CPU port.",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000200/24 FabricIngress.routing.route_to_port(port:2)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000000/16 FabricIngress.routing.route_to_port(port:3)",
        *next_hops([2, 3]),
        f"packet 1 {hexs(ok)}",
        f"expect 2 {hexs(fwd(ok, 2))}$",
        f"packet 1 {hexs(wide)}",
        f"expect 3 {hexs(fwd(wide, 3))}$",
        "# no route, TTL 1, bad IPv4 checksum, a received PFC frame, ARP without ACL, IPv4",
        "# options: dropped",
        f"packet 1 {hexs(udp(dst_ip='10.1.0.1'))}",
        f"packet 1 {hexs(udp(dst_ip='10.0.2.2', ttl=1))}",
        f"packet 1 {hexs(bytes(bad_sum))}",
        f"packet 1 {hexs(pause)}",
        f"packet 1 {hexs(arp)}",
        f"packet 1 {hexs(options)}",
        "# malformed: RoCE cut inside its BTH; INT shim length not 3 + 8 x hops",
        f"packet 1 {hexs(short_roce)}",
        f"packet 1 {hexs(bad_int)}",
        "check_counter FabricIngress.counters.drop_reasons(1) packets == 3",
        "check_counter FabricIngress.counters.drop_reasons(6) packets == 1",
        "check_counter FabricIngress.counters.drop_reasons(5) packets == 1",
        "check_counter FabricIngress.counters.drop_reasons(2) packets == 1",
        "check_counter FabricIngress.counters.drop_reasons(3) packets == 1",
        "check_counter FabricIngress.counters.drop_reasons(4) packets == 1",
        "check_counter FabricIngress.counters.rx_port(1) packets == 10",
        "# ARP punted: PacketIn header (ingress_port 1 in 9 bits, 7 bits pad) + the frame",
        "add FabricIngress.acl.acl 10 hdr.ethernet.ether_type:0x0806 FabricIngress.acl.punt_to_cpu()",
        f"packet 1 {hexs(arp)}",
        f"expect {CPU} {(1 << 7):04X}{hexs(arp)}$",
        "# PacketOut: header egress_port 3, the frame leaves port 3 as it is",
        f"packet {CPU} {(3 << 7):04X}{hexs(out_frame)}",
        f"expect 3 {hexs(out_frame)}$",
    ]
    return "\n".join(lines) + "\n"


def ecn() -> str:
    lines = [
        "# ECN: Kmax 0 marks every ECT packet (queue depth 0 >= Kmax); Not-ECT never;",
        "# below Kmin nothing is marked.",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000202/32 FabricIngress.routing.route_to_port(port:2)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000303/32 FabricIngress.routing.route_to_port(port:3)",
        *next_hops([2, 3]),
        "add FabricEgress.ecn.ecn_thresholds standard_metadata.egress_port:2 meta.prio:0 "
        "FabricEgress.ecn.set_ecn_thresholds(kmin_pkts:0, kmax_pkts:0, pmax_scaled:0)",
        "add FabricEgress.ecn.ecn_thresholds standard_metadata.egress_port:3 meta.prio:0 "
        "FabricEgress.ecn.set_ecn_thresholds(kmin_pkts:5, kmax_pkts:10, pmax_scaled:65536)",
    ]
    for code in (1, 2, 0, 3):
        pkt = udp(dst_ip="10.0.2.2", ecn=code)
        want = 3 if code in (1, 2) else code
        lines += [f"packet 1 {hexs(pkt)}", f"expect 2 {hexs(fwd(pkt, 2, want))}$"]
    pkt = udp(dst_ip="10.0.3.3", ecn=ECT0)
    lines += [f"packet 1 {hexs(pkt)}", f"expect 3 {hexs(fwd(pkt, 3))}$",
              "check_counter FabricEgress.ecn.ecn_marks(16) packets == 2",
              "check_counter FabricEgress.ecn.ecn_marks(24) packets == 0"]
    return "\n".join(lines) + "\n"


def classify() -> str:
    data = roce(dst_ip="10.0.2.2", dscp=26)
    cnp = roce(dst_ip="10.0.2.2", dscp=48, opcode=OP_CNP)
    other = udp(dst_ip="10.0.2.2")
    lines = [
        "# Classes: DSCP 26 -> priority 3; RoCE CNP (BTH opcode 0x81) -> 6; the rest 0. The",
        "# priority is the egress queue: tx_queue counts by egress port * 8 + priority.",
        f"add {CLASSIFY} 10 hdr.ipv4.dscp:0x1A&&&0x3F FabricIngress.classify.set_priority(priority:3)",
        f"add {CLASSIFY} 20 meta.is_roce:0b1 meta.bth_opcode:0x81 FabricIngress.classify.set_priority(priority:6)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000202/32 FabricIngress.routing.route_to_port(port:2)",
        *next_hops([2]),
    ]
    for pkt in (data, cnp, other):
        lines += [f"packet 1 {hexs(pkt)}", f"expect 2 {hexs(fwd(pkt, 2))}$"]
    lines += ["check_counter FabricEgress.counters.tx_queue(19) packets == 1",
              "check_counter FabricEgress.counters.tx_queue(22) packets == 1",
              "check_counter FabricEgress.counters.tx_queue(16) packets == 1"]
    return "\n".join(lines) + "\n"


def spray() -> str:
    lines = [
        "# Round-robin spraying over 3 members: packets 1..7 go to ports 2, 3, 4, 2, 3, 4, 2.",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000200/24 FabricIngress.routing.set_nh_group(group_id:5)",
        "add FabricIngress.routing.lb_mode 10 meta.nh_group:0x0005 "
        "FabricIngress.routing.set_lb_mode(mode:2, hash_qp:0, flowlet_timeout_us:0)",
        "add FabricIngress.routing.lb_group meta.nh_group:5 FabricIngress.routing.set_lb_members("
        "count:3, port0:2, port1:3, port2:4, port3:0, port4:0, port5:0, port6:0, port7:0)",
        *next_hops([2, 3, 4]),
    ]
    for i in range(7):
        pkt = roce(psn=i)
        port = (2, 3, 4)[i % 3]
        lines += [f"packet 1 {hexs(pkt)}", f"expect {port} {hexs(fwd(pkt, port))}$"]
    lines += ["check_counter FabricIngress.counters.lb_choices(18) packets == 3",   # port 2, mode 2
              "check_counter FabricIngress.counters.lb_choices(26) packets == 2",
              "check_counter FabricIngress.counters.lb_choices(34) packets == 2"]
    return "\n".join(lines) + "\n"


def pfc_test() -> str:
    data = roce(dst_ip="10.0.2.2", dst_mac=SW_MAC)
    best_effort = udp(dst_ip="10.0.2.2", dst_mac=SW_MAC)
    lines = [
        "# PFC with XOFF 1 / XON 0 on port 1 for priority 3: a RoCE data packet (DSCP 26 ->",
        "# priority 3) makes the switch pause priority 3 towards port 1 (clone session 257) and,",
        "# once it has left, resume it. Priority 0 traffic is not PFC-enabled: no frames.",
        f"add {CLASSIFY} 10 hdr.ipv4.dscp:0x1A&&&0x3F FabricIngress.classify.set_priority(priority:3)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000202/32 FabricIngress.routing.route_to_port(port:2)",
        *next_hops([2]),
        "add FabricIngress.pfc.pfc_port standard_metadata.ingress_port:1 FabricIngress.pfc.set_pfc_port("
        "enable_mask_value:0x08, xoff_pkts:1, xon_pkts:0, pause_quanta:0xFFFF, refresh_us:1000000, stale_us:0)",
        "mirroring_add 257 1",
        f"packet 1 {hexs(data)}",
        f"expect 2 {hexs(fwd(data, 2))}$",
        f"expect 1 {hexs(pfc(SW_MAC, 3, 0xFFFF))}$",
        f"expect 1 {hexs(pfc(SW_MAC, 3, 0))}$",
        f"packet 1 {hexs(best_effort)}",
        f"expect 2 {hexs(fwd(best_effort, 2))}$",
        "check_counter FabricIngress.pfc.pfc_pauses_sent(11) packets == 1",
        "check_counter FabricEgress.pfc.pfc_resumes_sent(11) packets == 1",
        "register_read pfc_buffered 11 0",
        "register_read pfc_paused 11 0",
        "# a pause and a resume left port 1: 60 bytes each",
        "register_read port_tx_bytes 1 120",
    ]
    return "\n".join(lines) + "\n"


def tx_bytes() -> str:
    """port_tx_bytes (INT egress_tx_bytes) counts each frame as it leaves the port: with the INT
    bytes this switch added or stripped, without the PacketOut header, with the PacketIn header,
    and generated reports at their cut length."""
    rate = 100000
    first = roce(dst_ip="10.0.2.2", dscp=26, payload=b"\x00" * 1000)
    second = roce(dst_ip="10.0.2.2", dscp=26, psn=1, payload=b"\x00" * 1000)
    hop1 = Hop(0x11, 1, 2, queue_id=3, egress_tx_bytes=0, egress_link_rate=rate)
    out1 = with_int(fwd(first, 2), IntStack(4, [hop1]))
    hop2 = Hop(0x11, 1, 2, queue_id=3, egress_tx_bytes=len(out1), egress_link_rate=rate)
    out2 = with_int(fwd(second, 2), IntStack(4, [hop2]))
    plain = udp(dst_ip="10.0.2.2")
    out_frame = udp(dst_ip="10.0.2.2", src_mac=PORT_MAC[2], dst_mac=H[2])
    port2 = len(out1) + len(out2) + len(plain) + len(out_frame)
    # sink in report mode on port 3, collector on port 4
    upstream = [Hop(0x22, 3, 1, 5, 3, 2, 50, 55, 7000, rate)]
    base = roce(src_ip="10.0.1.9", dst_ip="10.0.3.3", dscp=26, payload=b"\x00" * 500)
    arriving = with_int(base, IntStack(4, upstream))
    stripped = fwd(base, 3)
    inner = with_int(base, IntStack(3, [Hop(0x11, 1, 3, queue_id=3, egress_link_rate=rate)] + upstream))
    rep = report(inner[:14 + 20 + 8 + 16 + 2 * 32 + 12], hop_count=2, switch_id=0x11, seq_no=0, ingress_tstamp=0,
                 src_mac=PORT_MAC[4], dst_mac=H[4], src_ip="10.0.0.1", dst_ip="10.0.4.4")
    outer = 14 + 20 + 8
    hop = outer + 16 + 14 + 20 + 8 + 16
    arp = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=H[1]) / ARP(psrc="10.0.1.1", pdst="10.0.1.254"))
    lines = [
        "# port_tx_bytes grows by each transmitted frame's length: INT source + hop (+48 bytes),",
        "# the next packet's hop carries the first one's transmitted length; a PacketOut counts",
        "# without its header, a punted frame with its PacketIn header; a report-mode sink counts",
        "# the stripped frame on the host port and the cut report on the collector port.",
        f"add {CLASSIFY} 10 hdr.ipv4.dscp:0x1A&&&0x3F FabricIngress.classify.set_priority(priority:3)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000202/32 FabricIngress.routing.route_to_port(port:2)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000303/32 FabricIngress.routing.route_to_port(port:3)",
        *next_hops([2, 3]),
        "add FabricIngress.int_ingress.int_watchlist 10 hdr.ipv4.src_addr:0x0A000101&&&0xFFFFFFFF "
        "FabricIngress.int_ingress.int_source(max_hops:5)",
        "add FabricIngress.int_ingress.int_sink standard_metadata.egress_spec:3 "
        "FabricIngress.int_ingress.int_sink_report()",
        *[f"add FabricEgress.int_egress.int_transit_port meta.out_port:{p} "
          f"FabricEgress.int_egress.int_transit(switch_id_value:0x11, link_rate_mbps:{rate})" for p in (2, 3)],
        "setdefault FabricEgress.int_egress.int_report_encap FabricEgress.int_egress.set_report_encap("
        f"src_mac:{mac_int(PORT_MAC[4])}, dst_mac:{mac_int(H[4])}, src_ip:0x0A000001, dst_ip:0x0A000404, "
        "udp_dport:32766, switch_id_value:0x11)",
        "mirroring_add 1 4",
        "add FabricIngress.acl.acl 10 hdr.ethernet.ether_type:0x0806 FabricIngress.acl.punt_to_cpu()",
        f"packet 1 {hexs(first)}",
        f"expect 2 {wild(out1, _time_spans(14 + 20 + 8 + 16, 1))}$",
        f"packet 1 {hexs(second)}",
        f"expect 2 {wild(out2, _time_spans(14 + 20 + 8 + 16, 1))}$",
        f"packet 1 {hexs(plain)}",
        f"expect 2 {hexs(fwd(plain, 2))}$",
        f"packet {CPU} {(2 << 7):04X}{hexs(out_frame)}",
        f"expect 2 {hexs(out_frame)}$",
        f"register_read port_tx_bytes 2 {port2}",
        f"packet 1 {hexs(arriving)}",
        f"expect 3 {hexs(stripped)}$",
        f"expect 4 {wild(rep, [(outer + 12, outer + 16), (hop + 8, hop + 12), (hop + 16, hop + 28)])}$",
        f"register_read port_tx_bytes 3 {len(stripped)}",
        f"register_read port_tx_bytes 4 {len(rep)}",
        f"packet 1 {hexs(arp)}",
        f"expect {CPU} {(1 << 7):04X}{hexs(arp)}$",
        f"register_read port_tx_bytes {CPU} {2 + len(arp)}",
    ]
    return "\n".join(lines) + "\n"


def _lb_setup(group: int, mode: int, ports: list[int], timeout_us: int = 0) -> list[str]:
    members = ", ".join(f"port{i}:{ports[i] if i < len(ports) else 0}" for i in range(8))
    return [
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000200/24 FabricIngress.routing.set_nh_group(group_id:{group})",
        f"add FabricIngress.routing.lb_mode 10 meta.nh_group:0x{group:04X} "
        f"FabricIngress.routing.set_lb_mode(mode:{mode}, hash_qp:0, flowlet_timeout_us:{timeout_us})",
        f"add FabricIngress.routing.lb_group meta.nh_group:{group} "
        f"FabricIngress.routing.set_lb_members(count:{len(ports)}, {members})",
        *next_hops(ports),
    ]


def dlb() -> str:
    lines = [
        "# DLB: port load is read from the registers egress writes (here written by the test):",
        "# a new flow takes the less loaded member (port 2), keeps it while packets are 1 us",
        "# apart even when port 2 becomes loaded, and moves to port 3 after a 1 s gap (> the",
        "# 100 us flowlet timeout), where it stays.",
        *_lb_setup(6, 1, [2, 3], timeout_us=100),
        "register_write port_qdepth 3 10",
    ]
    for psn in range(3):
        pkt = roce(psn=psn)
        lines += [f"packet 1 {hexs(pkt)}", f"expect 2 {hexs(fwd(pkt, 2))}$"]
        if psn == 0:
            lines.append("register_write port_qdepth 2 50")
    lines.append("register_write port_qdepth 2 50")
    lines.append("wait")
    for psn in range(3, 6):
        pkt = roce(psn=psn)
        lines += [f"packet 1 {hexs(pkt)}", f"expect 3 {hexs(fwd(pkt, 3))}$"]
    lines += ["check_counter FabricIngress.counters.lb_choices(17) packets == 3",   # port 2, mode 1
              "check_counter FabricIngress.counters.lb_choices(25) packets == 3"]
    return "\n".join(lines) + "\n"


def spray_best_of_two() -> str:
    lines = [
        "# Best-of-two spraying over 2 members compares both: each packet takes the port with",
        "# the lower load (queue depth registers written by the test; a packet leaving a port",
        "# records that port's depth, 0 here).",
        *_lb_setup(7, 4, [2, 3]),
        "register_write port_qdepth 2 20",
    ]
    for psn, port in ((0, 3), (1, 3)):
        pkt = roce(psn=psn)
        lines += [f"packet 1 {hexs(pkt)}", f"expect {port} {hexs(fwd(pkt, port))}$"]
    lines.append("register_write port_qdepth 3 40")
    for psn, port in ((2, 2), (3, 2)):
        pkt = roce(psn=psn)
        lines += [f"packet 1 {hexs(pkt)}", f"expect {port} {hexs(fwd(pkt, port))}$"]
    return "\n".join(lines) + "\n"


def lb_by_class() -> str:
    """lb_mode picks the mode per class (priority) and per destination (next-hop group):
    RoCE data (priority 3) to group 5 is sprayed, priority 0 to group 5 stays on ECMP (the
    default mode), and group 6 is sprayed whatever the class."""
    roce_pkts = [roce(dst_ip="10.0.2.2", dscp=26, psn=n) for n in range(4)]
    best_effort = udp(dst_ip="10.0.2.2")
    to_group6 = [udp(dst_ip="10.0.3.3", sport=1234 + n) for n in range(3)]
    lines = [
        "# Load-balancing mode by class and by destination (lb_mode: nh_group, prio). Group 5",
        "# (10.0.2.0/24, members 2, 3): an entry for priority 3 sprays round robin, so",
        "# consecutive packets of one RoCE flow (DSCP 26 -> priority 3) alternate 2, 3, 2, 3;",
        "# priority 0 has no entry and stays on ECMP (the default mode): this file writes no",
        "# ECMP selector group (STF cannot, on BMv2 either), so ECMP drops it as 'no member'",
        "# (reason 7) instead of spraying it; tests/p4src/test_fabric_stf.py adds the group and",
        "# checks that one priority-0 flow stays on one uplink. Group 6 (10.0.3.0/24, members",
        "# 4, 5): a destination entry with the class wildcarded sprays priority 0 too: 4, 5, 4.",
        f"add {CLASSIFY} 10 hdr.ipv4.dscp:0x1A&&&0x3F FabricIngress.classify.set_priority(priority:3)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000200/24 FabricIngress.routing.set_nh_group(group_id:5)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000300/24 FabricIngress.routing.set_nh_group(group_id:6)",
        "add FabricIngress.routing.lb_mode 20 meta.nh_group:0x0005&&&0xFFFF meta.prio:0x3&&&0x7 "
        "FabricIngress.routing.set_lb_mode(mode:2, hash_qp:0, flowlet_timeout_us:0)",
        "add FabricIngress.routing.lb_mode 10 meta.nh_group:0x0006&&&0xFFFF "
        "FabricIngress.routing.set_lb_mode(mode:2, hash_qp:0, flowlet_timeout_us:0)",
        *[f"add FabricIngress.routing.lb_group meta.nh_group:{group} FabricIngress.routing.set_lb_members("
          f"count:2, port0:{a}, port1:{b}, port2:0, port3:0, port4:0, port5:0, port6:0, port7:0)"
          for group, a, b in ((5, 2, 3), (6, 4, 5))],
        *next_hops([2, 3, 4, 5]),
    ]
    for n, pkt in enumerate(roce_pkts):
        port = (2, 3)[n % 2]
        lines += [f"packet 1 {hexs(pkt)}", f"expect {port} {hexs(fwd(pkt, port))}$"]
    lines += [f"packet 1 {hexs(best_effort)}"] * 3
    for n, pkt in enumerate(to_group6):
        port = (4, 5)[n % 2]
        lines += [f"packet 1 {hexs(pkt)}", f"expect {port} {hexs(fwd(pkt, port))}$"]
    lines += ["check_counter FabricIngress.counters.drop_reasons(7) packets == 3",
              "check_counter FabricIngress.counters.lb_choices(18) packets == 2",   # port 2, mode 2
              "check_counter FabricIngress.counters.lb_choices(26) packets == 2",
              "check_counter FabricIngress.counters.lb_choices(34) packets == 2",
              "check_counter FabricIngress.counters.lb_choices(42) packets == 1"]
    return "\n".join(lines) + "\n"


# Offsets of the hop fields that hold STF-clock times (hop latency, ingress/egress timestamp).
def _time_spans(first_hop: int, nhops: int) -> list[tuple[int, int]]:
    spans = []
    for i in range(nhops):
        h = first_hop + 32 * i
        spans += [(h + 8, h + 12), (h + 16, h + 24)]
    return spans


def int_source_transit() -> str:
    plain = roce(dst_ip="10.0.2.2", dscp=26)
    second = roce(dst_ip="10.0.2.2", dscp=26, psn=1)
    ack = roce(src_ip="10.0.1.1", dst_ip="10.0.2.2", opcode=OP_ACK, dscp=26)
    other = roce(src_ip="10.0.1.9", dst_ip="10.0.2.2", dscp=26)
    rate = 100000
    # egress_tx_bytes: the bytes port 2 transmitted before this packet (frames with their INT)
    hop1 = Hop(0x11, 1, 2, queue_id=3, egress_tx_bytes=0, egress_link_rate=rate)
    out1 = with_int(fwd(plain, 2), IntStack(4, [hop1]))
    hop2 = Hop(0x11, 1, 2, queue_id=3, egress_tx_bytes=len(out1), egress_link_rate=rate)
    out2 = with_int(fwd(second, 2), IntStack(4, [hop2]))
    first_hop = 14 + 20 + 8 + 16
    # transit: a packet that already has one hop from switch 0x10 gets a second, newest first
    upstream = Hop(0x10, 3, 1, 7, 3, 9, 100, 107, 5000, rate)
    arriving = with_int(roce(src_ip="10.0.3.3", dst_ip="10.0.2.2", dscp=26), IntStack(4, [upstream]))
    sent_before = sum(len(f) for f in (out1, out2, ack, other))   # bytes out of port 2 so far
    transit_hop = Hop(0x11, 1, 2, queue_id=3, egress_tx_bytes=sent_before, egress_link_rate=rate)
    transit_out = with_int(fwd(roce(src_ip="10.0.3.3", dst_ip="10.0.2.2", dscp=26), 2),
                           IntStack(3, [transit_hop, upstream]))
    # no hops left: the e bit is set, no hop added
    full = with_int(roce(src_ip="10.0.3.3", dst_ip="10.0.2.2", dscp=26, psn=2), IntStack(0, [upstream]))
    full_out = with_int(fwd(roce(src_ip="10.0.3.3", dst_ip="10.0.2.2", dscp=26, psn=2), 2),
                        IntStack(0, [upstream], e=1))
    lines = [
        "# INT source and transit (INT_LAYOUT.md): a watched RoCE WRITE gets shim + INT-MD + this",
        "# switch's hop (UDP dport 4792, lengths, checksum); ACKs and unwatched flows do not;",
        "# an INT packet gets a second hop, newest first; with no hops left only the e bit is set.",
        f"add {CLASSIFY} 10 hdr.ipv4.dscp:0x1A&&&0x3F FabricIngress.classify.set_priority(priority:3)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000202/32 FabricIngress.routing.route_to_port(port:2)",
        *next_hops([2]),
        "add FabricIngress.int_ingress.int_watchlist 10 hdr.ipv4.src_addr:0x0A000101&&&0xFFFFFFFF "
        "FabricIngress.int_ingress.int_source(max_hops:5)",
        "add FabricEgress.int_egress.int_transit_port meta.out_port:2 "
        f"FabricEgress.int_egress.int_transit(switch_id_value:0x11, link_rate_mbps:{rate})",
        f"packet 1 {hexs(plain)}",
        f"expect 2 {wild(out1, _time_spans(first_hop, 1))}$",
        f"packet 1 {hexs(second)}",
        f"expect 2 {wild(out2, _time_spans(first_hop, 1))}$",
        f"packet 1 {hexs(ack)}",
        f"expect 2 {hexs(fwd(ack, 2))}$",
        f"packet 1 {hexs(other)}",
        f"expect 2 {hexs(fwd(other, 2))}$",
        f"packet 1 {hexs(arriving)}",
        f"expect 2 {wild(transit_out, _time_spans(first_hop, 1))}$",
        f"packet 1 {hexs(full)}",
        f"expect 2 {hexs(full_out)}$",
    ]
    return "\n".join(lines) + "\n"


def int_mtu() -> str:
    """INT never grows a packet past its egress port's IP MTU (int_port_mtu): the source leaves
    a packet uninstrumented when the INT header and its hop would not fit, a transit sets the
    M bit instead of adding a hop; both counted (int_source_mtu_skips, int_transit_mtu_skips).
    A port without an MTU entry has no limit."""
    rate, mtu = 100000, 1500
    bth = 20 + 8 + 12 + 4                               # IPv4, UDP, BTH and ICRC around the payload

    def sized(ip_len: int, psn: int, dst: str = "10.0.2.2") -> bytes:
        return roce(dst_ip=dst, dscp=26, psn=psn, payload=bytes(ip_len - bth))

    small = sized(200, 0)
    exact = sized(mtu - 48, 1)                          # + shim/INT-MD 16 + hop 32 = the MTU
    large = sized(mtu - 47, 2)                          # one byte too many: no INT
    upstream = Hop(0x10, 3, 1, 7, 3, 9, 100, 107, 5000, rate)
    transit_fits = with_int(sized(mtu - 48 - 32, 3), IntStack(4, [upstream]))   # its hop just fits
    transit_full = with_int(sized(mtu - 48 - 31, 4), IntStack(4, [upstream]))   # no room for a hop
    no_limit = sized(mtu + 100, 5, dst="10.0.3.3")     # port 3 has no MTU entry
    first_hop = 14 + 20 + 8 + 16
    sent = 0                                            # port 2's egress_tx_bytes so far

    def instrumented(frame: bytes, port: int, stack_hops: list[Hop], remaining: int) -> bytes:
        return with_int(fwd(frame, port), IntStack(remaining, stack_hops))

    out_small = instrumented(small, 2, [Hop(0x11, 1, 2, queue_id=3, egress_link_rate=rate)], 4)
    sent += len(out_small)
    out_exact = instrumented(exact, 2, [Hop(0x11, 1, 2, queue_id=3, egress_tx_bytes=sent, egress_link_rate=rate)], 4)
    sent += len(out_exact)
    out_large = fwd(large, 2)
    sent += len(out_large)
    fits_hop = Hop(0x11, 1, 2, queue_id=3, egress_tx_bytes=sent, egress_link_rate=rate)
    plain_fits = sized(mtu - 48 - 32, 3)
    out_fits = with_int(fwd(plain_fits, 2), IntStack(3, [fits_hop, upstream]))
    out_full = with_int(fwd(sized(mtu - 48 - 31, 4), 2), IntStack(4, [upstream], m=1))
    out_no_limit = instrumented(no_limit, 3, [Hop(0x11, 1, 3, queue_id=3, egress_link_rate=rate)], 4)
    assert len(out_exact) - 14 == mtu and len(out_fits) - 14 == mtu and len(out_full) - 14 == mtu - 31
    lines = [
        "# INT and the MTU (int_port_mtu, port 2: IP MTU 1500). The source instruments a watched",
        "# packet only if its IPv4 total length + 16 (shim, INT-MD) + 32 (its hop) fits: 200 and",
        "# 1452 bytes get INT, 1453 bytes leave without it (counted). A transit adds its hop only",
        "# if + 32 fits: at 1468 it does, at 1469 the M bit is set instead (counted). Port 3 has",
        "# no MTU entry: no limit.",
        f"add {CLASSIFY} 10 hdr.ipv4.dscp:0x1A&&&0x3F FabricIngress.classify.set_priority(priority:3)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000202/32 FabricIngress.routing.route_to_port(port:2)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000303/32 FabricIngress.routing.route_to_port(port:3)",
        *next_hops([2, 3]),
        "add FabricIngress.int_ingress.int_watchlist 10 hdr.ipv4.src_addr:0x0A000101&&&0xFFFFFFFF "
        "FabricIngress.int_ingress.int_source(max_hops:5)",
        *[f"add FabricEgress.int_egress.int_transit_port meta.out_port:{p} "
          f"FabricEgress.int_egress.int_transit(switch_id_value:0x11, link_rate_mbps:{rate})" for p in (2, 3)],
        f"add FabricIngress.int_ingress.int_port_mtu standard_metadata.egress_spec:2 "
        f"FabricIngress.int_ingress.set_int_mtu(ip_mtu:{mtu})",
        f"packet 1 {hexs(small)}",
        f"expect 2 {wild(out_small, _time_spans(first_hop, 1))}$",
        f"packet 1 {hexs(exact)}",
        f"expect 2 {wild(out_exact, _time_spans(first_hop, 1))}$",
        f"packet 1 {hexs(large)}",
        f"expect 2 {hexs(out_large)}$",
        f"packet 1 {hexs(transit_fits)}",
        f"expect 2 {wild(out_fits, _time_spans(first_hop, 1))}$",
        f"packet 1 {hexs(transit_full)}",
        f"expect 2 {hexs(out_full)}$",
        f"packet 1 {hexs(no_limit)}",
        f"expect 3 {wild(out_no_limit, _time_spans(first_hop, 1))}$",
        "check_counter FabricIngress.int_ingress.int_source_mtu_skips(2) packets == 1",
        "check_counter FabricEgress.int_egress.int_transit_mtu_skips(2) packets == 1",
        "check_counter FabricIngress.int_ingress.int_source_mtu_skips(3) packets == 0",
        "check_counter FabricEgress.int_egress.int_transit_mtu_skips(3) packets == 0",
    ]
    return "\n".join(lines) + "\n"


def int_sink() -> str:
    rate = 100000
    upstream = [Hop(0x22, 3, 1, 5, 3, 2, 50, 55, 7000, rate), Hop(0x21, 1, 4, 4, 3, 1, 40, 44, 6000, rate)]
    base = roce(src_ip="10.0.1.1", dst_ip="10.0.2.2", dscp=26, dst_mac=SW_MAC)
    arriving = with_int(base, IntStack(3, upstream))
    stripped = fwd(base, 2)
    sink_hop = Hop(0x33, 1, 2, queue_id=3, egress_link_rate=rate)
    inner = with_int(base, IntStack(2, [sink_hop] + upstream))[:14 + 20 + 8 + 16 + 3 * 32 + 12]
    rep = report(inner, hop_count=3, switch_id=0x33, seq_no=0, ingress_tstamp=0, src_mac=PORT_MAC[4],
                 dst_mac=H[4], src_ip="10.0.0.1", dst_ip="10.0.4.4")
    rep_cpu = report(inner, hop_count=3, switch_id=0x33, seq_no=1, ingress_tstamp=0, src_mac=PORT_MAC[4],
                     dst_mac=H[4], src_ip="10.0.0.1", dst_ip="10.0.4.4")
    outer = 14 + 20 + 8
    first_hop = outer + 16 + 14 + 20 + 8 + 16
    # report header ingress timestamp; sink hop times and tx bytes (clone order decides them)
    spans = [(outer + 12, outer + 16), (first_hop + 8, first_hop + 12), (first_hop + 16, first_hop + 28)]
    host_base = roce(src_ip="10.0.1.1", dst_ip="10.0.3.3", dscp=26, dst_mac=SW_MAC)
    to_host_in = with_int(host_base, IntStack(3, upstream))
    host_hop = Hop(0x33, 1, 3, queue_id=3, egress_link_rate=rate)
    to_host_out = with_int(fwd(host_base, 3), IntStack(2, [host_hop] + upstream))
    lines = [
        "# INT sink. Port 2 (report mode): the host gets the packet without INT (UDP dport 4791,",
        "# lengths restored) and the collector on port 4 (clone session 1) a report: outer",
        "# Ethernet/IPv4/UDP 32766, 16-byte report header, the received frame with the sink's hop",
        "# pushed, cut after the BTH. Port 3 (to-host mode, HPCC): INT kept with the sink's hop.",
        f"add {CLASSIFY} 10 hdr.ipv4.dscp:0x1A&&&0x3F FabricIngress.classify.set_priority(priority:3)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000202/32 FabricIngress.routing.route_to_port(port:2)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000303/32 FabricIngress.routing.route_to_port(port:3)",
        *next_hops([2, 3]),
        "add FabricIngress.int_ingress.int_sink standard_metadata.egress_spec:2 "
        "FabricIngress.int_ingress.int_sink_report()",
        "add FabricIngress.int_ingress.int_sink standard_metadata.egress_spec:3 "
        "FabricIngress.int_ingress.int_sink_to_host()",
        "add FabricEgress.int_egress.int_transit_port meta.out_port:2 "
        f"FabricEgress.int_egress.int_transit(switch_id_value:0x33, link_rate_mbps:{rate})",
        "add FabricEgress.int_egress.int_transit_port meta.out_port:3 "
        f"FabricEgress.int_egress.int_transit(switch_id_value:0x33, link_rate_mbps:{rate})",
        "setdefault FabricEgress.int_egress.int_report_encap FabricEgress.int_egress.set_report_encap("
        f"src_mac:{mac_int(PORT_MAC[4])}, dst_mac:{mac_int(H[4])}, src_ip:0x0A000001, dst_ip:0x0A000404, "
        "udp_dport:32766, switch_id_value:0x33)",
        "mirroring_add 1 4",
        f"packet 1 {hexs(arriving)}",
        f"expect 2 {hexs(stripped)}$",
        f"expect 4 {wild(rep, spans)}$",
        f"packet 1 {hexs(to_host_in)}",
        f"expect 3 {wild(to_host_out, _time_spans(14 + 20 + 8 + 16, 1))}$",
        "# the controller as collector: reports come as PacketIn (ingress port 1), seq_no 1",
        f"mirroring_add 1 {CPU}",
        f"packet 1 {hexs(arriving)}",
        f"expect 2 {hexs(stripped)}$",
        f"expect {CPU} {(1 << 7):04X}{wild(rep_cpu, spans)}$",
        "check_counter FabricEgress.int_egress.int_reports(2) packets == 2",
        "register_read FabricEgress.int_egress.int_report_seq 0 2",
    ]
    return "\n".join(lines) + "\n"


def int_sink_both() -> str:
    """The combined sink (HPCC with telemetry): the host gets the INT with the sink's hop, the
    collector the same report as in report mode, first on port 4, then on the CPU port."""
    rate = 100000
    upstream = [Hop(0x22, 3, 1, 5, 3, 2, 50, 55, 7000, rate), Hop(0x21, 1, 4, 4, 3, 1, 40, 44, 6000, rate)]
    bases = [roce(src_ip="10.0.1.1", dst_ip="10.0.3.3", dscp=26, dst_mac=SW_MAC, psn=n) for n in (0, 1)]
    arriving = [with_int(b, IntStack(3, upstream)) for b in bases]
    # egress_tx_bytes of port 3: the first packet counted as transmitted (with the sink's hop)
    hops = [Hop(0x33, 1, 3, queue_id=3, egress_tx_bytes=sent, egress_link_rate=rate)
            for sent in (0, len(arriving[0]) + 32)]
    to_host = [with_int(fwd(b, 3), IntStack(2, [h] + upstream)) for b, h in zip(bases, hops)]
    inners = [with_int(b, IntStack(2, [h] + upstream))[:14 + 20 + 8 + 16 + 3 * 32 + 12] for b, h in zip(bases, hops)]
    reps = [report(inner, hop_count=3, switch_id=0x33, seq_no=seq, ingress_tstamp=0, src_mac=PORT_MAC[4],
                   dst_mac=H[4], src_ip="10.0.0.1", dst_ip="10.0.4.4") for seq, inner in enumerate(inners)]
    outer = 14 + 20 + 8
    first_hop = outer + 16 + 14 + 20 + 8 + 16
    # report header ingress timestamp; sink hop times and tx bytes (clone order decides them)
    spans = [(outer + 12, outer + 16), (first_hop + 8, first_hop + 12), (first_hop + 16, first_hop + 28)]
    host_spans = _time_spans(14 + 20 + 8 + 16, 1)
    lines = [
        "# INT sink in to-host-and-report mode (port 3): the host gets the packet with its INT and",
        "# the sink's hop (HPCC echo) and the collector the report of report mode (outer",
        "# Ethernet/IPv4/UDP 32766, 16-byte report header, the received frame with the sink's hop,",
        "# cut after the BTH): on port 4, then on the CPU port as PacketIn (ingress port 1).",
        f"add {CLASSIFY} 10 hdr.ipv4.dscp:0x1A&&&0x3F FabricIngress.classify.set_priority(priority:3)",
        f"add {ROUTE} hdr.ipv4.dst_addr:0x0A000303/32 FabricIngress.routing.route_to_port(port:3)",
        *next_hops([3]),
        "add FabricIngress.int_ingress.int_sink standard_metadata.egress_spec:3 "
        "FabricIngress.int_ingress.int_sink_to_host_and_report()",
        "add FabricEgress.int_egress.int_transit_port meta.out_port:3 "
        f"FabricEgress.int_egress.int_transit(switch_id_value:0x33, link_rate_mbps:{rate})",
        "setdefault FabricEgress.int_egress.int_report_encap FabricEgress.int_egress.set_report_encap("
        f"src_mac:{mac_int(PORT_MAC[4])}, dst_mac:{mac_int(H[4])}, src_ip:0x0A000001, dst_ip:0x0A000404, "
        "udp_dport:32766, switch_id_value:0x33)",
        "mirroring_add 1 4",
        f"packet 1 {hexs(arriving[0])}",
        f"expect 3 {wild(to_host[0], host_spans)}$",
        f"expect 4 {wild(reps[0], spans)}$",
        f"mirroring_add 1 {CPU}",
        f"packet 1 {hexs(arriving[1])}",
        f"expect 3 {wild(to_host[1], host_spans)}$",
        f"expect {CPU} {(1 << 7):04X}{wild(reps[1], spans)}$",
        "check_counter FabricEgress.int_egress.int_reports(3) packets == 2",
        "register_read FabricEgress.int_egress.int_report_seq 0 2",
    ]
    return "\n".join(lines) + "\n"


def int_single_hop() -> str:
    """Source and sink on one switch (two hosts on one leaf): the switch produces the one hop,
    and each sink mode behaves as on a multi-hop path. Report mode (port 2): the host gets the
    plain packet, the collector a report with hop_count 1 whose inner frame is the packet as
    received with the INT the source added and this switch's hop. To-host mode (port 3): the
    packet keeps the INT with its one hop, no report. Both (port 5): the packet with its hop
    and the same report. Then the collector is the CPU port (PacketIn, seq_no 2); a flow off
    the watch list gets neither INT nor a report. Last, PFC and INT share the one
    ingress-to-egress clone and PFC wins: a packet whose arrival pauses its sender is forwarded
    with its hop but not reported (p4src/README.md, "INT report format")."""
    rate = 100000
    sw_id = 0x11
    outer = 14 + 20 + 8
    first_hop = 14 + 20 + 8 + 16
    inner_len = first_hop + 32 + 12
    report_hop = outer + 16 + first_hop
    # report header ingress timestamp; the hop's times and tx bytes (clone order decides them)
    report_spans = [(outer + 12, outer + 16), (report_hop + 8, report_hop + 12),
                    (report_hop + 16, report_hop + 28)]
    host_spans = _time_spans(first_hop, 1)

    def base(port: int, psn: int = 0) -> bytes:
        return roce(src_ip="10.0.1.1", dst_ip=f"10.0.{port}.{port}", dscp=26, dst_mac=SW_MAC, psn=psn)

    def rep(port: int, seq: int) -> bytes:
        inner = with_int(base(port), IntStack(4, [Hop(sw_id, 1, port, queue_id=3, egress_link_rate=rate)]))
        return report(inner[:inner_len], hop_count=1, switch_id=sw_id, seq_no=seq, ingress_tstamp=0,
                      src_mac=PORT_MAC[4], dst_mac=H[4], src_ip="10.0.0.1", dst_ip="10.0.4.4")

    def to_host(port: int, sent_before: int = 0) -> bytes:
        hop = Hop(sw_id, 1, port, queue_id=3, egress_tx_bytes=sent_before, egress_link_rate=rate)
        return with_int(fwd(base(port), port), IntStack(4, [hop]))

    unwatched = roce(src_ip="10.0.1.9", dst_ip="10.0.2.2", dscp=26, dst_mac=SW_MAC)
    modes = {2: "int_sink_report", 3: "int_sink_to_host", 5: "int_sink_to_host_and_report"}
    lines = [
        "# Single-hop INT: source and sink are this switch (hosts on ports 1, 2, 3, 5). Port 2",
        "# (report): the host gets the plain packet, the collector on port 4 a report, hop_count 1,",
        "# inner = the received frame with the source's INT and this switch's hop, cut after the",
        "# BTH. Port 3 (to host): INT with the one hop, no report. Port 5 (both): the packet with",
        "# its hop and the report. Collector on the CPU port: PacketIn (ingress port 1), seq_no 2.",
        "# An unwatched flow gets neither INT nor a report. A packet that pauses its sender (PFC)",
        "# is forwarded with its hop but loses its report (one ingress-to-egress clone per packet).",
        f"add {CLASSIFY} 10 hdr.ipv4.dscp:0x1A&&&0x3F FabricIngress.classify.set_priority(priority:3)",
        *[f"add {ROUTE} hdr.ipv4.dst_addr:0x0A00{p:02X}{p:02X}/32 FabricIngress.routing.route_to_port(port:{p})"
          for p in modes],
        *next_hops(list(modes)),
        "add FabricIngress.int_ingress.int_watchlist 10 hdr.ipv4.src_addr:0x0A000101&&&0xFFFFFFFF "
        "FabricIngress.int_ingress.int_source(max_hops:5)",
        *[f"add FabricIngress.int_ingress.int_sink standard_metadata.egress_spec:{p} "
          f"FabricIngress.int_ingress.{action}()" for p, action in modes.items()],
        *[f"add FabricEgress.int_egress.int_transit_port meta.out_port:{p} "
          f"FabricEgress.int_egress.int_transit(switch_id_value:0x{sw_id:X}, link_rate_mbps:{rate})" for p in modes],
        "setdefault FabricEgress.int_egress.int_report_encap FabricEgress.int_egress.set_report_encap("
        f"src_mac:{mac_int(PORT_MAC[4])}, dst_mac:{mac_int(H[4])}, src_ip:0x0A000001, dst_ip:0x0A000404, "
        f"udp_dport:32766, switch_id_value:0x{sw_id:X})",
        "mirroring_add 1 4",
        f"packet 1 {hexs(base(2))}",
        f"expect 2 {hexs(fwd(base(2), 2))}$",
        f"expect 4 {wild(rep(2, 0), report_spans)}$",
        f"packet 1 {hexs(base(3))}",
        f"expect 3 {wild(to_host(3), host_spans)}$",
        f"packet 1 {hexs(base(5))}",
        f"expect 5 {wild(to_host(5), host_spans)}$",
        f"expect 4 {wild(rep(5, 1), report_spans)}$",
        f"packet 1 {hexs(unwatched)}",
        f"expect 2 {hexs(fwd(unwatched, 2))}$",
        f"mirroring_add 1 {CPU}",
        f"packet 1 {hexs(base(2))}",
        f"expect 2 {hexs(fwd(base(2), 2))}$",
        f"expect {CPU} {(1 << 7):04X}{wild(rep(2, 2), report_spans)}$",
        "# PFC (XOFF 1 on port 1, session 257): the pause takes the clone, no report",
        "add FabricIngress.pfc.pfc_port standard_metadata.ingress_port:1 FabricIngress.pfc.set_pfc_port("
        "enable_mask_value:0x08, xoff_pkts:1, xon_pkts:0, pause_quanta:0xFFFF, refresh_us:1000000, stale_us:0)",
        "mirroring_add 257 1",
        f"packet 1 {hexs(base(5))}",
        f"expect 5 {wild(to_host(5, len(to_host(5))), host_spans)}$",
        f"expect 1 {hexs(pfc(SW_MAC, 3, 0xFFFF))}$",
        f"expect 1 {hexs(pfc(SW_MAC, 3, 0))}$",
        "check_counter FabricEgress.int_egress.int_reports(2) packets == 2",
        "check_counter FabricEgress.int_egress.int_reports(3) packets == 0",
        "check_counter FabricEgress.int_egress.int_reports(5) packets == 1",
        "register_read FabricEgress.int_egress.int_report_seq 0 3",
        "# transmitted lengths (port_tx_bytes): the plain frames on port 2, the frames with their",
        "# hop on port 5, the two reports at their cut length on port 4",
        f"register_read port_tx_bytes 2 {2 * len(fwd(base(2), 2)) + len(fwd(unwatched, 2))}",
        f"register_read port_tx_bytes 5 {2 * len(to_host(5))}",
        f"register_read port_tx_bytes 4 {len(rep(2, 0)) + len(rep(5, 1))}",
    ]
    return "\n".join(lines) + "\n"


TESTS = {
    "fabric_routing.stf": routing,
    "fabric_ecn.stf": ecn,
    "fabric_classify.stf": classify,
    "fabric_spray_rr.stf": spray,
    "fabric_spray_best2.stf": spray_best_of_two,
    "fabric_lb_class.stf": lb_by_class,
    "fabric_dlb.stf": dlb,
    "fabric_pfc.stf": pfc_test,
    "fabric_tx_bytes.stf": tx_bytes,
    "fabric_int_transit.stf": int_source_transit,
    "fabric_int_mtu.stf": int_mtu,
    "fabric_int_sink.stf": int_sink,
    "fabric_int_sink_both.stf": int_sink_both,
    "fabric_int_single_hop.stf": int_single_hop,
}


def main() -> None:
    for name, make in TESTS.items():
        (HERE / name).write_text(make())
        print("wrote", HERE / name)


if __name__ == "__main__":
    main()
