"""Our frames as third parties read them (scapy's RoCE layers, tshark's InfiniBand
dissector), INT and PFC formats, PSN arithmetic, and malformed input counted and dropped."""

from __future__ import annotations

import random
import struct
import subprocess

import pytest
from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause
from scapy.contrib.roce import AETH, BTH, CNPPadding
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import raw
from scapy.utils import wrpcap

from netbase import ipv4, pfc
from nicmodel import Nic, Reliability, int_md, roce
from nicmodel.cc.base import HopInt, LineRate
from nicmodel.psn import psn_add, psn_diff, to_wire, unwrap


def transfer_frames(net, reliability=Reliability.SELECTIVE_REPEAT, policy=None):
    """Frames of a real exchange: a 3-packet WRITE, a SEND with immediate, their ACKs."""
    a, b, qa, qb = net.make_pair(reliability, psn_a=(1 << 24) - 2, dscp=24)
    src = bytearray(bytes(range(256)) * 12)
    ma = a.register_mr(src)
    mb = b.register_mr(bytearray(4096))
    qb.post_recv(1, mb, 0, 4096)
    qa.post_write(1, ma, 0, 2050, mb.addr + 8, mb.rkey)
    qa.post_send(2, ma, 0, 99, imm=0xDEADBEEF)
    w = net.Wire(a, b, policy=policy or net.deliver_all)
    w.run()
    return w, qa, qb, mb


def test_scapy_reads_our_data_and_ack_packets(net):
    w, qa, qb, mb = transfer_frames(net)
    data = [Ether(f) for f in w.sent["ab"]]
    assert [p[BTH].opcode for p in data] == [0x06, 0x07, 0x08, 0x05]
    assert [p[BTH].psn for p in data] == [(1 << 24) - 2, (1 << 24) - 1, 0, 1]
    for p in data:
        assert p[BTH].dqpn == qb.qpn and p[BTH].pkey == 0xFFFF and p[BTH].version == 0
        assert p[IP].tos == (24 << 2) | roce.ECN_ECT0
        assert p[UDP].dport == 4791 and p[UDP].sport == qa.udp_sport
    first = raw(data[0][BTH].payload)
    va, rkey, dlen = struct.unpack("!QII", first[:16])
    assert (va, rkey, dlen) == (mb.addr + 8, mb.rkey, 2050)
    last = raw(data[2][BTH].payload)
    assert data[2][BTH].padcount == 2 and len(last) == 2 + 2 and last[-2:] == b"\0\0"
    assert data[2][BTH].ackreq == 1 and data[1][BTH].ackreq == 0
    imm_send = raw(data[3][BTH].payload)
    assert imm_send[:4] == b"\xde\xad\xbe\xef" and data[3][BTH].padcount == 1
    acks = [Ether(f) for f in w.sent["ba"]]
    assert all(p[BTH].opcode == 0x11 for p in acks)
    assert acks[-1][AETH].msn == 2 and acks[-1][BTH].psn == 1
    # ACK syndrome, credit count = receive WQEs left: 1 after the WRITE, 0 after the SEND
    assert [p[AETH].syndrome for p in acks] == [0x01, 0x00]
    assert acks[-1][IP].tos & 3 == roce.ECN_NOT_ECT


def test_the_credit_code_is_the_largest_whose_count_fits():
    """IBA's AETH credit encoding: the code of the table's largest count not above the receive
    WQEs the responder has, every count from none to beyond the table's last."""
    for available in range(0, 40_000):
        code = roce.encode_credits(available)
        assert roce.CREDIT_TABLE[code] <= available
        assert code == len(roce.CREDIT_TABLE) - 1 or roce.CREDIT_TABLE[code + 1] > available


def test_icrc_matches_scapy(net):
    w, *_ = transfer_frames(net)
    frames = w.sent["ab"] + w.sent["ba"]
    for f in frames:
        p = Ether(f)
        p[BTH].icrc = None  # let scapy compute it
        assert raw(p)[-4:] == f[-4:]


