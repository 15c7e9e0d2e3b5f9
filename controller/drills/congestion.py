"""The congestion drill: background traffic into one port while a RoCE workload runs, and
what each load-balancing mode makes of it.

``--into SW:PORT`` (a leaf's uplink or host port) or ``--into HOST`` (its leaf's port to it):
other hosts send best-effort UDP (priority 0, the class PFC leaves alone, no congestion
control: a traffic generator's flood) at ``--load`` of the port's rate towards a destination
behind that port. For a leaf uplink the destination is a host of another leaf, its /32
pinned to that uplink on the leaf (``FabricController.pin_route``) for the fault's length,
so the background takes that one cable as a traffic generator's flows would; the workload
runs on the hosts that are neither sender nor destination. The switch's uplinks are
measured per phase: utilisation (all classes, telemetry), queue depth and the share of the
RoCE data class's packets that left through each (``queue_stats``). DLB and spraying weigh
the egress load of the uplinks (port_load.p4) and move the workload off the congested one;
ECMP's hash does not look.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from controller.drills.timeline import PHASES, Timeline
from controller.oper_status import Event
from controller.textfmt import table
from netbase.ethernet import wire_time_ns
from netbase.ipv4 import checksum

BACKGROUND_FRAME_BYTES = 1024  # UDP frames of the background (Ethernet + IPv4 + UDP + payload)
BACKGROUND_UDP_PORT = 9  # discard: the destination NIC drops them as the non-RoCE frames they are
BACKGROUND_SPORT = 40_000  # sender i uses BACKGROUND_SPORT + i


@dataclass(frozen=True)
class Congestion:
    """Where the background goes and who sends it; ``hosts`` run the workload."""

    switch: str
    port: int
    peer: str  # what the port faces
    dst: str
    senders: tuple[str, ...]
    hosts: tuple[str, ...]
    load: float
    pinned: bool  # the destination's route is pinned to the port for the fault's length

    def describe(self) -> str:
        return (f"{', '.join(self.senders)} send {self.load:.0%} of {self.switch}:{self.port}'s rate "
                f"(to {self.peer}) towards {self.dst}, best effort")


def plan(topo, into: str, load: float) -> Congestion:
    """The drill's background for ``into`` (HOST or LEAF:PORT); ValueError if it cannot be."""
    if not 0.0 < load <= 1.0:
        raise ValueError(f"--load must be in (0, 1], got {load:g}")
    hosts = [h.name for h in topo.hosts]
    if into in hosts:
        switch, port = topo.host_port(into)
    else:
        switch, _, p = into.partition(":")
        if switch not in topo.switch_names() or not p.isdigit() or int(p) not in topo.ports_of(switch):
            raise ValueError(f"congestion: {into!r} is neither a host nor a SWITCH:PORT of {topo.name}")
        port = int(p)
    if switch not in {s.name for s in topo.leaves()}:
        raise ValueError(f"congestion: {switch} is not a leaf (the leaves' uplinks are where DLB and spraying choose)")
    peer = topo.ports_of(switch)[port][0]
    local = [h.name for h in topo.hosts_of(switch)]
    if peer in hosts:  # into a host: from one host of every other leaf
        dst, pinned = peer, False
        senders = [h.name for leaf in topo.leaves() if leaf.name != switch for h in topo.hosts_of(leaf.name)[-1:]]
    else:  # into an uplink: from this leaf's last host to another leaf's last host, pinned
        others = [h.name for h in topo.hosts if h.name not in local]
        if len(local) < 2 or not others:
            raise ValueError(f"congestion into {switch}:{port} needs two hosts on {switch} and one elsewhere")
        dst, pinned, senders = others[-1], True, local[-1:]
    workload = tuple(h for h in hosts if h != dst and h not in senders)
    if len(workload) < 2 or (pinned and not any(h in local for h in workload)):
        raise ValueError(f"congestion into {into}: too few hosts left for the workload")
    return Congestion(switch, port, peer, dst, tuple(senders), workload, load, pinned)


def pin(ctl, cong: Congestion, on: bool, monitor) -> None:
    """The background's destination pinned to the congested uplink (or back to its routes),
    recorded with the monitor's events."""
    if not cong.pinned:
        return
    ctl.pin_route(cong.switch, f"{ctl.topo.host(cong.dst).ip}/32", cong.port if on else None)
    monitor.record(Event(monitor.fabric_us(), "pin" if on else "unpin", cong.switch, cong.port,
                         detail=f"{cong.dst}/32 {'pinned to' if on else 'back from'} this port (background)"))


def interval_ns(topo, cong: Congestion) -> float:
    """Time between one sender's frames: together they offer ``load`` of the port's rate."""
    rate_bps = topo.ports_of(cong.switch)[cong.port][2].rate_gbps * 1e9
    return wire_time_ns(BACKGROUND_FRAME_BYTES, rate_bps * cong.load / len(cong.senders))


