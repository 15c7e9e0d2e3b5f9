"""fabric.p4 PFC accounting survives packets the traffic manager drops.

A packet is counted for PFC at ingress and uncounted at egress; one tail-dropped in between
never reaches egress. The program keeps the count in two generations and forgets packets
still counted after the stale time (``set_pfc_port(..., stale_us)``, p4src/README.md), so a
burst beyond the queue's capacity cannot leave the sender paused for good. These tests run
fabric.p4 on our switch's real traffic manager (tail drop at the queue capacity) with a
manual clock; the PTF test ``fabric_pfc.PfcLostPacketsForgottenTest`` does the same through
veths with the entries a reference switch would take.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.pfc_refresh import refresh_frame
from netbase.clock import ManualClock
from p4rt.entries import ActionCall, CloneSession, Exact, Lpm, Replica, TableEntry, Ternary
from p4switch.exec import LoadedProgram
from p4switch.frontend import compile_file
from p4switch.switch.device import Device
from ptf_tests.fabric.fabric_packets import parse_pfc, roce
from tests.ports import MemoryPort

FABRIC = Path(__file__).resolve().parents[2] / "p4src" / "fabric.p4"
PRIO = 3
INDEX = 1 * 8 + PRIO  # (ingress port 1, priority 3)
XOFF, XON, QUEUE = 4, 2, 8
BURST = 20
REFRESH_US, STALE_US = 100, 1000
QUANTA = 0xFFFF
SW_MAC = 0x020000000001


@pytest.fixture(scope="module")
def checked():
    return compile_file(str(FABRIC))


class Leaf:
    """Port 1 faces the sender (PFC on priority 3), port 2 the receiver, whose queue holds 8."""

    def __init__(self, checked, stale_us: int = STALE_US) -> None:
        self.prog = LoadedProgram.from_checked(checked)
        self.clock = ManualClock(1_000_000)
        self.dev = Device(device_id=1, cpu_port=255, priority_queues=8, clock=self.clock)
        self.ports = {1: MemoryPort(), 2: MemoryPort()}
        for n, io in self.ports.items():
            self.dev.add_port(n, io, f"leak{n}")
        t = self.prog.tables
        t["FabricIngress.classify.classify"].insert(TableEntry(
            {"hdr.ipv4.dscp": Ternary(26, 0x3F)}, ActionCall("FabricIngress.classify.set_priority", {"priority": PRIO}), 10))
        t["FabricIngress.routing.routing_v4"].insert(TableEntry(
            {"hdr.ipv4.dst_addr": Lpm(0x0A000200, 24)}, ActionCall("FabricIngress.routing.route_to_port", {"port": 2})))
        t["FabricIngress.next_hop.next_hop_mac"].insert(TableEntry(
            {"standard_metadata.egress_spec": Exact(2)},
            ActionCall("FabricIngress.next_hop.set_next_hop_macs", {"src_mac": 0x020000000002, "dst_mac": 0x0202})))
        t["FabricIngress.pfc.pfc_port"].insert(TableEntry(
            {"standard_metadata.ingress_port": Exact(1)},
            ActionCall("FabricIngress.pfc.set_pfc_port",
                       {"enable_mask_value": 1 << PRIO, "xoff_pkts": XOFF, "xon_pkts": XON, "pause_quanta": QUANTA,
                        "refresh_us": REFRESH_US, "stale_us": stale_us})))
        self.prog.pre.set_clone_session(CloneSession(256 + 1, [Replica(1, 0)], cos=7))
        self.dev.set_program(self.prog)
        self.dev.tm.set_queue_depth(QUEUE, 2)
        self.psn = 0

    def send(self, count: int = 1) -> tuple[int, list[int]]:
        """``count`` RoCE packets from port 1 at the current time, then everything due is sent;
        returns (packets out of port 2, pause times of priority 3 in the PFC frames on port 1)."""
        before2, before1 = len(self.ports[2].sent), len(self.ports[1].sent)
        for _ in range(count):
            self.dev.receive(1, roce(psn=self.psn))
            self.psn += 1
        self.dev.poll()
        frames = [parse_pfc(f) for f in self.ports[1].sent[before1:]]
        assert all(vector == 1 << PRIO for vector, _ in frames)
        return len(self.ports[2].sent) - before2, [times[PRIO] for _, times in frames]

    def at_us(self, us: int) -> None:
        self.clock.set(us * 1000)

    def register(self, name: str) -> int:
        return self.prog.registers[name].read(INDEX)

    def resumes(self) -> int:
        return self.prog.counters["FabricEgress.pfc.pfc_resumes_sent"].read(INDEX).packets


def burst_with_tail_drops(leaf: Leaf) -> None:
    """20 packets at once into a queue of 8: the pause goes out, 12 packets are tail-dropped
    after ingress counted them, and the count stays above XOFF once the queue has drained."""
    sent, pauses = leaf.send(BURST)
    assert sent == QUEUE and pauses == [QUANTA]
    assert leaf.dev.stats["drop_tm"] == BURST - QUEUE
    assert leaf.register("pfc_buffered") == BURST - QUEUE and leaf.register("pfc_paused") == 1


def test_resume_after_stale_time_and_next_packet_does_not_pause(checked) -> None:
    leaf = Leaf(checked)
    burst_with_tail_drops(leaf)
    leaf.at_us(1000 + 2 * STALE_US)  # nothing arrived for two stale times: both generations are old
    assert leaf.send() == (1, [0])  # forwarded, and the sender is resumed
    assert leaf.resumes() == 1
    assert leaf.register("pfc_buffered") == 0 and leaf.register("pfc_paused") == 0
    leaf.at_us(1000 + 2 * STALE_US + 10)
    assert leaf.send() == (1, [])  # one packet in flight is far below XOFF: no pause
    assert leaf.register("pfc_buffered") == 0


def test_lost_packets_forgotten_under_continuous_traffic(checked) -> None:
    """The sender keeps sending one packet every 200 us (each leaves before the next comes):
    the lost packets are forgotten within two stale times although packets keep leaving, and
    from then on single packets never pause the sender again."""
    leaf = Leaf(checked)
    burst_with_tail_drops(leaf)
    frames: list[tuple[int, list[int]]] = []
    for k in range(1, 16):
        leaf.at_us(1000 + 200 * k)
        sent, times = leaf.send()
        assert sent == 1
        frames.append((1000 + 200 * k, times))
    resumed = [t for t, times in frames if times == [0]]
    assert len(resumed) == 1 and resumed[0] <= 1000 + 2 * STALE_US + 200
    assert all(times == [QUANTA] for t, times in frames if t < resumed[0])  # leaked count: re-paused
    assert all(times == [] for t, times in frames if t > resumed[0])
    assert leaf.register("pfc_buffered") == 0 and leaf.register("pfc_paused") == 0


def test_packets_younger_than_stale_time_stay_counted(checked) -> None:
    """Packets that wait in a slow queue for less than the stale time are not forgotten: the
    sender stays paused while they wait, and the resume comes from egress when the queue
    drains to XON, as without tail drops."""
    leaf = Leaf(checked, stale_us=1_000_000)
    leaf.dev.tm.set_queue_rate(100, 2)  # one packet every 10 ms
    sent, pauses = leaf.send(XOFF + 2)
    assert pauses == [QUANTA]
    leaf.at_us(1000 + 500)
    more, pauses = leaf.send()
    assert pauses == [QUANTA]  # still above XOFF after the refresh time: paused again
    later: list[int] = []
    for k in range(1, 11):
        leaf.at_us(1000 + 10_000 * k)
        n, pauses = leaf.send(0)
        sent += n
        later += pauses
    assert later == [0] and sent + more == XOFF + 3  # one resume once the queue drained to XON
    assert leaf.register("pfc_buffered") == 0 and leaf.resumes() == 1


def refresh(leaf: Leaf, port: int = 1) -> list[int]:
    """The controller's PFC refresh tick for (``port``, priority 3) as a packet-out (the
    packet_out header names the port; controller/pfc_refresh.py builds the frame); returns the
    pause times of priority 3 sent out of port 1."""
    before = len(leaf.ports[1].sent)
    leaf.dev.packet_out((port << 7).to_bytes(2, "big") + refresh_frame("02:00:00:00:00:01", PRIO))
    leaf.dev.poll()
    return [times[PRIO] for _, times in (parse_pfc(f) for f in leaf.ports[1].sent[before:])]


def test_refresh_tick_keeps_a_port_paused_without_arrivals(checked) -> None:
    """A deadlocked sender sends nothing: only the refresh tick re-sends its pause, as long as
    the port stays at or above XOFF; the tick itself goes nowhere and is not counted."""
    leaf = Leaf(checked, stale_us=1_000_000)
    leaf.dev.tm.set_queue_rate(100, 2)  # one packet every 10 ms: the queue holds them
    sent, pauses = leaf.send(XOFF + 2)
    assert pauses == [QUANTA]
    buffered = leaf.register("pfc_buffered")
    for k in range(1, 4):  # every refresh interval, nothing arriving
        leaf.at_us(1000 + k * REFRESH_US)
        assert refresh(leaf) == [QUANTA]
    assert leaf.register("pfc_buffered") == buffered  # ticks are not counted
    assert len(leaf.ports[2].sent) == sent  # nor forwarded
    assert refresh(leaf, port=2) == []  # a port without PFC: nothing


def test_refresh_tick_below_xoff_sends_nothing_and_from_a_host_is_dropped(checked) -> None:
    leaf = Leaf(checked)
    assert leaf.send(XOFF - 2)[1] == []
    leaf.at_us(1000 + REFRESH_US)
    assert refresh(leaf) == []
    # the same frame from the wire (a host forging ticks) is dropped as non-IPv4
    leaf.dev.tm.set_queue_rate(100, 2)
    leaf.send(XOFF + 2)
    before = len(leaf.ports[1].sent)
    leaf.at_us(1000 + 3 * REFRESH_US)
    leaf.dev.receive(1, refresh_frame("02:00:00:00:00:01", PRIO))
    leaf.dev.poll()
    assert leaf.ports[1].sent[before:] == []


def test_refresh_tick_forgets_lost_packets_and_resumes_without_arrivals(checked) -> None:
    """Lost packets (tail drops) are forgotten on the tick as on an arrival: the sender that
    stopped altogether gets its resume within two stale times."""
    leaf = Leaf(checked)
    burst_with_tail_drops(leaf)
    leaf.at_us(1000 + STALE_US + 1)
    assert refresh(leaf) == [QUANTA]  # new generation; the lost ones are still in the old one
    leaf.at_us(1000 + 2 * STALE_US + 2)
    assert refresh(leaf) == [0]
    assert leaf.register("pfc_buffered") == 0 and leaf.register("pfc_paused") == 0 and leaf.resumes() == 1


def test_refresh_tick_keeps_the_pause_between_xon_and_xoff_until_xon(checked) -> None:
    """Paused, the port drains below XOFF but stays above XON (the hysteresis band): the tick
    still re-pauses (an MMU's XOFF state); at XON egress resumes and ticks send nothing."""
    leaf = Leaf(checked, stale_us=1_000_000)
    leaf.dev.tm.set_queue_rate(100, 2)  # one packet every 10 ms
    sent, pauses = leaf.send(XOFF + 2)
    assert pauses == [QUANTA]
    while leaf.register("pfc_buffered") > XON + 1:  # XON < count < XOFF
        leaf.at_us(leaf.clock.now_ns() // 1000 + 10_000)
        leaf.send(0)
    assert refresh(leaf) == [QUANTA]
    leaf.at_us(leaf.clock.now_ns() // 1000 + 10_000)
    assert leaf.send(0)[1] == [0]  # the count fell to XON: egress resumed
    assert refresh(leaf) == []
