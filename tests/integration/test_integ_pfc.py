"""PFC agreement: pause frames that fabric.p4 generates are what the NIC model and scapy read
as 802.1Qbb, the NIC obeys them for the right class only, and pause frames the NIC model
builds are consumed by the switch's MAC (p4switch/switch) below the P4 pipeline and pause
exactly the addressed egress queue for ``quanta x 512`` bit times.
"""

from __future__ import annotations

from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether

from netbase import pfc
from netbase.clock import ManualClock
from nicmodel import Nic, QpConfig
from nicmodel.nic import parse_ip
from p4rt.entries import Exact
from p4switch.exec import QueueMeta
from p4switch.switch.device import Device
from tests.ports import MemoryPort

MAC_A = bytes.fromhex("02000000a001")
MAC_B = bytes.fromhex("02000000b002")
SW_P1 = bytes.fromhex("020000000101")  # switch MAC on port 1 (towards A)
SW_P2 = bytes.fromhex("020000000102")
IP_A, IP_B = "10.0.1.1", "10.0.2.2"
DSCP_ROCE, PRIO_ROCE = 26, 3
QUANTA = 0xFFFF


def leaf(sw) -> None:
    """Route A -> B out of port 2 with RoCE (DSCP 26) in class 3."""
    sw.route(int.from_bytes(parse_ip(IP_B), "big"), 2, SW_P2, MAC_B)
    sw.classify_dscp(DSCP_ROCE, PRIO_ROCE)


def sender() -> tuple[Nic, object, object]:
    a = Nic(MAC_A, IP_A)
    qa = a.create_qp(QpConfig(mtu=256, dscp=DSCP_ROCE, priority=PRIO_ROCE))
    qa.connect(SW_P1, parse_ip(IP_B), 0x99, 0)
    src = a.register_mr(bytearray(range(256)) * 4)
    return a, qa, src


def test_pause_from_fabric_p4_is_read_by_nic_and_scapy(make_switch):
    sw = make_switch()
    leaf(sw)
    sw.add("FabricIngress.pfc.pfc_port", {"standard_metadata.ingress_port": Exact(1)},
           "FabricIngress.pfc.set_pfc_port",
           {"enable_mask_value": 1 << PRIO_ROCE, "xoff_pkts": 2, "xon_pkts": 1,
            "pause_quanta": QUANTA, "refresh_us": 1000, "stale_us": 200_000})
    sw.clone_session(256 + 1, 1, cos=7)
    a, qa, src = sender()
    qa.post_write(wr_id=1, mr=src, offset=0, length=1024, remote_addr=0x1000, rkey=1)  # 4 packets
    frames = []
    t = 0
    while len(frames) < 2:  # two reach the switch before it can pause the NIC
        f = a.poll_transmit(t)
        if f is None:
            t = a.next_wakeup(t)
            continue
        frames.append(f)

    # Two packets from port 1 sit in the switch (ingress done, egress not yet): XOFF reached.
    held, sent_to_a = [], []
    for k, f in enumerate(frames):
        for job in sw.pipe.ingress(1, f, 100 + k).to_egress:
            if job.egress_port == 2:
                held.append(job)
            else:
                sent_to_a += sw.pipe.egress(job, QueueMeta(), 101 + k).transmit
    assert len(held) == 2 and [p for p, _ in sent_to_a] == [1]
    pause = sent_to_a[0][1]

    parsed = pfc.parse(pause)
    assert len(pause) == pfc.MIN_FRAME and parsed.src_mac == SW_P1
    assert parsed.enabled() == [PRIO_ROCE] and parsed.quanta[PRIO_ROCE] == QUANTA
    assert sum(parsed.quanta) == QUANTA
    sc = Ether(pause)
    assert sc.type == 0x8808 and sc.dst == "01:80:c2:00:00:01"
    m = sc[MACControlClassBasedFlowControl]
    assert m.c3_enabled == 1 and m.c3_pause_time == QUANTA
    assert not any(getattr(m, f"c{c}_enabled") for c in range(8) if c != PRIO_ROCE)

    # The NIC stops class 3 for 65535 x 512 bit times at its 100 Gb/s line rate.
    now = t + 1
    a.receive(pause, now)
    assert a.counters.pause_frames_received == 1 and dict(a.counters.drops) == {}
    assert a.poll_transmit(now) is None
    pause_ns = pfc.quanta_to_ns(QUANTA, 100e9)
    assert a.next_wakeup(now) >= now + pause_ns
    assert a.paused(PRIO_ROCE, now + pause_ns - 1) and not a.paused(0, now)

    # The held packets leave; at XON the switch sends a resume that restarts the NIC.
    resumes = []
    for k, job in enumerate(held):
        res = sw.pipe.egress(job, QueueMeta(), 200 + k)
        assert [p for p, _ in res.transmit] == [2]
        for clone in res.to_egress:
            resumes += sw.pipe.egress(clone, QueueMeta(), 200 + k).transmit
    assert [p for p, _ in resumes] == [1]
    resume = pfc.parse(resumes[0][1])
    assert resume.enabled() == [PRIO_ROCE] and resume.quanta == (0,) * 8
    assert Ether(resumes[0][1])[MACControlClassBasedFlowControl].c3_pause_time == 0
    a.receive(resumes[0][1], now + 1000)
    assert not a.paused(PRIO_ROCE, now + 1000)
    third = a.poll_transmit(now + 1000)  # the rest of the WRITE goes on
    assert third is not None and third[15] >> 2 == DSCP_ROCE
    assert a.pause_ns(PRIO_ROCE, now + 5000) == 1000