@pytest.mark.parametrize("options", [b"", b"\x01\x01\x01\x00"])  # IHL 5, and 6 with NOP options
def test_parse_checks_the_icrc_scapy_computes(options):
    """The receive side's ICRC (variant fields masked) against scapy's, with and without IPv4
    options and with TOS, TTL and checksums that the ICRC must not cover: scapy's ICRC is
    accepted, and one flipped byte anywhere it covers is refused."""
    pkt = (Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
           / IP(src="10.0.0.1", dst="10.0.0.2", tos=0x8B, ttl=17, flags="DF", options=options)
           / UDP(sport=49999, dport=roce.ROCE_UDP_PORT, chksum=0x1234)
           / BTH(opcode=roce.Opcode.SEND_ONLY, dqpn=0x123456, psn=77, fecn=1, resv6=0x15) / (b"payload!" * 9))
    frame = raw(pkt)
    assert roce.parse(frame).payload == b"payload!" * 9
    bth = 14 + 20 + len(options) + 8
    for at in (14 + 12, 14 + 20 + len(options) + 1, bth + 1, bth + 11, bth + 20, len(frame) - 5):
        bad = bytearray(frame)
        bad[at] ^= 0x10
        with pytest.raises(roce.Malformed) as err:
            roce.parse(bytes(bad))
        assert err.value.reason in ("bad_icrc", "bad_ip_checksum"), at


def test_cnp_has_the_annex_format(net):
    a, b, qa, qb = net.make_pair()
    ma, mb = a.register_mr(bytearray(10)), b.register_mr(bytearray(10))
    qa.post_write(1, ma, 0, 10, mb.addr, mb.rkey)
    frame = a.poll_transmit(0)
    ce = bytearray(frame)
    ce[15] |= roce.ECN_CE
    b.receive(fix_ip(bytes(ce)), 1000)
    cnp = b.poll_transmit(1000)
    p = Ether(cnp)
    assert p[BTH].opcode == 0x81 and p[BTH].becn == 1 and p[BTH].dqpn == qa.qpn
    assert p[BTH].psn == 0 and CNPPadding in p and raw(p[CNPPadding])[:16] == bytes(16)
    assert p[IP].tos >> 2 == b.cnp_dscp
    scapy_cnp = raw(Ether(cnp[:42]) / BTH(opcode=0x81, becn=1, dqpn=qa.qpn) / CNPPadding())
    assert scapy_cnp == cnp  # scapy builds the identical frame, ICRC included
    a.receive(cnp, 2000)
    assert qa.counters.cnps_received == 1


