"""ECN agreement: fabric.p4's RED-style marking (run on our executor with chosen queue
depths) sets CE on the NIC model's RoCE data exactly as the README says; the receiving
``Nic`` answers CE with a CNP that fabric.p4 classifies into the high class and forwards
back, and the sender's DCQCN cuts its rate on it. The ICRC survives the mark (the TOS byte
is masked from it). Topology: A --1[switch]2-- B.
"""

from __future__ import annotations

from scapy.contrib.roce import BTH, CNPPadding
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether

from nicmodel import Nic, QpConfig, roce
from nicmodel.cc import create_cc
from nicmodel.nic import parse_ip
from p4rt.entries import Exact, Ternary

MAC_A = bytes.fromhex("02000000a001")
MAC_B = bytes.fromhex("02000000b002")
SW = {1: bytes.fromhex("020000000101"), 2: bytes.fromhex("020000000102")}
IP_A, IP_B = "10.0.1.1", "10.0.2.2"
DSCP_ROCE, PRIO_ROCE, PRIO_CONTROL = 26, 3, 6
KMIN, KMAX = 5, 20


def ip_int(ip: str) -> int:
    return int.from_bytes(parse_ip(ip), "big")


def leaf(make_switch):
    sw = make_switch()
    sw.route(ip_int(IP_B), 2, SW[2], MAC_B)
    sw.route(ip_int(IP_A), 1, SW[1], MAC_A)
    sw.classify_dscp(DSCP_ROCE, PRIO_ROCE)
    for opcode in (roce.Opcode.CNP, roce.Opcode.ACKNOWLEDGE):  # README: control traffic high
        sw.add("FabricIngress.classify.classify",
               {"meta.is_roce": Ternary(1, 1), "meta.bth_opcode": Ternary(opcode, 0xFF)},
               "FabricIngress.classify.set_priority", {"priority": PRIO_CONTROL}, priority=20)
    sw.add("FabricEgress.ecn.ecn_thresholds",
           {"standard_metadata.egress_port": Exact(2), "meta.prio": Exact(PRIO_ROCE)},
           "FabricEgress.ecn.set_ecn_thresholds",
           {"kmin_pkts": KMIN, "kmax_pkts": KMAX, "pmax_scaled": 13107})
    return sw


def pair(ecn: bool = True):
    a = Nic(MAC_A, IP_A, cnp_dscp=48)
    b = Nic(MAC_B, IP_B, cnp_dscp=48)
    cfg = dict(mtu=1024, dscp=DSCP_ROCE, priority=PRIO_ROCE, ecn=ecn)
    qa = a.create_qp(QpConfig(**cfg), cc=create_cc("dcqcn", 100e9))
    qb = b.create_qp(QpConfig(**cfg))
    qa.connect(SW[1], parse_ip(IP_B), qb.qpn, 0)
    qb.connect(SW[2], parse_ip(IP_A), qa.qpn, 0)
    src = a.register_mr(bytearray(range(256)) * 4)
    dst = b.register_mr(bytearray(1024))
    qa.post_write(wr_id=1, mr=src, offset=0, length=1024, remote_addr=dst.addr, rkey=dst.rkey)
    return a, b, qa, dst


def test_ce_mark_becomes_cnp_and_dcqcn_cuts_rate(make_switch, drain):
    sw = leaf(make_switch)
    a, b, qa, dst = pair()
    frame = a.poll_transmit(0)
    assert frame[15] & 3 == roce.ECN_ECT0
    (port, marked), = sw.forward(1, frame, 100, latency_us=5, qdepth=KMAX)
    assert port == 2 and marked[15] & 3 == roce.ECN_CE and marked[15] >> 2 == DSCP_ROCE
    assert Ether(marked)[IP].tos & 3 == 3
    assert sw.prog.counters["FabricEgress.ecn.ecn_marks"].read(2 * 8 + PRIO_ROCE).packets == 1

    b.receive(marked, 10_000)  # the ICRC still holds: the mark is outside it
    assert dict(b.counters.drops) == {} and bytes(dst.buf) == bytes(range(256)) * 4
    out = drain(b, 10_000)
    assert sorted(f[42] for f in out) == [roce.Opcode.ACKNOWLEDGE, roce.Opcode.CNP]
    cnps = [f for f in out if f[42] == roce.Opcode.CNP]
    assert len(cnps) == 1
    cnp = Ether(cnps[0])
    assert cnp[BTH].opcode == 0x81 and cnp[BTH].dqpn == qa.qpn and cnp[BTH].becn == 1
    assert CNPPadding in cnp and cnp[IP].tos >> 2 == 48

    jobs = sw.pipe.ingress(2, cnps[0], 200).to_egress
    assert [(j.egress_port, j.priority) for j in jobs] == [(1, PRIO_CONTROL)]
    (port, back), = sw.forward(2, cnps[0], 200)
    assert port == 1 and back[6:12] == SW[1]
    rate_before = qa.cc.rate_bps
    a.receive(back, 20_000)
    assert dict(a.counters.drops) == {}
    assert qa.counters.cnps_received == 1
    assert qa.cc.rate_bps < rate_before  # DCQCN's cut, Rc * (1 - alpha / 2)


def test_no_mark_below_kmin_and_never_on_not_ect(make_switch, drain):
    sw = leaf(make_switch)
    a, b, qa, _ = pair()
    (_, low), = sw.forward(1, a.poll_transmit(0), 100, qdepth=KMIN)
    assert low[15] & 3 == roce.ECN_ECT0
    a2, b2, _, dst = pair(ecn=False)
    frame = a2.poll_transmit(0)
    assert frame[15] & 3 == roce.ECN_NOT_ECT
    (_, full), = sw.forward(1, frame, 100, qdepth=KMAX + 10)
    assert full[15] & 3 == roce.ECN_NOT_ECT
    assert sw.prog.counters["FabricEgress.ecn.ecn_marks"].read(2 * 8 + PRIO_ROCE).packets == 0
    b2.receive(full, 10_000)
    assert [f[42] for f in drain(b2, 10_000)] == [roce.Opcode.ACKNOWLEDGE]  # no CNP
    assert all(q.counters.cnps_sent == 0 for q in b2.qps)
