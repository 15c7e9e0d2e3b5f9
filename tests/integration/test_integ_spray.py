"""Packet spraying meets the transport: fabric.p4 sprays one queue pair's packets round robin
over two uplinks whose paths differ in delay, so they reach the receiving NIC out of order.
A selective-repeat NIC places them with no resend; a Go-Back-N NIC NAKs and resends. That
is why the fabric sprays only traffic whose NICs reassemble (the mission's claim, shown on
the real P4 program and the real transport).

Topology: A --1[leaf]3,4== two paths to B, the one via port 4 one packet slower; B's ACKs
come back into the leaf on port 3.
"""

from __future__ import annotations

from nicmodel import Nic, QpConfig, Reliability
from nicmodel.verbs import WcStatus
from p4rt.entries import Exact, Lpm, Ternary

MAC_A, MAC_B = "02:00:00:00:00:0a", "02:00:00:00:00:0b"
LEAF_MAC = {1: "02:00:00:00:01:01", 3: "02:00:00:00:01:03", 4: "02:00:00:00:01:04"}
IP_A, IP_B = 0x0A000101, 0x0A000202
GROUP, SPRAY_RR = 1, 2
PACKETS = 16
MTU = 1024
GAP_NS = 1_000  # longer than a packet's serialization (86 ns): the sender has paused


def mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def spraying_leaf(make_switch):
    sw = make_switch()
    sw.route(IP_A, 1, mac(LEAF_MAC[1]), mac(MAC_A))
    sw.add("FabricIngress.routing.routing_v4", {"hdr.ipv4.dst_addr": Lpm(IP_B, 32)},
           "FabricIngress.routing.set_nh_group", {"group_id": GROUP})
    for port in (3, 4):  # both paths end at B (the spines on them only forward)
        sw.add("FabricIngress.next_hop.next_hop_mac", {"standard_metadata.egress_spec": Exact(port)},
               "FabricIngress.next_hop.set_next_hop_macs",
               {"src_mac": int.from_bytes(mac(LEAF_MAC[port]), "big"),
                "dst_mac": int.from_bytes(mac(MAC_B), "big")})
    sw.add("FabricIngress.routing.lb_group", {"meta.nh_group": Exact(GROUP)},
           "FabricIngress.routing.set_lb_members",
           {"count": 2, "port0": 3, "port1": 4, **{f"port{i}": 0 for i in range(2, 8)}})
    sw.add("FabricIngress.routing.lb_mode", {"meta.nh_group": Ternary(GROUP, 0xFFFF)},
           "FabricIngress.routing.set_lb_mode", {"mode": SPRAY_RR, "hash_qp": 0, "flowlet_timeout_us": 0},
           priority=10)
    return sw


def transfer(sw, reliability: Reliability):
    """One WRITE of PACKETS packets from A to B through the leaf; the path via port 4 delivers
    each packet after the next one of port 3. Returns both NICs, A's QP, what left on each
    uplink, and whether B's memory holds the data."""
    a, b = Nic(MAC_A, "10.0.1.1"), Nic(MAC_B, "10.0.2.2")
    cfg = QpConfig(mtu=MTU, reliability=reliability)
    qa, qb = a.create_qp(cfg), b.create_qp(cfg)
    qa.connect(LEAF_MAC[1], "10.0.2.2", qb.qpn, 0)
    qb.connect(LEAF_MAC[3], "10.0.1.1", qa.qpn, 0)
    data = bytes(range(256)) * (PACKETS * MTU // 256)
    src, dst = a.register_mr(bytearray(data)), b.register_mr(bytearray(len(data)))
    qa.post_write(wr_id=1, mr=src, offset=0, length=len(data), remote_addr=dst.addr, rkey=dst.rkey)
    uplinks: dict[int, int] = {3: 0, 4: 0}
    slow: list[bytes] = []  # on the longer path
    now = 0
    done = []
    for _ in range(10_000):
        moved = False
        while (f := a.poll_transmit(now)) is not None:
            moved = True
            for port, out in sw.forward(1, f, now // 1000):
                uplinks[port] += 1
                if port == 4:
                    slow.append(out)
                    continue
                b.receive(out, now)
                if slow:  # the slow path delivers after the next fast packet
                    b.receive(slow.pop(0), now)
        while (f := b.poll_transmit(now)) is not None:
            moved = True
            for _, out in sw.forward(3, f, now // 1000):
                a.receive(out, now)
        done += a.poll_cq()
        if done:
            break
        if not moved:
            wakes = [t for t in (a.next_wakeup(now), b.next_wakeup(now)) if t is not None]
            assert wakes or slow, "both NICs idle before the WRITE completed"
            if slow and (not wakes or min(wakes) > now + GAP_NS):  # no fast packet follows: drain
                b.receive(slow.pop(0), now)
                continue
            now = max(now + 1, min(wakes))
    assert [c.status for c in done] == [WcStatus.SUCCESS]
    return a, b, qa, uplinks, bytes(dst.buf) == data


def test_selective_repeat_reassembles_sprayed_packets_without_resends(make_switch):
    a, b, qa, uplinks, intact = transfer(spraying_leaf(make_switch), Reliability.SELECTIVE_REPEAT)
    assert uplinks == {3: PACKETS // 2, 4: PACKETS // 2}  # round robin, exactly
    assert intact
    rx = next(iter(b.qps)).counters
    assert rx.out_of_order_received >= PACKETS // 2 - 1  # the slow path's packets came late
    assert qa.counters.retransmitted_pkts == 0 and qa.counters.timeouts == 0


def test_go_back_n_resends_sprayed_packets(make_switch):
    a, b, qa, uplinks, intact = transfer(spraying_leaf(make_switch), Reliability.GO_BACK_N)
    assert intact  # it gets there, but
    assert uplinks[3] > PACKETS // 2 and uplinks[4] > PACKETS // 2  # at the cost of resends
    assert qa.counters.retransmitted_pkts > 0 and qa.counters.naks_received > 0
    assert next(iter(b.qps)).counters.out_of_order_dropped > 0