def device_with_fabric(make_switch) -> tuple[Device, ManualClock, dict[int, MemoryPort]]:
    clock = ManualClock()
    dev = Device(device_id=1, cpu_port=255, priority_queues=8, clock=clock)
    ports = {1: MemoryPort(), 2: MemoryPort()}
    for n, io in ports.items():
        dev.add_port(n, io, f"p{n}")
    sw = make_switch()
    leaf(sw)
    dev.set_program(sw.prog)
    return dev, clock, ports


def roce_frame(dscp: int) -> bytes:
    a = Nic(MAC_A, IP_A)
    qa = a.create_qp(QpConfig(mtu=256, dscp=dscp, priority=0))
    qa.connect(SW_P1, parse_ip(IP_B), 0x99, 0)
    src = a.register_mr(bytearray(64))
    qa.post_write(wr_id=1, mr=src, offset=0, length=64, remote_addr=0x1000, rkey=1)
    return a.poll_transmit(0)


def test_nic_pause_frame_is_consumed_by_switch_mac(make_switch):
    dev, clock, ports = device_with_fabric(make_switch)
    quanta = 1000  # 1000 x 512 bits at the default 100 Gb/s port speed = 5120 ns
    pause_ns = pfc.quanta_to_ns(quanta, 100e9)
    dev.receive(2, pfc.build(MAC_B, {PRIO_ROCE: quanta}))  # B pauses class 3 towards it
    assert dev.pipe.stats["packets_in"] == 0  # never reached the P4 pipeline
    assert dev.stats["rx_mac_control"] == 1
    assert dev.program.counters["FabricIngress.counters.drop_reasons"].read(3).packets == 0

    dev.receive(1, roce_frame(DSCP_ROCE))  # class 3: waits for the pause to end
    dev.receive(1, roce_frame(0))  # class 0: not paused
    assert dev.pipe.stats["packets_in"] == 2
    assert dev.poll() == pause_ns
    assert len(ports[2].sent) == 1 and ports[2].sent[0][15] >> 2 == 0
    clock.set(pause_ns - 1)
    dev.poll()
    assert len(ports[2].sent) == 1
    clock.set(pause_ns)
    dev.poll()
    assert len(ports[2].sent) == 2 and ports[2].sent[1][15] >> 2 == DSCP_ROCE
    assert ports[1].sent == []


def test_nic_resume_frame_releases_switch_queue_at_once(make_switch):
    dev, clock, ports = device_with_fabric(make_switch)
    dev.receive(2, pfc.build(MAC_B, {PRIO_ROCE: 0xFFFF}))
    dev.receive(1, roce_frame(DSCP_ROCE))
    dev.poll()
    assert ports[2].sent == []
    clock.set(1000)
    dev.receive(2, pfc.build(MAC_B, {PRIO_ROCE: 0}))
    dev.poll()
    assert len(ports[2].sent) == 1 and ports[2].sent[0][15] >> 2 == DSCP_ROCE
    assert dev.pipe.stats["packets_in"] == 1 and dev.stats["rx_mac_control"] == 2
