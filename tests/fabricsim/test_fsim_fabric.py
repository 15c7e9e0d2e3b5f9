"""The simulated wire and switch on their own: frames in, frames out, in virtual time."""

from __future__ import annotations

import random

import pytest

from fabricsim import engine
from fabricsim.engine import Simulator
from fabricsim.link import Link, LinkConfig
from fabricsim.reference_switch import Switch, SwitchConfig
from netbase import pfc
from nicmodel import roce

MAC_A, MAC_B, MAC_C = (bytes([2, 0, 0, 0, 0, i]) for i in (1, 2, 3))
IP_A, IP_B, IP_C = (bytes([10, 0, 0, i]) for i in (1, 2, 3))


def data_frame(psn: int, size: int = 1024, src_ip: bytes = IP_A, ecn: int = roce.ECN_ECT0) -> bytes:
    t = roce.FrameTemplate(MAC_A, MAC_B, src_ip, IP_B, 49152, 26, ecn)
    bth = roce.pack_bth(roce.Opcode.RDMA_WRITE_MIDDLE, 0x11, psn)
    return t.build(bth, b"", bytes(size))


def ack_frame(psn: int) -> bytes:
    t = roce.FrameTemplate(MAC_B, MAC_A, IP_B, IP_A, 49152, 26, roce.ECN_ECT0)
    return t.build(roce.pack_bth(roce.Opcode.ACKNOWLEDGE, 0x11, psn), roce.pack_aeth(0, 1), b"")


def test_engine_runs_events_in_time_then_schedule_order() -> None:
    sim = Simulator()
    seen: list[tuple[int, str]] = []
    sim.at(50, lambda: seen.append((sim.now, "b")))
    sim.at(10, lambda: seen.append((sim.now, "a")))
    sim.at(50, lambda: seen.append((sim.now, "c")))
    sim.run(until_ns=40)
    assert seen == [(10, "a")] and sim.now == 40
    sim.run()
    assert seen == [(10, "a"), (50, "b"), (50, "c")]


def test_engine_keeps_time_and_schedule_order_across_renumbering() -> None:
    """Scheduling numbers run out every 2**22 events; the pending events are numbered
    again in their order, so ties still run first-scheduled first."""
    sim = Simulator()
    sim._seq = engine._SEQ_LIMIT - 3  # three numbers left before the renumbering
    seen: list[tuple[int, str]] = []
    for name, when in (("x", 70), ("a", 20), ("y", 70), ("b", 20), ("z", 70), ("c", 20)):
        sim.at(when, lambda name=name: seen.append((sim.now, name)))
    sim.at(20, lambda: sim.at(20, lambda: seen.append((sim.now, "d"))))  # scheduled while running
    assert sim.pending() == 7 and sim._seq < 10
    sim.run()
    assert seen == [(20, "a"), (20, "b"), (20, "c"), (20, "d"), (70, "x"), (70, "y"), (70, "z")]
    assert sim.pending() == 0 and sim.events_run == 8


def test_engine_runs_many_events_in_time_then_scheduling_order() -> None:
    """The heap against a sort: events at random times, some scheduled while others run,
    come out by time, ties in the order they were scheduled."""
    rng = random.Random(7)
    sim = Simulator()
    ran: list[tuple[int, int]] = []
    scheduled: list[tuple[int, int]] = []  # (time, scheduling number)

    def event(number: int, spawn: int) -> None:
        ran.append((sim.now, number))
        for _ in range(spawn):
            schedule(sim.now + rng.choice((0, 1, rng.randrange(1_000))), 0)

    def schedule(when: int, spawn: int) -> None:
        number = len(scheduled)
        scheduled.append((max(when, sim.now), number))
        sim.at(when, event, number, spawn)

    for _ in range(3_000):
        schedule(rng.randrange(5_000), rng.choice((0, 0, 1, 2)))
    sim.run()
    assert len(ran) == len(scheduled) > 3_000 and sim.pending() == 0
    assert ran == sorted(scheduled)


def test_engine_refuses_a_time_its_keys_cannot_hold() -> None:
    sim = Simulator()
    sim.at(engine.MAX_TIME_NS, lambda: None)
    with pytest.raises(ValueError, match="beyond"):
        sim.at(engine.MAX_TIME_NS + 1, lambda: None)
    sim.run(until_ns=1_000)
    assert sim.now == 1_000 and sim.pending() == 1


