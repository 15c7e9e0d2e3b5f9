"""Traffic manager, PFC reception and watchdog under a manual clock (no sockets)."""

from __future__ import annotations

from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause
from scapy.layers.l2 import Ether

from netbase.clock import DilatedClock, ManualClock
from netbase.ethernet import WIRE_OVERHEAD_BYTES
from p4switch.switch.link import Link
from p4switch.switch.pfc import WatchdogConfig
from p4switch.switch.tm import TrafficManager

MS = 1_000_000


def pfc_frame(**kw: int) -> bytes:
    """A PFC frame built by scapy (an independent encoder of 802.1Qbb)."""
    return bytes(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:00:09") / MACControlClassBasedFlowControl(**kw))


def pause(tm: TrafficManager, port: int, now: int, **kw: int) -> None:
    tm.receive_pause(port, pfc_frame(**kw), now)


def drain(tm: TrafficManager, now: int) -> list:
    out = []
    while (d := tm.pop(now)) is not None:
        out.append(d)
    return out


def test_queue_depth_metadata_grows_at_low_rate_and_tail_drops_are_counted() -> None:
    clock = ManualClock()
    tm = TrafficManager()
    tm.set_queue_rate(1000)  # 1 packet per ms, for every port (also ports created later)
    accepted = [tm.enqueue(1, 0, f"p{i}", 100, clock.now_ns()) for i in range(70)]
    assert accepted == [True] * 64 + [False] * 6
    assert tm.ports[1].queues[0].dropped_full == 6
    departures = []
    for _ in range(5):
        d = tm.pop(clock.now_ns())
        assert d is not None and tm.pop(clock.now_ns()) is None  # one per interval only
        departures.append(d)
        assert tm.next_event_ns(clock.now_ns()) == clock.now_ns() + MS
        clock.advance(MS)
    assert [d.item for d in departures] == ["p0", "p1", "p2", "p3", "p4"]
    assert [d.enq_qdepth for d in departures] == [0, 1, 2, 3, 4]
    assert [d.deq_qdepth for d in departures] == [63, 62, 61, 60, 59]
    assert [d.deq_timedelta for d in departures] == [0, 1000, 2000, 3000, 4000]
    assert all(d.enq_timestamp == 0 for d in departures)


def test_set_queue_depth_and_rate_per_port_and_priority() -> None:
    tm = TrafficManager(priority_queues=2)
    tm.set_queue_depth(2, port=3, priority=1)
    assert [tm.enqueue(3, 1, i, 60, 0) for i in range(3)] == [True, True, False]
    assert [tm.enqueue(3, 0, i, 60, 0) for i in range(3)] == [True, True, True]
    assert tm.ports[3].queues[1].dropped_full == 1 and tm.ports[3].queues[0].dropped_full == 0


def test_strict_priority_serves_the_highest_queue_first() -> None:
    tm = TrafficManager(priority_queues=8)
    for pr in (0, 3, 7, 0, 7, 3):
        assert tm.enqueue(1, pr, f"q{pr}", 100, 0)
    assert [(d.queue, d.item) for d in drain(tm, 0)] == [
        (7, "q7"), (7, "q7"), (3, "q3"), (3, "q3"), (0, "q0"), (0, "q0")]


def test_queues_that_empty_and_fill_again_keep_strict_priority() -> None:
    """pop and next_event_ns look only at the queues holding packets: a queue that empties
    and fills again, and one a pause holds back, are each seen at the right time."""
    tm = TrafficManager(priority_queues=8)
    tm.set_port_rate(2, 100e9)
    tm.enqueue(2, 7, "a7", 100, 0)
    assert [d.item for d in drain(tm, 0)] == ["a7"]  # queue 7 is empty again
    assert tm.pop(10_000) is None and tm.next_event_ns(10_000) is None
    tm.enqueue(2, 0, "b0", 100, 10_000)
    tm.enqueue(2, 7, "b7", 100, 10_000)
    tm.enqueue(2, 4, "b4", 100, 10_000)
    assert [tm.pop(t).item for t in (10_000, 20_000, 30_000)] == ["b7", "b4", "b0"]
    pause(tm, 2, 40_000, c7_enabled=1, c7_pause_time=1000)  # class 7 held for 5120 ns
    tm.enqueue(2, 7, "c7", 100, 40_000)
    tm.enqueue(2, 1, "c1", 100, 40_000)
    assert [d.item for d in drain(tm, 40_000)] == ["c1"]
    assert tm.next_event_ns(40_000) == 45_120
    assert [d.item for d in drain(tm, 45_120)] == ["c7"]
    assert tm.next_event_ns(50_000) is None


def test_priority_out_of_range_is_dropped_as_in_bmv2() -> None:
    tm = TrafficManager(priority_queues=1)
    assert not tm.enqueue(1, 3, "x", 100, 0)
    assert tm.dropped_bad_priority == 1 and drain(tm, 0) == []


def test_port_rate_paces_by_wire_time() -> None:
    tm = TrafficManager()
    tm.set_port_rate(1, 1e9)  # 1 Gb/s: 1000-byte frame + overhead = 8192 ns
    for i in range(3):
        tm.enqueue(1, 0, i, 1000, 0)
    d = tm.pop(0)
    assert d is not None and d.item == 0
    tm.transmitted(1, 1000, 0)
    wire = (1000 + WIRE_OVERHEAD_BYTES) * 8
    assert tm.pop(wire - 1) is None
    assert tm.next_event_ns(0) == wire
    d = tm.pop(wire)
    assert d is not None and d.item == 1


def test_pfc_pause_stops_one_class_for_quanta_times_512_bit_times_then_resumes() -> None:
    tm = TrafficManager(priority_queues=8)
    tm.set_port_rate(2, 100e9)
    pause(tm, 2, 0, c3_enabled=1, c3_pause_time=1000)  # 1000 * 512 bits at 100 Gb/s = 5120 ns
    tm.enqueue(2, 3, "paused", 100, 0)
    tm.enqueue(2, 0, "other", 100, 0)
    assert [d.item for d in drain(tm, 0)] == ["other"]  # class 0 not paused
    assert tm.pop(5119) is None
    assert tm.next_event_ns(100) == 5120
    assert [d.item for d in drain(tm, 5120)] == ["paused"]
    st = tm.ports[2].pfc.classes[3]
    assert tm.ports[2].pfc.frames_rx == 1 and st.frames == 1
    assert st.paused_ns(10_000) == 5120
    assert tm.ports[2].pfc.classes[0].paused_ns(10_000) == 0


def test_pfc_time_zero_resumes_at_once_and_paused_time_adds_up() -> None:
    tm = TrafficManager(priority_queues=8)
    tm.set_port_rate(1, 10e9)
    pause(tm, 1, 0, c5_enabled=1, c5_pause_time=0xFFFF)
    tm.enqueue(1, 5, "a", 100, 0)
    assert tm.pop(1000) is None
    pause(tm, 1, 1500, c5_enabled=1, c5_pause_time=0)
    assert [d.item for d in drain(tm, 1500)] == ["a"]
    pause(tm, 1, 2000, c5_enabled=1, c5_pause_time=10)  # 10*512 bits at 10 Gb/s = 512 ns
    st = tm.ports[1].pfc.classes[5]
    assert st.paused_ns(100_000) == 1500 + 512 and st.frames == 3


def test_classic_pause_frame_pauses_every_class_and_is_parsed_from_scapy() -> None:
    tm = TrafficManager(priority_queues=2)
    frame = bytes(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:00:09") / MACControlPause(pause_time=100))
    tm.receive_pause(1, frame, 0)  # 100 quanta at the nominal 100 Gb/s = 512 ns
    assert all(st.frames == 1 and st.paused_until == 512 for st in tm.ports[1].pfc.classes)
    tm.enqueue(1, 0, "a", 100, 0)
    tm.enqueue(1, 1, "b", 100, 0)
    assert tm.pop(511) is None
    assert [d.item for d in drain(tm, 512)] == ["b", "a"]


def test_truncated_and_unknown_mac_control_frames_are_counted_and_pause_nothing() -> None:
    tm = TrafficManager()
    tm.receive_pause(1, pfc_frame(c1_enabled=1, c1_pause_time=5)[:20], 0)
    tm.receive_pause(1, pfc_frame(c1_enabled=1, c1_pause_time=5)[:15], 0)
    gate = bytearray(pfc_frame(c1_enabled=1, c1_pause_time=5))
    gate[14:16] = b"\x00\x02"  # 802.3 GATE opcode: a MAC control frame, but not a pause
    tm.receive_pause(1, bytes(gate), 0)
    pfc = tm.ports[1].pfc
    assert (pfc.malformed_rx, pfc.other_rx, pfc.frames_rx) == (2, 1, 0)
    assert not any(st.paused(0) for st in pfc.classes)


def storm(tm: TrafficManager, port: int, cls: int, until_ms: int) -> None:
    """Pause frames for ``cls`` every 10 ms from 0 to ``until_ms`` (a PFC storm)."""
    for t in range(0, until_ms + 1, 10):
        pause(tm, port, t * MS, **{f"c{cls}_enabled": 1, f"c{cls}_pause_time": 0xFFFF})


def test_watchdog_drop_detects_a_storm_drops_and_restores() -> None:
    tm = TrafficManager(priority_queues=4)
    tm.set_port_rate(1, 1e6)  # slow port: one pause frame lasts 33 s
    tm.set_watchdog(1, 2, WatchdogConfig())  # SONiC defaults: 200 ms / 200 ms, drop
    for i in range(3):
        tm.enqueue(1, 2, i, 100, 0)
    pause(tm, 1, 0, c2_enabled=1, c2_pause_time=0xFFFF)
    assert tm.next_event_ns(1) == 200 * MS
    assert tm.pop(200 * MS - 1) is None
    st = tm.ports[1].pfc.classes[2]
    assert not st.storm
    assert tm.pop(200 * MS) is None  # storm: the queued packets are dropped, not sent
    assert st.storm and st.storms_detected == 1
    assert tm.ports[1].queues[2].dropped_watchdog == 3
    assert tm.dropped_watchdog_flush == 3  # switch-wide: these were accepted when queued
    assert not tm.enqueue(1, 2, "new", 100, 200 * MS)  # arrivals dropped during the storm
    assert tm.ports[1].queues[2].dropped_watchdog == 4
    for t in range(210, 301, 10):
        pause(tm, 1, t * MS, c2_enabled=1, c2_pause_time=0)  # frames keep coming until 300 ms
    assert tm.next_event_ns(300 * MS) == 500 * MS
    assert tm.enqueue(1, 2, "x", 100, 499 * MS) is False
    tm.pop(500 * MS)
    assert not st.storm and st.storms_restored == 1
    assert tm.enqueue(1, 2, "after", 100, 500 * MS)
    assert [d.item for d in drain(tm, 500 * MS)] == ["after"]


def test_watchdog_forward_ignores_the_pause_during_a_storm() -> None:
    tm = TrafficManager(priority_queues=1)
    tm.set_port_rate(1, 1e6)
    tm.set_watchdog(1, None, WatchdogConfig(detection_ns=50 * MS, restoration_ns=100 * MS, action="forward"))
    tm.enqueue(1, 0, "a", 100, 0)
    storm(tm, 1, 0, 40)
    assert tm.pop(49 * MS) is None
    assert [d.item for d in drain(tm, 50 * MS)] == ["a"]  # forwarded despite the pause
    st = tm.ports[1].pfc.classes[0]
    assert st.storm and tm.ports[1].queues[0].dropped_watchdog == 0


def test_watchdog_needs_a_waiting_packet() -> None:
    tm = TrafficManager()
    tm.set_port_rate(1, 1e6)
    tm.set_watchdog(1, 0, WatchdogConfig())
    pause(tm, 1, 0, c0_enabled=1, c0_pause_time=0xFFFF)
    tm.pop(300 * MS)
    assert not tm.ports[1].pfc.classes[0].storm  # paused but empty: no storm
    tm.enqueue(1, 0, "a", 100, 300 * MS)
    assert tm.next_event_ns(300 * MS) == 500 * MS


def test_wall_clock_runs_dilated_fabric_time() -> None:
    wall = [1_000_000]
    clock = DilatedClock(dilation=1000, source=lambda: wall[0])
    wall[0] += 5_000_000_000  # 5 s of wall time ...
    assert clock.now_ns() == 5_000_000  # ... are 5 ms of fabric time
    assert clock.wall_seconds(1_000_000) == 1.0  # 1 ms of fabric time takes 1 s of wall time


def test_link_loss_is_seeded_and_delay_keeps_order() -> None:
    runs = []
    for _ in range(2):
        link = Link(delay_ns=100, loss=0.3, seed=42)
        runs.append([link.submit(bytes([i]), i) for i in range(200)])
    assert runs[0] == runs[1] and 30 < runs[0].count(False) < 90
    link = Link(delay_ns=1000)
    link.submit(b"a", 0)
    link.configure(delay_ns=10)
    link.submit(b"b", 5)  # a shorter delay never overtakes the frame already on the wire
    assert link.due(999) == [] and link.due(1000) == [b"a", b"b"]


def test_watchdog_counts_a_new_storm_from_the_restoration() -> None:
    tm = TrafficManager()
    tm.set_port_rate(1, 1e5)  # 0xffff quanta = 335 s: the pause outlives the restoration
    tm.set_watchdog(1, 0, WatchdogConfig(detection_ns=100 * MS, restoration_ns=100 * MS, action="forward"))
    pause(tm, 1, 0, c0_enabled=1, c0_pause_time=0xFFFF)
    tm.enqueue(1, 0, "a", 100, 0)
    assert [d.item for d in drain(tm, 100 * MS)] == ["a"]  # storm at 100 ms: forwarded
    tm.pop(200 * MS)
    st = tm.ports[1].pfc.classes[0]
    assert not st.storm and st.storms_restored == 1  # no frame since 0: restored at 200 ms
    tm.enqueue(1, 0, "b", 100, 200 * MS)
    assert tm.pop(200 * MS) is None and not st.storm  # still paused; detection restarts
    assert tm.next_event_ns(200 * MS) == 300 * MS
    assert [d.item for d in drain(tm, 300 * MS)] == ["b"] and st.storms_detected == 2


def test_other_ports_keep_sending_after_a_watchdog_flush_and_the_switch_goes_idle() -> None:
    tm = TrafficManager(priority_queues=4)
    tm.set_port_rate(1, 1e6)
    tm.set_watchdog(1, 2, WatchdogConfig(detection_ns=10 * MS, restoration_ns=10 * MS))
    for i in range(3):
        tm.enqueue(1, 2, f"stormed{i}", 100, 0)
        tm.enqueue(2, 0, f"p2-{i}", 100, 0)
    pause(tm, 1, 0, c2_enabled=1, c2_pause_time=0xFFFF)
    out = drain(tm, 10 * MS)  # the storm flushes port 1; port 2 (no rate) sends all it holds
    assert [d.item for d in out] == ["p2-0", "p2-1", "p2-2"] and tm.dropped_watchdog_flush == 3
    assert out[-1].deq_qdepth == 0 and out[-1].deq_qbytes == 0
    tm.set_watchdog(1, None, None)
    assert tm.next_event_ns(10 * MS) is None and tm.pop(10 * MS) is None  # nothing left to do
    assert tm.enqueue(2, 1, "late", 64, 11 * MS)
    assert tm.next_event_ns(11 * MS) == 11 * MS
    assert tm.flush() == 1 and tm.next_event_ns(11 * MS) is None and tm.pop(11 * MS) is None
    assert tm.enqueue(2, 3, "after flush", 64, 12 * MS)
    assert [(d.item, d.enq_qdepth) for d in drain(tm, 12 * MS)] == [("after flush", 0)]
