"""The device in process: basic.p4 through ingress, traffic manager, egress, links, CPU port,
MAC-level PFC and pcap, under a manual clock with in-memory ports."""

from __future__ import annotations

import subprocess
import threading

import pytest
from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether

from lab.basic_program import CPU_PORT, PORT_COUNTER, QDEPTH_REGISTER, TABLE, TO_CPU, routed, udp_frame
from p4rt.entries import ActionCall, Lpm, TableEntry
from p4switch.switch.commands import Commands
from p4switch.switch.pcap import read_pcap
from p4switch.switch.pfc import WatchdogConfig

MS = 1_000_000
H2_MAC = "00:00:00:00:02:02"
# 802.1Qbb by scapy (an encoder independent of ours): class 0 paused for 100 quanta.
PFC_C0_100 = bytes(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:00:02")
                   / MACControlClassBasedFlowControl(c0_enabled=1, c0_pause_time=100))


def udp(dst: str, payload: bytes = b"hello p4switch!!") -> bytes:
    return bytes(udp_frame(dst, payload))


def out(frame: bytes) -> bytes:
    return bytes(routed(frame, H2_MAC))


@pytest.fixture()
def dev(basic_program, make_switch):
    device, ports = make_switch(basic_program, cpu_port=CPU_PORT, priority_queues=1)
    return device, device.clock, ports, basic_program


def test_routes_a_packet_between_ports(dev) -> None:
    device, _, ports, _ = dev
    frame = udp("10.0.2.2")
    device.receive(1, frame)
    device.poll()
    assert ports[2].sent == [out(frame)]
    assert ports[1].sent == [] and ports[3].sent == []
    assert device.stats["rx"] == 1 and device.stats["tx"] == 1


@pytest.mark.parametrize("one_thread", [False, True])
def test_only_a_one_thread_device_forwards_while_another_thread_holds_its_lock(
        basic_program, make_switch, one_thread: bool) -> None:
    """The simulator's devices (``one_thread``: receive and poll come from the thread that also
    serves P4Runtime) forward without taking the lock; a live switch's wait for it."""
    device, ports = make_switch(basic_program, cpu_port=CPU_PORT, priority_queues=1, one_thread=one_thread)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with device.lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        held.wait(10)
        forward = threading.Thread(target=lambda: (device.receive(1, udp("10.0.2.2")), device.poll()))
        forward.start()
        forward.join(0.5)
        assert forward.is_alive() is not one_thread
        assert len(ports[2].sent) == (1 if one_thread else 0)
    finally:
        release.set()
        holder.join()
        forward.join(10)
    assert ports[2].sent == [out(udp("10.0.2.2"))]


def test_a_port_counts_only_frames_its_interface_took(dev) -> None:
    """A frame the kernel refuses (the port's send returns False: too big, buffers full) is a
    tx error, not a frame that left: the port's tx count stays put."""
    device, _, ports, _ = dev
    device.receive(1, udp("10.0.2.2"))
    device.poll()
    ports[2].refuse = lambda frame: True
    device.receive(1, udp("10.0.2.3"))
    device.poll()
    assert device.port_tx[2] == 1 and device.stats["tx"] == 1 and device.stats["tx_errors"] == 1
    extra = next(extra for port, _, _, extra in Commands(device).ports() if port == 2)  # what show_ports prints
    assert extra["tx"] == "1"


def test_a_port_number_beyond_v1models_is_refused_and_the_ports_keep_forwarding(dev) -> None:
    """v1model's port numbers have 9 bits: a port numbered 512 could never be an egress port.
    Refused with the range; the ports already there forward as before."""
    device, _, ports, _ = dev
    with pytest.raises(ValueError, match=r"port 512 is not a v1model port number \(0\.\.511\)"):
        device.add_port(512, ports[1])
    frame = udp("10.0.2.2")
    device.receive(1, frame)
    device.poll()
    assert ports[2].sent == [out(frame)] and device.port_rx[1] == 1 and device.port_tx[2] == 1


def test_low_queue_rate_shows_growing_queue_depth_to_the_program(dev) -> None:
    device, clock, ports, prog = dev
    device.tm.set_queue_rate(1000, port=2)
    seen = prog.registers[QDEPTH_REGISTER]
    for i in range(5):
        device.receive(1, udp("10.0.2.2", payload=bytes([i]) * 20))
    depths = []
    for i in range(5):
        nxt = device.poll()
        depths.append(seen.read(2))
        assert len(ports[2].sent) == i + 1
        if i < 4:
            assert nxt == clock.now_ns() + MS
            clock.set(nxt)
    assert depths == [0, 1, 2, 3, 4]
    assert [Ether(f).load[0] for f in ports[2].sent] == [0, 1, 2, 3, 4]