def test_link_serializes_delays_and_impairs_deterministically() -> None:
    def run(seed: int) -> tuple[list[tuple[int, bytes]], Link]:
        sim = Simulator()
        got: list[tuple[int, bytes]] = []
        cfg = LinkConfig(rate_bps=10e9, delay_ns=1_000, loss=0.2, reorder=0.2, duplicate=0.2)
        link = Link(sim, cfg, lambda f: got.append((sim.now, f)), random.Random(seed))
        for i in range(200):
            sim.at(i * 1_000, link.transmit, i.to_bytes(2, "big") + bytes(998))
        sim.run()
        return got, link

    got, link = run(7)
    again, _ = run(7)
    assert got == again  # seeded: the same frames lost, reordered and duplicated
    c = link.counters
    assert c.lost > 10 and c.reordered > 10 and c.duplicated > 10
    assert len(got) == 200 - c.lost + c.duplicated
    ids = [int.from_bytes(f[:2], "big") for _, f in got]
    assert ids != sorted(ids)  # some frames overtaken
    # an unimpaired frame: serialization of 1000 + 24 wire bytes at 10 Gb/s plus 1 us
    first = got[0] if ids[0] == 0 else None
    if first is not None:
        assert first[0] == round(1024 * 8 / 10) + 1_000


def build_switch(sim: Simulator, cfg: SwitchConfig, rate: float = 100e9):
    """Switch with ports 1 (host A), 2 (host B), 3 (host C); returns switch and inboxes."""
    sw = Switch(sim, cfg)
    inbox: dict[int, list[bytes]] = {1: [], 2: [], 3: []}
    for port in inbox:
        sw.add_port(port, Link(sim, LinkConfig(rate_bps=rate, delay_ns=500), inbox[port].append))
    sw.add_route("10.0.0.1", 1)
    sw.add_route("10.0.0.2", 2)
    sw.add_route("10.0.0.3", 3)
    return sw, inbox


def test_switch_stamps_int_on_data_and_not_on_acks() -> None:
    sim = Simulator()
    sw, inbox = build_switch(sim, SwitchConfig(switch_id=42, ecn=False))
    sw.receive(1, data_frame(5))
    sw.receive(2, ack_frame(5))
    sim.run()
    (data,) = inbox[2]
    pkt = roce.parse(data)  # ICRC still verifies with the INT inside
    assert pkt.int_stack is not None and pkt.int_stack.hop_count == 1
    (hop,) = pkt.int_stack.hops()
    assert (hop.switch_id, hop.ingress_port, hop.egress_port) == (42, 1, 2)
    assert hop.link_rate_mbps == 100_000 and hop.queue_id == 3
    (ack,) = inbox[1]
    assert roce.parse(ack).int_stack is None and ack == ack_frame(5)


def test_switch_int_tx_bytes_and_queue_depth_track_the_port() -> None:
    sim = Simulator()
    sw, inbox = build_switch(sim, SwitchConfig(ecn=False))
    for psn in range(4):  # arrive together: the later ones see a shorter queue behind them
        sw.receive(1, data_frame(psn))
    sim.run()
    hops = [roce.parse(f).int_stack.hops()[0] for f in inbox[2]]
    assert [h.qdepth_pkts for h in hops] == [3, 2, 1, 0]
    sizes = [len(f) for f in inbox[2]]
    assert [h.tx_bytes for h in hops] == [0, sizes[0], sizes[0] + sizes[1], sum(sizes[:3])]
    assert hops[-1].egress_ts_us >= hops[0].egress_ts_us


def test_switch_marks_ce_above_kmax_only_on_ect() -> None:
    sim = Simulator()
    sw, inbox = build_switch(sim, SwitchConfig(kmin_bytes=2_000, kmax_bytes=3_000, int_enabled=False))
    for psn in range(6):
        sw.receive(1, data_frame(psn))
    sw.receive(3, data_frame(99, src_ip=IP_C, ecn=roce.ECN_NOT_ECT))
    sim.run()
    ecn = [roce.parse(f).ecn for f in inbox[2]]
    assert ecn[:3] == [roce.ECN_ECT0] * 3  # queue below Kmax when they arrived
    assert ecn[3:6] == [roce.ECN_CE] * 3
    assert ecn[6] == roce.ECN_NOT_ECT  # not ECN-capable: never marked
    assert sw.port_stats(2)["ecn_marked"] == 3


