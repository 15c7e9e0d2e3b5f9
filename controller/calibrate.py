"""Pick the live fabric's time dilation D from what this machine sustains right now.

A live fabric runs D times slower than the fabric it models (DESIGN.md, "Time"). Too small a
D and the switch and NIC processes cannot keep up: their timers fire late, queues and RTTs
then measure the CPU, not the fabric, and results depend on how busy the machine is. So the
demo measures, at start-up and briefly (about a second each):

- the switch: packets/s of the real target process forwarding RoCE-sized frames on
  ``fabric.p4`` between two veths (:func:`lab.forwarding_rate.forwarding_rate`; any target);
- the NIC: packets/s of the RoCEv2 transport (two NIC models back to back, WRITE with ACKs)
  on one core.

and chooses D so that the fabric at full load needs at most a safe share of the machine:

    CPU seconds per fabric second = pkts/s x (1 + acks) x (hops / switch_pps + 1 / nic_pps)
    D = that / (share x cores)

with every host sending at its line rate (the worst case: the ring all-reduce can do it),
every data packet crossing ``hops`` switches (leaf, spine, leaf) and drawing one ACK back,
and each packet costing NIC work once at its sender and once at its receiver (``nic_pps``
counts packets with both). ``share`` = 0.5 leaves half of the
cores to the controller, telemetry, the kernel's veth work and everyone else on the machine.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from lab.forwarding_rate import Route, forwarding_rate
from lab.targets import Compiled
from nicmodel import Nic, QpConfig, Reliability
from nicmodel.roce import ETH_HLEN, IPV4_HLEN, UDP_HLEN
from nicmodel.roce import write_frame_bytes as data_frame_bytes

SHARE = 0.5  # of the machine's cores the dilated fabric may need at full load
HOPS = 3  # switches a packet crosses between leaves (leaf, spine, leaf)
ACKS_PER_PACKET = 1.0  # worst case: one ACK back per data packet
MIN_DILATION = 1.0
CALIBRATION_S = 1.0  # wall seconds each measurement runs

# fabric.p4 routing one flow to port 2 (p4src/README.md names): what the switch measurement installs
FABRIC_ROUTES: list[Route] = [
    ("FabricIngress.routing.routing_v4", {"hdr.ipv4.dst_addr": "10.0.2.0/24"},
     "FabricIngress.routing.route_to_port", {"port": 2}),
    ("FabricIngress.next_hop.next_hop_mac", {"standard_metadata.egress_spec": 2},
     "FabricIngress.next_hop.set_next_hop_macs", {"src_mac": "02:00:00:00:00:02", "dst_mac": "00:00:00:00:02:02"}),
]
SWITCH_MAC = "02:00:00:00:00:01"


def roce_sized_frame(mtu: int) -> bytes:
    """A UDP/4791 frame of a full WRITE's size to the fabric switch, routed by FABRIC_ROUTES."""
    payload = bytes(data_frame_bytes(mtu) - ETH_HLEN - IPV4_HLEN - UDP_HLEN)
    return bytes(Ether(dst=SWITCH_MAC, src="00:00:00:00:01:01") / IP(src="10.0.1.1", dst="10.0.2.2")
                 / UDP(sport=49152, dport=4791) / payload)


@dataclass
class Calibration:
    switch_pps: float  # one switch process, forwarding (wall time, load included)
    nic_pps: float  # NIC transport: packets per CPU second, each sent by one NIC and received by another
    cores: int
    dilation: float  # chosen D
    needed_cpu: float  # CPU seconds per fabric second at full load (the numerator)

    def describe(self) -> str:
        return (f"switch {self.switch_pps:,.0f} pkt/s, NIC {self.nic_pps:,.0f} pkt/s, {self.cores} cores: "
                f"D = {self.dilation:,.0f} keeps full load within {SHARE:.0%} of the cores")


