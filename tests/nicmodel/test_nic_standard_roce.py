"""Standard-RoCEv2-only mode (``Nic(roce_extensions=False)``): every frame the NIC emits is
plain RoCEv2 as scapy.contrib.roce reads it, with no byte after the AETH and no BTH
reserved bit set, even when the fabric stamps INT, marks CE, loses and duplicates packets,
and the application asked for selective repeat."""

from __future__ import annotations

import struct

import pytest
from scapy.contrib.roce import AETH, BTH, CNPPadding
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import NoPayload, raw

from netbase import ipv4
from nicmodel import Nic, QpConfig, Reliability, VerbsError, WcStatus, int_md, roce
from nicmodel.cc import create_cc
from nicmodel.cc.base import HopInt

HOP = HopInt(switch_id=1, ingress_port=2, egress_port=3, hop_latency_us=1, queue_id=3,
             qdepth_pkts=10, ingress_ts_us=100, egress_ts_us=101, tx_bytes=5000,
             link_rate_mbps=100_000)


def fabric(direction: str, frame: bytes) -> bytes:
    """What a switch does to data in flight: INT hop stamped, CE marked (checksum fixed)."""
    if direction != "ab" or roce.parse(frame).opcode not in roce.OP_DATA:
        return frame
    f = bytearray(int_md.push_hop(frame, HOP))
    f[15] |= roce.ECN_CE
    f[24:26] = b"\0\0"
    f[24:26] = struct.pack("!H", ipv4.checksum(bytes(f[14:34])))
    return bytes(f)


def lossy(direction: str, index: int, frame: bytes) -> list[int]:
    if direction == "ab" and index in (2, 9):
        return []  # lost: a gap to NAK and to resend
    if direction == "ab" and index == 5:
        return [0, 300]  # duplicated
    return [0]


def exchange(extensions: bool):
    a = Nic("02:00:00:00:00:01", "10.0.0.1", roce_extensions=extensions)
    b = Nic("02:00:00:00:00:02", "10.0.0.2", roce_extensions=extensions)
    cfg = QpConfig(reliability=Reliability.SELECTIVE_REPEAT, ack_every=2)
    qa = a.create_qp(cfg, cc=create_cc("dcqcn", 100e9))
    qb = b.create_qp(cfg)
    qa.connect(b.mac, b.ip, qb.qpn, 0)
    qb.connect(a.mac, a.ip, qa.qpn, 0)
    src = bytearray(bytes(range(256)) * 64)
    ma, mb = a.register_mr(src), b.register_mr(bytearray(len(src)))
    qa.post_write(1, ma, 0, 10_000, mb.addr, mb.rkey)
    qa.post_send(2, ma, 0, 3000, imm=7)  # no receive WQE yet: RNR NAK
    return a, b, qa, qb, mb


def standard_violations(frame: bytes) -> list[str]:
    """Why ``frame`` is not plain RoCEv2 as scapy reads it (empty: it is)."""
    p = Ether(frame)
    bth = p[BTH]
    bad = []
    if bth.resv6 or bth.resv7:
        bad.append("BTH reserved bits set")
    if p[IP].len != len(frame) - 14 or p[UDP].len != len(frame) - 34:
        bad.append("lengths do not cover the frame")
    check = Ether(frame)
    check[BTH].icrc = None
    if raw(check)[-4:] != frame[-4:]:
        bad.append("ICRC differs from scapy's")
    if bth.opcode == roce.Opcode.ACKNOWLEDGE:
        if not isinstance(p[AETH].payload, NoPayload):
            bad.append(f"{len(raw(p[AETH].payload))} bytes after the AETH")
    elif bth.opcode == roce.Opcode.CNP:
        if not isinstance(p[CNPPadding].payload, NoPayload):
            bad.append("bytes after the CNP padding")
    else:
        body = len(raw(bth.payload))
        ext = (roce.RETH_LEN if bth.opcode in roce.OP_HAS_RETH else 0) + (
            roce.IMM_LEN if bth.opcode in roce.OP_HAS_IMM else 0)
        if (body - ext) % 4 or body - ext > 1024 + 3:
            bad.append("data payload is not MTU-bounded and padded")
    return bad


def test_standard_mode_emits_only_plain_rocev2(net):
    a, b, qa, qb, mb = exchange(extensions=False)
    assert qa.config.reliability is Reliability.GO_BACK_N  # selective repeat fell back
    w = net.Wire(a, b, policy=lossy, rewrite=fabric)
    w.run(until_ns=30_000)
    qb.post_recv(9, mb, 0, 4096)
    w.run()
    frames = w.sent["ab"] + w.sent["ba"]
    kinds = {Ether(f)[BTH].opcode for f in frames}
    assert {roce.Opcode.ACKNOWLEDGE, roce.Opcode.CNP, 0x06, 0x03} <= kinds
    assert qb.counters.naks_sent >= 2 and qb.counters.rnr_naks_sent >= 1
    assert qb.counters.cnps_sent >= 1 and qa.counters.retransmitted_pkts > 0
    assert {f: standard_violations(f) for f in frames if standard_violations(f)} == {}
    assert [c.status for c in a.poll_cq()] == [WcStatus.SUCCESS] * 2


def test_the_same_exchange_with_extensions_is_not_standard(net):
    # the check above can fail: with extensions on, ACKs carry the INT echo and SACKs
    a, b, qa, qb, mb = exchange(extensions=True)
    w = net.Wire(a, b, policy=lossy, rewrite=fabric)
    w.run(until_ns=30_000)
    qb.post_recv(9, mb, 0, 4096)
    w.run()
    assert any(standard_violations(f) for f in w.sent["ba"])


def test_hpcc_needs_the_int_echo_and_is_refused_in_standard_mode():
    nic = Nic("02:00:00:00:00:01", "10.0.0.1", roce_extensions=False)
    with pytest.raises(VerbsError, match="HPCC"):
        nic.create_qp(QpConfig(), cc=create_cc("hpcc", 100e9))
