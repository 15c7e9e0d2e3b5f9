"""The device hands a port that takes many frames per call (the packet-socket port's
``send_frames``, one ``sendmmsg``) every frame of a poll at once, and takes a read's frames at
once (``receive_frames``): what leaves, in which order and at which fabric time must be exactly
what one call per frame gives, with strict priorities, queue pacing and PFC pauses in play."""

from __future__ import annotations

from collections import Counter

from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether

from lab.basic_program import udp_frame
from p4switch.switch.device import TX_BATCH
from tests.ports import BatchMemoryPort, MemoryPort

MS = 1_000_000
PRIORITY_INGRESS = "apply { sm.egress_spec = 2; sm.priority = hdr.eth.type[2:0]; }"
# Class 0 of port 2 paused for 0xFFFF quanta: 335.54 us at the nominal 100 Gb/s.
PAUSE_C0 = bytes(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:00:02")
                 / MACControlClassBasedFlowControl(c0_enabled=1, c0_pause_time=0xFFFF))


def frame(prio: int, tag: bytes) -> bytes:
    return bytes(12) + (0x0800 | prio).to_bytes(2, "big") + tag


Polls = list[tuple[int, list[bytes]]]  # (fabric time of a poll, the frames it sent on port 2)


def departures(make_switch, eth_program, port_class: type[MemoryPort]) -> tuple[Polls, Counter, MemoryPort]:
    """Drive one device through a scenario; what left port 2 at each poll (fabric time, frames)."""
    device, ports = make_switch(eth_program(PRIORITY_INGRESS), (1, 2), port_class=port_class, priority_queues=8)
    clock, port2 = device.clock, ports[2]
    device.tm.set_queue_rate(1000, port=2, priority=7)  # queue 7: one packet per ms
    device.receive(2, PAUSE_C0)  # queue 0 paused until 335 us
    for i in range(3):
        for prio in (0, 3, 7):
            device.receive(1, frame(prio, b"p%d-%d" % (prio, i)))
    seen: Polls = []
    while (nxt := device.poll()) is not None or len(port2.sent) > sum(len(f) for _, f in seen):
        done = sum(len(f) for _, f in seen)
        if len(port2.sent) > done:
            seen.append((clock.now_ns(), port2.sent[done:]))
        if nxt is None:
            break
        clock.set(nxt)
    return seen, device.stats, port2


def test_a_poll_hands_its_frames_over_at_once_and_nothing_leaves_otherwise(make_switch, eth_program) -> None:
    one_by_one, stats_one, _ = departures(make_switch, eth_program, MemoryPort)
    batched, stats_batched, port2 = departures(make_switch, eth_program, BatchMemoryPort)
    assert batched == one_by_one
    assert stats_batched == stats_one
    assert port2.batches == [frames for _, frames in batched]  # one call per poll that sent
    # What the traffic manager decided: at 0 the paced queue 7 sends one and the unpaced queue 3
    # all of its frames, the paused queue 0 nothing; queue 0 leaves when its pause ends (335 us),
    # queue 7 one per ms.
    assert batched[0] == (0, [frame(7, b"p7-0"), frame(3, b"p3-0"), frame(3, b"p3-1"), frame(3, b"p3-2")])
    assert batched[1] == (335_540, [frame(0, b"p0-0"), frame(0, b"p0-1"), frame(0, b"p0-2")])
    assert batched[2:] == [(MS, [frame(7, b"p7-1")]), (2 * MS, [frame(7, b"p7-2")])]


def test_a_long_poll_hands_its_frames_over_tx_batch_at_a_time(make_switch, eth_program) -> None:
    """A poll that sends more than TX_BATCH frames on a port hands them over as soon as TX_BATCH
    are waiting (its first frames do not wait for all of its egress passes), the rest at its end."""
    device, ports = make_switch(eth_program(PRIORITY_INGRESS), (1, 2), port_class=BatchMemoryPort)
    device.tm.set_queue_depth(200, port=2)
    frames = [frame(0, b"%03d" % i) for i in range(TX_BATCH * 2 + 10)]
    for f in frames:
        device.receive(1, f)
    device.poll()
    assert [len(b) for b in ports[2].batches] == [TX_BATCH, TX_BATCH, 10]
    assert ports[2].sent == frames


def test_frames_a_batching_port_refuses_are_counted_as_tx_errors(make_switch, eth_program) -> None:
    device, ports = make_switch(eth_program(PRIORITY_INGRESS), (1, 2), port_class=BatchMemoryPort)
    ports[2].refuse = lambda f: f.endswith(b"refused")
    for tag in (b"a", b"refused", b"b", b"refused"):
        device.receive(1, frame(0, tag))
    device.poll()
    assert ports[2].sent == [frame(0, b"a"), frame(0, b"b")]
    assert (device.stats["tx"], device.stats["tx_errors"], device.port_tx[2]) == (2, 2, 2)


def test_frames_received_together_are_handled_as_one_by_one(make_switch, basic_program) -> None:
    """receive_frames: the same frames out, the same counters, a PFC frame among them consumed."""
    frames = [bytes(udp_frame("10.0.2.2", bytes([i]) * 20)) for i in range(3)]
    frames.insert(1, PAUSE_C0)
    results = []
    for together in (False, True):
        device, ports = make_switch(basic_program, port_class=BatchMemoryPort)
        if together:
            device.receive_frames(1, frames)
        else:
            for f in frames:
                device.receive(1, f)
        device.poll()
        results.append((ports[2].sent, device.stats, device.port_rx, device.tm.port(1).pfc.classes[0].paused_until))
    assert results[0] == results[1]
    sent, stats, port_rx, paused_until = results[1]
    assert len(sent) == 3 and stats["rx"] == 4 and stats["rx_mac_control"] == 1 and port_rx[1] == 4
    assert paused_until > 0