def background_frame(topo, sender: str, dst: str, index: int, dscp: int = 0) -> bytes:
    """One background frame: UDP over IPv4, DSCP ``dscp`` (0: best effort), to the sender's gateway."""
    src_h, dst_h = topo.host(sender), topo.host(dst)
    payload = bytes(BACKGROUND_FRAME_BYTES - 14 - 20 - 8)
    udp = struct.pack("!HHHH", BACKGROUND_SPORT + index, BACKGROUND_UDP_PORT, 8 + len(payload), 0)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, dscp << 2, 20 + len(udp) + len(payload), 0, 0, 64, 17, 0,
                               bytes(map(int, src_h.ip.split("."))), bytes(map(int, dst_h.ip.split(".")))))
    struct.pack_into("!H", ip, 10, checksum(ip))
    eth = bytes.fromhex(topo.switch(src_h.leaf).mac.replace(":", "") + src_h.mac.replace(":", "")) + b"\x08\x00"
    return eth + bytes(ip) + udp + payload


def watched_ports(topo, cong: Congestion) -> list[int]:
    """The switch's uplinks, and the congested port when it faces a host."""
    hosts = {h.name for h in topo.hosts}
    return sorted({p for p, (peer, _, _) in topo.ports_of(cong.switch).items() if peer not in hosts} | {cong.port})


def measure(tl: Timeline, tel, topo, cong: Congestion, data_prio: int) -> dict[int, dict[str, dict[str, float]]]:
    """Per watched port of the congested switch and phase: utilisation (mean, all classes),
    queue depth (mean of the samples, packets, all classes) and the share of the data class's
    packets that left through it (of all watched ports); ``other_packets``: the other
    classes' (the background's) packets that left through it."""
    ports = watched_ports(topo, cong)
    bounds = tl.bounds()
    util = {int(s.name.split("->")[0].split(":")[1]): s for s in tel.link_series()
            if s.name.startswith(f"{cong.switch}:")}

    def dequeued_at(t: float, port: int, data: bool = True) -> int:  # at the last sample not after t
        def count(q: dict) -> int:
            return sum(n for (p, c), (_, n) in q.items() if p == port and (c == data_prio) == data)

        best = count(tl.queue_samples[0][1]) if tl.queue_samples else 0
        for ts, q in tl.queue_samples:
            if ts <= t + 1e-9:
                best = count(q)
        return best

    out: dict[int, dict[str, dict[str, float]]] = {p: {} for p in ports}
    for phase in PHASES:
        lo, hi = bounds[phase]
        sent = {p: max(0, dequeued_at(hi, p) - dequeued_at(lo, p)) for p in ports}
        total = sum(sent.values())
        for p in ports:
            u = [v for t, v in zip(util[p].times_us, util[p].util) if lo < t <= hi] if p in util else []
            depth = [sum(d for (port, _), (d, _) in q.items() if port == p) for t, q in tl.queue_samples if lo <= t < hi]
            out[p][phase] = {"util": sum(u) / len(u) if u else 0.0,
                             "depth": sum(depth) / len(depth) if depth else 0.0,
                             "share": sent[p] / total if total else 0.0, "packets": sent[p],
                             "other_packets": max(0, dequeued_at(hi, p, False) - dequeued_at(lo, p, False))}
    return out


def uplink_table(cong: Congestion, measured: dict[int, dict[str, dict[str, float]]]) -> str:
    rows = []
    for port, phases in measured.items():
        mark = " (congested)" if port == cong.port else ""
        rows.append([f"{cong.switch}:{port}{mark}",
                     *(f"{phases[p]['util']:.0%} / {phases[p]['depth']:.1f} / {phases[p]['share']:.0%}" for p in PHASES)])
    return ("per uplink: utilisation / mean queue (packets) / share of the workload's data packets\n"
            + table(["", *PHASES], rows))


def mode_table(cong: Congestion, per_mode: dict[str, dict[int, dict[str, dict[str, float]]]]) -> str:
    """What each load-balancing mode did with the workload's packets on the congested port.
    A mode steers around it when it puts less than half an even split over the uplinks there
    during the fault. Judged against the even split, not against the mode's own "before": a mode
    run after another mode's flood can start with that uplink's load estimate still high, and
    already avoid it before its own fault (spraying live: 7 % before, 4 % during)."""
    rows = []
    for mode, measured in per_mode.items():
        m = measured.get(cong.port, {})
        during = m.get("during", {}).get("share", 0.0)
        even = 1 / max(1, len(measured))
        verdict = "steers around it" if during < even / 2 else "stays"
        rows.append([mode, *(f"{m.get(p, {}).get('share', 0.0):.0%}" for p in PHASES), verdict])
    return (f"share of the workload's data packets on {cong.switch}:{cong.port}, per load-balancing mode\n"
            + table(["mode", *PHASES, ""], rows))
