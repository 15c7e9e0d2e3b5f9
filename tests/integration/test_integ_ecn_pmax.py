"""ECN proportionality: between Kmin and Kmax fabric.p4 marks ECT packets with probability
Pmax * (depth - Kmin) / (Kmax - Kmin), so the CE rate over many packets at one fixed enqueue
depth must sit near that figure. The bounds (about 4.5 standard deviations of a binomial
with n = 2000) would fail if the program ignored Pmax (marking everything, or rising to 1.0 at
Kmax) or ignored the depth. The pipeline's random generator is seeded (V1Pipeline seed=0 in
the shared FabricSwitch), so the counts are the same on every run.
"""

from __future__ import annotations

import pytest
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from nicmodel import roce
from p4rt.entries import Exact

SW_MAC = "02:00:00:00:01:01"
IP_A, IP_B = "10.0.1.1", "10.0.2.2"
OUT_PORT, DSCP_ROCE, PRIO_ROCE = 2, 26, 3
KMIN, KMAX, PMAX = 10, 30, 0.2
N = 2000


def switch(make_switch):
    sw = make_switch()
    sw.route(0x0A000202, OUT_PORT, bytes.fromhex("020000000102"), bytes.fromhex("02000000b002"))
    sw.classify_dscp(DSCP_ROCE, PRIO_ROCE)
    sw.add("FabricEgress.ecn.ecn_thresholds",
           {"standard_metadata.egress_port": Exact(OUT_PORT), "meta.prio": Exact(PRIO_ROCE)},
           "FabricEgress.ecn.set_ecn_thresholds",
           {"kmin_pkts": KMIN, "kmax_pkts": KMAX, "pmax_scaled": round(PMAX * 65536)})
    return sw


def roce_frame(ecn: int) -> bytes:
    """An RDMA WRITE-only packet (BTH opcode 10) of the RoCE class with the given ECN bits."""
    return bytes(Ether(src="02:00:00:00:a0:01", dst=SW_MAC)
                 / IP(src=IP_A, dst=IP_B, tos=(DSCP_ROCE << 2) | ecn)
                 / UDP(sport=49152, dport=4791) / BTH(opcode=10, dqpn=0x11, psn=1)
                 / Raw(bytes(64)))


def ce_rate(sw, depth: int, ecn: int = roce.ECN_ECT0) -> float:
    frame = roce_frame(ecn)
    marked = 0
    for i in range(N):
        (port, out), = sw.forward(1, frame, 10 * i, qdepth=depth)
        assert port == OUT_PORT
        assert out[15] & 3 in (ecn, roce.ECN_CE)
        marked += out[15] & 3 == roce.ECN_CE
    counted = sw.prog.counters["FabricEgress.ecn.ecn_marks"].read(OUT_PORT * 8 + PRIO_ROCE).packets
    assert counted == marked  # the mark counter agrees with the packets on the wire
    return marked / N


@pytest.mark.parametrize("depth, low, high", [
    (20, 0.07, 0.13),   # Pmax * 10/20 = 0.10
    (29, 0.15, 0.23),   # Pmax * 19/20 = 0.19
])
def test_ce_rate_is_pmax_proportional(make_switch, depth, low, high):
    assert low <= ce_rate(switch(make_switch), depth) <= high


def test_ect1_marked_at_the_same_rate(make_switch):
    assert 0.07 <= ce_rate(switch(make_switch), 20, roce.ECN_ECT1) <= 0.13

