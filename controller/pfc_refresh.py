"""The PFC refresh timer of the switches, driven by the controller.

fabric.p4 sends and re-sends a pause when a packet *arrives* from a port at or above XOFF. In
a deadlock (a cyclic buffer dependency) nothing arrives any more: each pause would run out
and let a few packets leak, while a switch MMU keeps refreshing XOFF from its buffer state on
a timer. Here the timer is this module: once per refresh interval it sends each switch one
packet-out per (PFC port, lossless priority), EtherType 0x88B5 with the priority in its body
and the port in the packet_out header, which fabric.p4 runs through the pause path of an
arrival from that port without counting it (p4src/README.md, "PFC refresh"). Opt-in: a drill
that needs pauses held up without arrivals starts it (``fabricctl drill pfc-deadlock``).

The caller paces ``tick()``: in the virtual-time fabric from the simulator's clock (fabricsim
schedules it), live every ``interval_us`` of fabric time (wall time x the time dilation).
"""

from __future__ import annotations

import threading
import time

from controller.fabric_rules import pfc_refresh_us
from nicmodel.verbs import parse_mac
from p4rt.bytestrings import canonical

ETHERTYPE_PFC_REFRESH = 0x88B5  # IEEE 802 Local Experimental EtherType 1 (p4src/include/defines.p4)


def refresh_frame(switch_mac: str, prio: int) -> bytes:
    """The tick's frame: to and from the switch's MAC (the pause's source, as for an arrival),
    EtherType 0x88B5, one byte whose low 3 bits are the priority."""
    mac = parse_mac(switch_mac)
    return mac + mac + ETHERTYPE_PFC_REFRESH.to_bytes(2, "big") + bytes([prio & 7])


class PfcRefresh:
    """One tick's packet-outs for every switch of ``ctl`` and ``ctl.settings``' lossless
    priority; ``interval_us``: the shortest refresh interval of any port (the pause path
    re-pauses at most that often anyway)."""

    def __init__(self, ctl) -> None:
        self.ctl = ctl
        fields = [(mid, name) for mid, name, _ in ctl.p4.packet_metadata("packet_out")]
        if "egress_port" not in {name for _, name in fields}:
            raise ValueError("the pipeline's packet_out header has no egress_port: no PFC refresh")
        prio = ctl.settings.classes.data_priority
        self.ticks: list[tuple[str, bytes, list[tuple[int, bytes]]]] = []
        links = []
        for sw in ctl.topo.switches:
            frame = refresh_frame(sw.mac, prio)
            for port, (_, _, link) in sorted(ctl.topo.ports_of(sw.name).items()):
                # every field of the header is required; all but the port are padding
                md = [(mid, canonical(port if name == "egress_port" else 0)) for mid, name in fields]
                self.ticks.append((sw.name, frame, md))
                links.append(link)
        self.interval_us = min((pfc_refresh_us(link) for link in links), default=1)
        self.sent = 0

    def tick(self) -> None:
        """One refresh of every (switch, port); a switch that is not connected (restarting)
        misses this one."""
        for switch, frame, md in self.ticks:
            try:
                self.ctl.conns[switch].packet_out(frame, md)
            except ConnectionError:
                continue
            self.sent += 1

    def run_live(self, stop: threading.Event) -> threading.Thread:
        """Tick every ``interval_us`` of fabric time until ``stop`` is set, in a thread."""
        period_s = self.interval_us * 1e-6 * float(self.ctl.topo.time_dilation)

        def loop() -> None:
            start, n = time.monotonic(), 0
            while not stop.is_set():
                self.tick()
                n += 1
                # paced against the start, so a late wake-up does not stretch the interval
                stop.wait(max(0.0, start + n * period_s - time.monotonic()))

        thread = threading.Thread(target=loop, name="pfc-refresh", daemon=True)
        thread.start()
        return thread