def test_switch_tail_drops_when_queue_full() -> None:
    sim = Simulator()
    sw, inbox = build_switch(sim, SwitchConfig(queue_capacity_bytes=5_000, ecn=False, int_enabled=False))
    for psn in range(10):
        sw.receive(1, data_frame(psn))
    sim.run()
    assert len(inbox[2]) == 4 and sw.port_stats(2)["drops"] == 6


def test_switch_sends_pfc_pause_and_resume_to_the_congesting_ingress() -> None:
    sim = Simulator()
    cfg = SwitchConfig(pfc=True, pfc_xoff_bytes=8_000, pfc_xon_bytes=4_000, ecn=False, int_enabled=False)
    sw, inbox = build_switch(sim, cfg, rate=10e9)
    for psn in range(12):
        sw.receive(1, data_frame(psn))
    sim.run()
    frames = [pfc.parse(f) for f in inbox[1] if pfc.is_mac_control(f)]
    assert [f.enabled() for f in frames] == [[3], [3]]
    assert frames[0].quanta[3] == 0xFFFF and frames[1].quanta[3] == 0  # XOFF then XON
    assert len(inbox[2]) == 12 and sw.total_drops() == 0
    assert sw.port_stats(1)["pauses_sent"] == 1 and sw.port_stats(1)["resumes_sent"] == 1


def test_switch_obeys_received_pause_for_that_priority_only() -> None:
    sim = Simulator()
    sw, inbox = build_switch(sim, SwitchConfig(ecn=False, int_enabled=False), rate=10e9)
    sw.receive(2, pfc.build(MAC_B, {3: 1000}))  # 1000 quanta at 10 Gb/s = 51.2 us
    times: list[int] = []
    sw.ports[2].link.deliver = lambda f: times.append(sim.now)
    sw.receive(1, data_frame(1))  # priority 3 (DSCP 26): held
    t = roce.FrameTemplate(MAC_A, MAC_B, IP_A, IP_B, 49152, 46, roce.ECN_ECT0)  # DSCP 46 -> 5
    sw.receive(1, t.build(roce.pack_bth(roce.Opcode.RDMA_WRITE_ONLY, 1, 1), roce.pack_reth(0, 1, 8), bytes(8)))
    sim.run()
    assert times[0] < 10_000  # priority 5 went at once
    assert times[1] >= 51_200  # priority 3 waited for the pause to run out
    assert sw.port_stats(2)["pauses_received"] == 1


def test_switch_counts_malformed_and_unroutable_without_crashing() -> None:
    sim = Simulator()
    sw, inbox = build_switch(sim, SwitchConfig())
    sw.receive(1, b"\x00" * 5)
    sw.receive(1, MAC_B + MAC_A + b"\x08\x00" + b"\x45")
    sw.receive(1, data_frame(1).replace(IP_B, bytes([10, 9, 9, 9]), 1))
    sw.receive(1, MAC_B + MAC_A + b"\x88\x08" + bytes(50))
    sim.run()
    assert sw.malformed == 3 and sw.unroutable == 1
    assert all(not v for v in inbox.values())


def test_link_corruption_flips_one_bit_and_a_down_link_loses_frames() -> None:
    sim = Simulator()
    got: list[bytes] = []
    link = Link(sim, LinkConfig(corrupt=1.0, delay_ns=100), got.append, random.Random(3))
    frame = bytes(range(64))
    link.transmit(frame)
    link.schedule_down(1_000, up_at_ns=2_000)
    sim.run(until_ns=1_500)
    link.transmit(frame)  # while down
    sim.run(until_ns=2_500)
    link.transmit(frame)
    sim.run()
    assert len(got) == 2 and link.counters.down_drops == 1 and link.counters.corrupted == 2
    for g in got:
        diff = [a ^ b for a, b in zip(g, frame) if a != b]
        assert len(diff) == 1 and bin(diff[0]).count("1") == 1