def test_tail_drop_is_counted(dev) -> None:
    device, _, ports, _ = dev
    device.tm.set_queue_rate(1, port=2)
    device.tm.set_queue_depth(4, port=2)
    for _ in range(10):
        device.receive(1, udp("10.0.2.2"))
    device.poll()
    assert len(ports[2].sent) == 1
    assert device.stats["drop_tm"] == 6 and device.tm.port(2).queues[0].dropped_full == 6


def test_pfc_frame_pauses_egress_and_never_reaches_the_program(dev) -> None:
    device, clock, ports, prog = dev
    device.tm.set_port_rate(2, 1e9)  # 100 quanta * 512 bit at 1 Gb/s = 51.2 us
    device.receive(2, PFC_C0_100)
    device.receive(1, udp("10.0.2.2"))
    assert device.poll() == 51_200
    assert ports[2].sent == []
    clock.set(51_200)
    device.poll()
    assert len(ports[2].sent) == 1
    assert prog.counters[PORT_COUNTER].read(2).packets == 0  # consumed by the MAC
    assert prog.counters[PORT_COUNTER].read(1).packets == 1
    assert device.stats["rx_mac_control"] == 1
    assert device.tm.port(2).pfc.classes[0].paused_ns(clock.now_ns()) == 51_200


def test_malformed_mac_control_frames_are_consumed_by_the_mac_and_counted(dev) -> None:
    device, _, ports, prog = dev
    for frame in (PFC_C0_100[:15], PFC_C0_100[:20]):
        device.receive(2, frame)
    device.poll()
    assert device.stats["rx_mac_control"] == 2 and device.tm.port(2).pfc.malformed_rx == 2
    assert prog.counters[PORT_COUNTER].read(2).packets == 0  # never seen by the program
    assert all(not io.sent for io in ports.values())


def test_packet_out_and_packet_in_through_the_cpu_port(dev) -> None:
    device, _, ports, prog = dev
    got: list[bytes] = []
    device.on_packet_in = got.append
    frame = udp("10.0.3.3")
    device.packet_out((3 << 7).to_bytes(2, "big") + frame)  # packet_out header: egress_port=3
    device.poll()
    assert ports[3].sent == [frame]
    prog.tables[TABLE].insert(TableEntry({"hdr.ipv4.dstAddr": Lpm(0x0A000700, 24)}, ActionCall(TO_CPU)))
    frame = udp("10.0.7.1")
    device.receive(2, frame)
    device.poll()
    assert got == [(2 << 7).to_bytes(2, "big") + frame]  # packet_in header: ingress_port=2


def test_a_failing_packet_in_handler_loses_its_frame_only(dev) -> None:
    """The device reuses its pipeline result lists: a handler that raises must not leave a
    frame behind to be sent again with the next packet."""
    device, _, ports, prog = dev
    prog.tables[TABLE].insert(TableEntry({"hdr.ipv4.dstAddr": Lpm(0x0A000700, 24)}, ActionCall(TO_CPU)))
    got: list[bytes] = []

    def refuse(frame: bytes) -> None:
        raise RuntimeError("controller gone")

    device.on_packet_in = refuse
    device.receive(2, udp("10.0.7.1"))
    with pytest.raises(RuntimeError):
        device.poll()
    device.on_packet_in = got.append
    second = udp("10.0.7.2")
    device.receive(2, second)
    device.poll()
    assert got == [(2 << 7).to_bytes(2, "big") + second]
    device.receive(1, udp("10.0.2.2"))
    device.poll()
    assert ports[2].sent == [out(udp("10.0.2.2"))] and len(got) == 1


def test_a_handler_that_re_enters_the_device_sees_every_frame_once(dev) -> None:
    """In the simulator a packet-out polls the device at once (``notify``), from inside the
    packet-in handler: the inner pass must not share the outer pass's reused result lists."""
    device, _, ports, prog = dev
    prog.tables[TABLE].insert(TableEntry({"hdr.ipv4.dstAddr": Lpm(0x0A000700, 24)}, ActionCall(TO_CPU)))
    device.notify = device.poll
    got: list[bytes] = []
    answer = udp("10.0.3.3")

    def handler(frame: bytes) -> None:
        got.append(frame)
        if len(got) == 1:
            device.packet_out((3 << 7).to_bytes(2, "big") + answer)  # polls the device again

    device.on_packet_in = handler
    first, second = udp("10.0.7.1"), udp("10.0.7.2")
    device.receive_frames(2, [first, second])
    device.poll()
    assert got == [(2 << 7).to_bytes(2, "big") + f for f in (first, second)]
    assert ports[3].sent == [answer]


def test_link_delay_and_loss(dev) -> None:
    device, clock, ports, _ = dev
    device.set_link(2, delay_ns=10_000)
    frame = udp("10.0.2.2")
    device.receive(1, frame)
    assert device.poll() == 10_000
    assert ports[2].sent == []
    clock.set(10_000)
    device.poll()
    assert ports[2].sent == [out(frame)]
    device.set_link(2, delay_ns=0, loss=1.0)
    for _ in range(3):
        device.receive(1, frame)
    device.poll()
    assert len(ports[2].sent) == 1 and device.stats["drop_link_loss"] == 3 and device.links[2].lost == 3