def full_load_pps(host_rates_bps: list[float], mtu: int) -> float:
    """Data packets per fabric second if every host sends at its line rate."""
    return sum(host_rates_bps) / (8 * data_frame_bytes(mtu))


def cpu_per_fabric_second(pps: float, switch_pps: float, nic_pps: float, hops: int = HOPS,
                          acks: float = ACKS_PER_PACKET) -> float:
    """CPU seconds the live fabric spends per second of fabric time at ``pps`` data packets/s."""
    if switch_pps <= 0 or nic_pps <= 0:
        raise ValueError("calibration measured no packets (switch or NIC rate 0)")
    return pps * (1 + acks) * (hops / switch_pps + 1 / nic_pps)


def choose_dilation(needed_cpu: float, cores: int, share: float = SHARE) -> float:
    """The smallest D, rounded up to two significant digits, that fits ``share`` of ``cores``."""
    raw = max(MIN_DILATION, needed_cpu / (share * max(1, cores)))
    step = 10 ** max(0, math.floor(math.log10(raw)) - 1)
    return float(math.ceil(raw / step) * step)


def calibrate(target: str, compiled: Compiled, host_rates_bps: list[float], mtu: int,
              switch_pps: float | None = None) -> Calibration:
    """Measure (switch unless given, NIC) and choose D for this fabric's hosts and MTU."""
    if switch_pps is None:
        switch_pps = forwarding_rate(target, compiled, FABRIC_ROUTES, roce_sized_frame(mtu),
                                     seconds=CALIBRATION_S, prefix="cal").pps
    nic_pps = nic_packet_rate(mtu)
    cores = os.cpu_count() or 1
    needed = cpu_per_fabric_second(full_load_pps(host_rates_bps, mtu), switch_pps, nic_pps)
    return Calibration(switch_pps, nic_pps, cores, choose_dilation(needed, cores), needed)


def nic_packet_rate(mtu: int, seconds: float = CALIBRATION_S) -> float:
    """Packets (data and ACKs) per CPU second that the NIC transport sends at one NIC and
    receives at another: two NIC models back to back, reliable WRITEs, no I/O."""
    a = Nic("02:00:00:00:00:01", "10.0.0.1", 100e9)
    b = Nic("02:00:00:00:00:02", "10.0.0.2", 100e9)
    qa = a.create_qp(QpConfig(reliability=Reliability.GO_BACK_N, mtu=mtu))
    qb = b.create_qp(QpConfig(reliability=Reliability.GO_BACK_N, mtu=mtu))
    qa.connect(b.mac, b.ip, qb.qpn, 0)
    qb.connect(a.mac, a.ip, qa.qpn, 0)
    size = 256 * mtu
    src, dst = a.register_mr(length=size), b.register_mr(length=size)
    now, handled, wr = 0, 0, 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        if a.next_wakeup(now) is None:  # the last WRITE completed: post the next one
            a.poll_cq()
            wr += 1
            qa.post_write(wr, src, 0, size, dst.addr, dst.rkey)
        for tx, rx in ((a, b), (b, a)):
            while (frame := tx.poll_transmit(now)) is not None:
                rx.receive(frame, now)
                handled += 1
        wake = [t for t in (a.next_wakeup(now), b.next_wakeup(now)) if t is not None]
        now = max(now + 1, min(wake)) if wake else now + 1
    return handled / (time.process_time() - start)


def calibrate_fabric(target: str, compiled: Compiled, topo) -> Calibration:
    """:func:`calibrate` for ``topo``'s hosts and MTU, with fabric.p4 as ``compiled``."""
    return calibrate(target, compiled, [link_rate_bps(topo, h.name) for h in topo.hosts], topo.mtu)


def link_rate_bps(topo, host: str) -> float:
    """The line rate of ``host``'s link (fabric time)."""
    for link in topo.links:
        if host in (link.a, link.b):
            return link.rate_gbps * 1e9
    raise ValueError(f"host {host} has no link")