def test_tshark_dissects_our_pcap(net, tmp_path):
    w, qa, qb, mb = transfer_frames(net)
    frames = w.sent["ab"] + w.sent["ba"]
    pcap = tmp_path / "roce.pcap"
    wrpcap(str(pcap), [Ether(f) for f in frames])
    out = subprocess.run(
        ["tshark", "-r", str(pcap), "-T", "fields", "-E", "separator=,",
         "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn",
         "-e", "infiniband.bth.destqp", "-e", "infiniband.reth.dmalen",
         "-e", "infiniband.aeth.msn", "-e", "infiniband.invariant.crc"],
        capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(frames)
    for line, f in zip(out, frames):
        op, psn, dqp, dmalen, msn, crc = line.split(",")
        p = roce.parse(f)
        assert int(op) == p.opcode and int(psn) == p.psn and int(dqp, 0) == p.dqpn
        assert int(crc, 16).to_bytes(4, "big") == f[-4:]  # shown in wire byte order
        assert (dmalen == "") == (p.reth is None)
        if p.reth:
            assert int(dmalen) == p.reth[2]
        if p.opcode == roce.Opcode.ACKNOWLEDGE:
            assert int(msn) == p.msn
    verbose = subprocess.run(["tshark", "-r", str(pcap), "-V"], capture_output=True,
                             text=True, check=True).stdout
    assert "RDMA WRITE First" in verbose and "Acknowledge" in verbose
    assert "Malformed" not in verbose and "Bad" not in verbose


def hop(i: int) -> HopInt:
    return HopInt(switch_id=i, ingress_port=i + 1, egress_port=i + 2, hop_latency_us=3 * i,
                  queue_id=3, qdepth_pkts=100 + i, ingress_ts_us=1000 + i,
                  egress_ts_us=1003 + i, tx_bytes=2**32 - 10 + i, link_rate_mbps=100_000)


class AckRecorder(LineRate):
    """A congestion control that only records the ACKs the sender hands it (their INT hops,
    acked bytes and RTT) and never limits the rate."""

    def __init__(self) -> None:
        super().__init__(100e9)
        self.acks: list = []

    def on_ack(self, ack): self.acks.append(ack)


def test_int_stack_is_read_checked_and_echoed(net):
    a, b, qa, qb = net.make_pair()
    src = bytearray(b"\x11" * 2000)
    dst = bytearray(2000)
    ma, mb = a.register_mr(src), b.register_mr(dst)
    qa.post_write(1, ma, 0, 2000, mb.addr, mb.rkey)
    qa.cc = rec = AckRecorder()
    f1 = a.poll_transmit(0)
    f2 = a.poll_transmit(1000)
    stamped = int_md.push_hop(int_md.push_hop(f2, hop(1)), hop(2))
    p = roce.parse(stamped)  # the ICRC still verifies with the INT inside
    assert p.int_stack is not None and p.int_stack.orig_dport == 4791
    assert p.int_stack.hops() == (hop(1), hop(2))  # source-side hop first
    assert int_md.strip(stamped) == (f2, p.int_stack)
    b.receive(f1, 2000)
    b.receive(stamped, 2100)
    ack = b.poll_transmit(2200)
    pa = roce.parse(ack)
    assert pa.resv7 & roce.ACK_EXT_INT
    assert Ether(ack)[AETH].msn == 1  # scapy still reads the AETH in front of the echo
    a.receive(ack, 3000)
    assert dst == src
    assert [s.hops for s in rec.acks] == [(hop(1), hop(2))]
    assert rec.acks[0].acked_bytes == len(f1) + len(f2) and rec.acks[0].rtt_ns == 2000



def test_int_time_scale_gives_hop_times_in_fabric_nanoseconds():
    """The INT-MD time_scale (INT_LAYOUT.md) carries D for a switch stamping wall-clock
    microseconds in a fabric dilated D times, within 1/4096 at any D, so the NIC reads the
    hops' times in fabric time; 0 (every other target) means 1."""
    for d in (1, 2, 1000, 4095, 4097, 20_000, 36_000, 76_000, 123_457, 999_999, 100_000_000):
        field = int_md.encode_time_scale(d)
        assert field < 1 << 16 and abs(int_md.decode_time_scale(field) / d - 1) <= 1 / 4096, d
    assert int_md.encode_time_scale(1) == 0 and int_md.encode_time_scale(1000) == 1000
    with pytest.raises(ValueError, match="time scale"):
        int_md.encode_time_scale(0.5)
    md = bytearray(int_md.md_header())
    md[6:8] = int_md.encode_time_scale(76_000).to_bytes(2, "big")
    stack = int_md.IntStack(4791, bytes(md), int_md.encode_hop(hop(1)), int_md.HOP_WORDS)
    (h,) = int_md.decode_echo(int_md.encode_echo(stack), 0)[0]
    assert h.ts_unit_ns == pytest.approx(1000 / 76_000, rel=1 / 4096) and h.link_rate_mbps == hop(1).link_rate_mbps
    unscaled = int_md.IntStack(4791, int_md.md_header(), stack.hops_raw, int_md.HOP_WORDS)
    assert unscaled.hops() == (hop(1),) and hop(1).ts_unit_ns == 1000

def test_int_hop_limit_sets_the_e_bit():
    t = roce.FrameTemplate(b"\2" * 6, b"\4" * 6, b"\1\1\1\1", b"\2\2\2\2", 5000, 0, 2)
    f = t.build(roce.pack_bth(0x0A, 5, 5), roce.pack_reth(0, 1, 4), b"abcd")
    for i in range(3):
        f = int_md.push_hop(f, hop(i), max_hops=2)
    st = roce.parse(f).int_stack
    assert st.hop_count == 2 and st.md_header[0] & 0x04
    # a source allowed no hops still inserts shim and header (lengths, IP checksum and
    # ICRC stay valid: roce.parse checks them all) and sets the E bit at once
    f0 = t.build(roce.pack_bth(0x0A, 5, 5), roce.pack_reth(0, 1, 4), b"abcd")
    st0 = roce.parse(int_md.push_hop(f0, hop(0), max_hops=0)).int_stack
    assert st0.hop_count == 0 and st0.md_header[0] & 0x04


def test_int_report_is_parsed_as_the_fabric_readme_lays_it_out():
    t = roce.FrameTemplate(b"\2" * 6, b"\4" * 6, b"\1\1\1\1", b"\2\2\2\2", 5000, 0, 2)
    f = t.build(roce.pack_bth(0x0A, 5, 5), roce.pack_reth(0, 1, 4), b"abcd")
    for i in range(2):
        f = int_md.push_hop(f, hop(i))
    inner = f[:14 + 20 + 8 + 16 + 2 * 32 + 12]  # cut after the BTH
    header = struct.pack("!BBHIII", 0x11, 2, 0, 0x33, 7, 123456)
    report = bytes(Ether(dst="02:00:00:00:0c:0c") / IP(src="10.0.0.1", dst="10.0.9.9")
                   / UDP(sport=32766, dport=32766, chksum=0) / (header + inner))
    rep = int_md.parse_report(report)
    assert (rep.hop_count, rep.switch_id, rep.seq_no, rep.ingress_ts_us) == (2, 0x33, 7, 123456)
    assert rep.inner == inner and rep.stack().hops() == (hop(0), hop(1))
    assert int_md.report_hops(report) == (hop(0), hop(1))  # the same hops, read in place
    for bad in (report[:50], report[:42] + b"\x21" + report[43:], report[:14] + bytes(40)):
        with pytest.raises(ValueError):
            int_md.parse_report(bad)
    # report_hops fails where parse_report(...).stack() does, with the same message
    udp = 14 + 20 + 8
    shim = udp + 16 + 14 + 20 + 8

    def patched(at: int, value: int) -> bytes:
        b = bytearray(report)
        b[at] = value
        return bytes(b)

    for bad in (report[:50], patched(udp, 0x21), report[:14] + bytes(40), patched(udp + 16 + 12, 0x86),
                patched(shim - 6, 0x13), patched(shim, 0x24), patched(shim, 0x10), patched(shim + 1, 2),
                patched(shim + 1, 0xFF), patched(shim + 4, 0x10), patched(shim + 6, 7), patched(shim + 6, 9)):
        with pytest.raises(ValueError) as expected:
            int_md.parse_report(bad).stack()
        with pytest.raises(ValueError, match=f"^{expected.value}$"):
            int_md.report_hops(bad)
    with pytest.raises(ValueError, match="report header says 3 hops, the reported packet carries 2"):
        int_md.report_hops(patched(udp + 1, 3))


def test_decode_hops_is_the_per_hop_decode():
    """decode_hops (one iter_unpack over the stack) gives what reading hop by hop, newest last,
    gives: for 0 to 6 hops, hop records longer than the 8 words we read, and every unit."""
    rng = random.Random(7)

    def per_hop(raw: bytes, hop_ml: int, flags: int, scale_field: int) -> tuple[HopInt, ...]:
        unit = (1 if flags & int_md.DS_TIME_NS else 1000) / int_md.decode_time_scale(scale_field)
        out = []
        for off in range(len(raw) - 4 * hop_ml, -1, -4 * hop_ml):
            sw, ip, ep, lat, q, its, ets, txb, rate = struct.unpack_from("!IHHIIIIII", raw, off)
            out.append(HopInt(sw, ip, ep, lat, q >> 24, q & 0xFFFFFF, its, ets, txb, rate, unit,
                              bool(flags & int_md.DS_QUEUE_BYTES)))
        return tuple(out)

    for hop_ml in (8, 9, 12):
        for count in range(7):
            raw = rng.randbytes(4 * hop_ml * count)
            for flags, scale in ((0, 0), (1, 0), (2, int_md.encode_time_scale(76_000)), (3, 1000)):
                got = int_md.decode_hops(raw, hop_ml, flags, scale)
                assert got == per_hop(raw, hop_ml, flags, scale) and all(type(h) is HopInt for h in got)
    for raw, hop_ml in ((bytes(40), 8), (bytes(64), 7), (bytes(32), 9)):
        with pytest.raises(ValueError, match=f"^hop stack of {len(raw)} bytes with {hop_ml} words per hop$"):
            int_md.decode_hops(raw, hop_ml)


def test_sack_block_round_trip():
    blk = roce.pack_sack(0xFFFFFE, (1 << 40) | 0b101)
    assert blk[0] == 2  # two words cover bit 40
    base, bm, end = roce.unpack_sack(blk + b"zz", 0)
    assert (base, bm, end) == (0xFFFFFE, (1 << 40) | 0b101, len(blk))


def test_pfc_frames_match_scapy():
    f = pfc.build(b"\x02\0\0\0\0\x09", {3: 0xFFFF, 5: 0})
    s = Ether(f)
    c = s[MACControlClassBasedFlowControl]
    assert (c.c3_enabled, c.c5_enabled, c.c0_enabled) == (1, 1, 0)
    assert (c.c3_pause_time, c.c5_pause_time) == (0xFFFF, 0)
    theirs = raw(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:00:09", type=0x8808)
                 / MACControlClassBasedFlowControl(c3_enabled=1, c3_pause_time=7))
    parsed = pfc.parse(theirs + bytes(60 - len(theirs)))
    assert parsed.enabled() == [3] and parsed.quanta[3] == 7
    assert pfc.quanta_to_ns(1, 100e9) == 6  # 512 bits at 100 Gb/s = 5.12 ns, rounded up
    assert pfc.quanta_to_ns(0xFFFF, 100e9) == 335_540


def test_link_pause_frames_match_scapy_and_pause_every_priority():
    f = pfc.build_pause(b"\x02\0\0\0\0\x09", 1000)
    assert len(f) == 60 and Ether(f)[MACControlPause].pause_time == 1000
    theirs = raw(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:00:09", type=0x8808)
                 / MACControlPause(pause_time=77))
    parsed = pfc.parse(theirs)
    assert parsed.opcode == pfc.PAUSE_OPCODE and parsed.enabled() == list(range(8))
    assert parsed.times() == (77,) * 8
    assert pfc.parse(pfc.build(b"\x02" * 6, {2: 5})).times() == (None, None, 5) + (None,) * 5
    nic = Nic("02:00:00:00:00:01", "10.0.0.1", line_rate_bps=100e9)
    nic.receive(f, 1_000)
    assert all(nic.paused(p, 1_000 + pfc.quanta_to_ns(1000, 100e9) - 1) for p in range(8))
    nic.receive(pfc.build_pause(b"\x02" * 6, 0), 2_000)  # time 0 resumes the link
    assert not any(nic.paused(p, 2_000) for p in range(8))
    assert nic.counters.pause_frames_received == 2 and not nic.counters.drops


def test_psn_arithmetic_wraps():
    assert to_wire((1 << 24) + 5) == 5
    assert unwrap(2, (1 << 24) - 3) == (1 << 24) + 2
    assert unwrap((1 << 24) - 3, (1 << 24) + 2) == (1 << 24) - 3
    assert psn_add(0xFFFFFF, 2) == 1 and psn_diff(1, 0xFFFFFF) == 2 and psn_diff(0xFFFFFF, 1) == -2


def fix_ip(frame: bytes) -> bytes:
    """Recompute the IPv4 header checksum after editing the header."""
    f = bytearray(frame)
    f[24:26] = b"\0\0"
    f[24:26] = struct.pack("!H", ipv4.checksum(bytes(f[14:34])))
    return bytes(f)


def test_malformed_and_misdirected_frames_are_counted_and_dropped(net):
    w, qa, qb, mb = transfer_frames(net, Reliability.GO_BACK_N)
    a, b = w.a, w.b
    good = w.sent["ab"][0]
    before = qb.counters.data_pkts_received
    cases = {
        "bad_icrc": good[:-10] + bytes([good[-10] ^ 1]) + good[-9:],
        "wrong_dst_mac": b"\x02\0\0\0\0\x99" + good[6:],
        "wrong_dst_ip": fix_ip(good[:30] + b"\x0a\0\0\x63" + good[34:]),
        "unknown_ethertype": good[:12] + b"\x08\x06" + good[14:],
        "not_udp": fix_ip(good[:23] + b"\x06" + good[24:]),
        "not_roce": good[:36] + b"\x12\xb6" + good[38:],
        "bad_int": good[:36] + b"\x12\xb8" + good[38:],
        "bad_udp_length": good[:38] + b"\0\x09" + good[40:],
        "bad_ip_header": good[:14] + b"\x65" + good[15:],
        "bad_ip_checksum": good[:24] + bytes([good[24] ^ 0x10]) + good[25:],
    }
    t = roce.FrameTemplate(net.MAC_A, net.MAC_B, net.IP_A, net.IP_B, 1, 0, 2)
    cases["unsupported_opcode"] = t.build(roce.pack_bth(0x0C, qb.qpn, 0), bytes(16), b"")
    cases["bad_qpn"] = t.build(roce.pack_bth(0x0A, 0x777, 0), roce.pack_reth(0, 1, 0), b"")
    cases["bad_pkey"] = t.build(roce.pack_bth(0x0A, qb.qpn, 0, pkey=0x1234),
                                roce.pack_reth(0, 1, 0), b"")
    bth = bytearray(roce.pack_bth(0x0A, qb.qpn, 0))
    bth[1] = 1  # transport header version 1
    cases["bad_transport_version"] = t.build(bytes(bth), roce.pack_reth(0, 1, 0), b"")
    other = roce.FrameTemplate(net.MAC_A, net.MAC_B, b"\x0a\0\0\x05", net.IP_B, 1, 0, 2)
    cases["wrong_source"] = other.build(roce.pack_bth(0x0A, qb.qpn, 0), roce.pack_reth(0, 1, 0), b"")
    cases["bad_mac_control"] = pfc.PFC_DST_MAC + net.MAC_A + b"\x88\x08\x00\x02" + bytes(44)  # GATE
    for reason, frame in cases.items():
        b.counters.drops.clear()
        host_frames = b.counters.host_frames
        b.receive(frame, 10**9)
        if reason in roce.HOST_STACK_REASONS:  # the host's own traffic (TCP, ARP): the kernel's, not a drop
            assert not b.counters.drops and b.counters.host_frames == host_frames + 1, reason
        else:
            assert dict(b.counters.drops) == {reason: 1}, reason
    b.counters.drops.clear()
    for n in range(len(good)):  # every truncation of a valid frame
        b.receive(good[:n], 10**9)
    assert sum(b.counters.drops.values()) == len(good)
    assert set(b.counters.drops) <= {"truncated", "bad_icrc", "bad_udp_length"}
    memory = bytes(mb.buf)
    rng = random.Random(4)
    b.counters.drops.clear()
    for i in range(2000):  # random bit flips and garbage never crash the NIC
        f = bytearray(rng.choice(w.sent["ab"] + w.sent["ba"]))
        for _ in range(rng.randrange(1, 4)):
            f[rng.randrange(len(f))] ^= 1 << rng.randrange(8)
        b.receive(bytes(f), 10**9 + i)
        b.receive(rng.randbytes(rng.randrange(80)), 10**9 + i)
    # most are dropped; the rest differ only in fields the ICRC does not cover (source MAC,
    # ECN...) and are harmless duplicates
    assert sum(b.counters.drops.values()) > 3500
    assert qb.counters.data_pkts_received == before
    assert bytes(mb.buf) == memory
    assert a.counters.drops == {}


def test_stale_acks_and_acks_for_unknown_qps(net):
    w, qa, qb, mb = transfer_frames(net, Reliability.GO_BACK_N)
    a = w.a
    assert len(a.poll_cq()) == 2
    a.receive(w.sent["ba"][0], 10**9)  # an old ACK, below the cumulative point
    t = roce.FrameTemplate(net.MAC_B, net.MAC_A, net.IP_B, net.IP_A, 1, 0, 0)
    future = t.build(roce.pack_bth(0x11, qa.qpn, 1000), roce.pack_aeth(0x1F, 0), b"")
    a.receive(future, 10**9)  # acknowledges PSNs never sent
    assert qa.counters.stale_acks == 2
    assert a.poll_cq() == [] and qa.state.value == "rts"
    a.receive(t.build(roce.pack_bth(0x11, 0x999, 1), roce.pack_aeth(0x1F, 0), b""), 10**9)
    assert a.counters.drops == {"bad_qpn": 1}


def test_ack_carries_int_echo_and_sack_together(net):
    """Selective repeat through an INT fabric: ACKs carry the INT echo and the SACK block
    side by side; the sender reads both (hops for congestion control, SACK for recovery)."""
    rec = AckRecorder()
    a, b, qa, qb = net.make_pair(Reliability.SELECTIVE_REPEAT, cc_a=rec)
    src = bytearray(random.Random(9).randbytes(16 * 1024))
    dst = bytearray(len(src))
    ma, mb = a.register_mr(src), b.register_mr(dst)
    qa.post_write(1, ma, 0, len(src), mb.addr, mb.rkey)

    def stamp(d, frame):
        return int_md.push_hop(frame, hop(7)) if d == "ab" else frame

    def lose_fourth(d, i, frame):
        return [] if (d, i) == ("ab", 3) else [0]

    w = net.Wire(a, b, policy=lose_fourth, rewrite=stamp)
    w.run()
    assert dst == src and qa.counters.retransmitted_pkts == 1
    both = [roce.parse(f) for f in w.sent["ba"]]
    both = [p for p in both if p.resv7 == roce.ACK_EXT_INT | roce.ACK_EXT_SACK]
    assert both, "no ACK with INT echo and SACK"
    ext = roce.parse_ack_ext(both[0])
    assert ext.hops == (hop(7),) and ext.sack_base == 3 and ext.sack_bitmap & 1
    assert all(ack.hops == (hop(7),) for ack in rec.acks)
    # bit flips in INT-carrying data and extended ACKs are dropped, never raise
    rng = random.Random(1)
    stamped = [int_md.push_hop(f, hop(1)) for f in w.sent["ab"]]
    before = (dict(a.counters.drops), dict(b.counters.drops))
    for i in range(1000):
        f = bytearray(rng.choice(stamped + w.sent["ba"]))
        f[rng.randrange(34, len(f))] ^= 1 << rng.randrange(8)
        (b if f[:6] == net.MAC_B else a).receive(bytes(f), w.now + i)
    dropped = sum(a.counters.drops.values()) + sum(b.counters.drops.values())
    assert dropped - sum(before[0].values()) - sum(before[1].values()) > 900
    assert dst == src


def test_vlan_tagged_frames_are_accepted(net):
    a, b, qa, qb = net.make_pair()
    src = bytearray(b"vlan" * 100)
    dst = bytearray(len(src))
    ma, mb = a.register_mr(src), b.register_mr(dst)
    qa.post_write(1, ma, 0, len(src), mb.addr, mb.rkey)
    f = a.poll_transmit(0)
    tagged = f[:12] + b"\x81\x00\x60\x0a" + f[12:]  # PCP 3, VLAN 10
    b.receive(tagged, 1_000)
    a.receive(b.poll_transmit(1_000), 2_000)
    assert dst == src and b.counters.drops == {}
    assert [c.status.value for c in a.poll_cq()] == ["success"]