def test_garbage_frames_are_counted_not_fatal(dev) -> None:
    device, _, ports, prog = dev
    for junk in (b"", b"\x01", b"\xff" * 13, b"\x00" * 20, udp("10.0.2.2")[:20], b"\xab" * 9000):
        device.receive(1, junk)
    device.poll()
    frame = udp("10.0.2.2")
    device.receive(1, frame)
    device.poll()
    assert ports[2].sent == [out(frame)]
    assert device.stats["rx"] == 7 and device.pipe.stats["dropped_ingress"] == 6


def test_pcap_capture_in_and_out_is_readable_by_tshark(dev, tmp_path) -> None:
    device, clock, ports, _ = dev
    device.enable_pcap(tmp_path)
    frame = udp("10.0.2.2")
    device.receive(1, frame)
    clock.advance(5000)
    device.poll()
    device.close()
    (ts_in, got_in), = read_pcap(tmp_path / "p1_in.pcap")
    (ts_out, got_out), = read_pcap(tmp_path / "p2_out.pcap")
    assert got_in == frame and got_out == out(frame)
    assert ts_out - ts_in == 5000
    shown = subprocess.run(["tshark", "-r", str(tmp_path / "p2_out.pcap"), "-T", "fields", "-e", "ip.dst", "-e", "ip.ttl"],
                         capture_output=True, text=True, timeout=60)
    assert shown.stdout.split() == ["10.0.2.2", "63"]


# The low 3 bits of the EtherType pick the priority (queue).
PRIORITY_INGRESS = "apply { sm.egress_spec = 2; sm.priority = hdr.eth.type[2:0]; }"


def test_v1model_priority_selects_a_strict_priority_queue(eth_program, make_switch) -> None:
    device, ports = make_switch(eth_program(PRIORITY_INGRESS), (1, 2), priority_queues=8)
    clock, port2 = device.clock, ports[2]
    device.tm.set_queue_rate(1000, port=2)  # one packet per ms per queue
    device.tm.set_port_rate(2, 1e6)  # and a 1 Mb/s port: ~1 ms per frame, whatever the queue
    for prio, tag in ((0, b"low1"), (0, b"low2"), (0, b"low3"), (7, b"high1"), (7, b"high2")):
        device.receive(1, bytes(12) + (0x0800 | prio).to_bytes(2, "big") + tag)
        if tag == b"low1":
            device.poll()  # low1 leaves at once and occupies the port; the rest queue up
    order = [port2.sent[0][14:]]
    for _ in range(20):
        nxt = device.poll()
        order += [f[14:] for f in port2.sent[len(order):]]
        if nxt is None:
            break
        clock.set(nxt)
    assert order == [b"low1", b"high1", b"high2", b"low2", b"low3"]
    assert device.tm.port(2).queues[7].dequeued == 2 and device.tm.port(2).queues[0].dequeued == 3


RECIRCULATE_INGRESS = "apply { sm.egress_spec = hdr.eth.type == 0x0802 ? (bit<9>) 2 : (bit<9>) 1; }"
RECIRCULATE_EGRESS = """
    apply {
        if (hdr.eth.type == 0x0801) {
            hdr.eth.type = 0x0802;
            recirculate_preserving_field_list(0);
        }
    }"""


def test_recirculated_frames_go_through_ingress_again(eth_program, make_switch) -> None:
    device, ports = make_switch(eth_program(RECIRCULATE_INGRESS, RECIRCULATE_EGRESS), (1, 2))
    device.receive(1, bytes(12) + b"\x08\x01" + b"around again")
    for _ in range(3):
        device.poll()
    assert ports[1].sent == []
    assert ports[2].sent == [bytes(12) + b"\x08\x02" + b"around again"]
    assert device.stats["recirculated"] == 1


def test_watchdog_flush_of_a_stuck_queue_is_counted_and_nothing_leaves(dev) -> None:
    device, clock, ports, _ = dev
    device.tm.set_port_rate(2, 1e6)  # 0xFFFF quanta at 1 Mb/s: a pause of 33 s
    device.tm.set_watchdog(2, 0, WatchdogConfig())  # SONiC defaults: detect after 200 ms, drop
    device.receive(2, bytes(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:00:02")
                            / MACControlClassBasedFlowControl(c0_enabled=1, c0_pause_time=0xFFFF)))
    device.receive(1, udp("10.0.2.2"))
    device.poll()
    assert ports[2].sent == []
    clock.set(200_000_000)
    device.poll()
    assert ports[2].sent == []  # flushed by the watchdog, not transmitted
    assert device.tm.dropped_watchdog_flush == 1
