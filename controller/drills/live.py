"""Drills against the running Mininet fabric (the one ``fabricctl`` finds by its state file).

The workload runs as ``fabricctl run`` runs it (``run_workload``, in a thread); meanwhile this
module polls every switch's runtime CLI (``show_ports``, ``pfc_stats``: controller/oper_status.py)
and the NICs' counters, and at the chosen fabric time injects the fault:

- link-down: the switch's interface (``SW-ethPORT``, Mininet's name) is set down with ``ip link``
  and up again after ``--for``; the veth's peer loses carrier, so both switches report it;
- pfc-storm: not built live yet (the watchdog's 200 ms of fabric time last 200 ms x the time
  dilation of wall time; a storm host needs a pause-frame sender in its namespace).

Times given are fabric time (wall time / the fabric's time dilation), as everywhere.
"""

from __future__ import annotations

import subprocess
import threading
import time
from typing import Any

from controller.drills.timeline import Timeline
from controller.oper_status import FabricMonitor
from controller.telemetry import Telemetry
from controller.workloads import run_workload
from p4rt.runtime_cli import CliClient

POLL_S = 0.05  # wall seconds between polls of the switches' port state


def set_interface(name: str, up: bool) -> None:
    subprocess.run(["ip", "link", "set", name, "up" if up else "down"], check=True, capture_output=True)


def run_link_down(state, ctl, tl: Timeline, switch: str, port: int, *, workload: str, size: int) -> Telemetry:
    """Run ``workload`` on every host, take ``switch:port`` down from ``tl.start_us`` to
    ``tl.end_us`` (fabric time from the workload's start) and record it in ``tl``."""
    missing = [name for name, info in state.switches.items() if not info.thrift_port]
    if missing:
        raise ValueError(f"no runtime CLI port for {', '.join(missing)} (the state file predates it)")
    clis = {name: CliClient(info.thrift_port, timeout=5) for name, info in state.switches.items()}
    tel = Telemetry(ctl)
    ctl.on_packet_in = tel.on_packet_in
    dilation = float(ctl.topo.time_dilation)
    fabric_us = tel.fabric_us
    monitor = FabricMonitor(ctl, {n: c.run for n, c in clis.items()}, fabric_us=lambda: fabric_us() - tl.t0_us)
    monitor.events = tl.events
    iface = f"{switch}-eth{port}"
    hosts = [h.name for h in ctl.topo.hosts]
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["run"] = run_workload(state, ctl, workload, hosts, size=size, progress=False, telemetry=tel)
        except Exception as e:  # noqa: BLE001 - reported with the drill
            result["error"] = str(e)

    monitor.poll()
    tl.t0_us = tel.alerts.t0_us = fabric_us()
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    down = up = False
    try:
        while True:
            t = fabric_us() - tl.t0_us
            if not down and t >= tl.start_us:
                set_interface(iface, False)
                down = True
            if down and not up and t >= tl.end_us:
                set_interface(iface, True)
                up = True
            monitor.poll()
            tl.sample_nics(fabric_us(), ctl.nics)
            tel.alerts.feed_nics(fabric_us(), tl.nic_samples[-1][1])
            if up and not worker.is_alive():
                break
            time.sleep(POLL_S)  # the pace of polling, not a synchronisation
    finally:
        if down and not up:
            set_interface(iface, True)
        worker.join(timeout=60 * dilation / 1e3)
        for c in clis.values():
            c.close()
    monitor.poll()
    tel.alerts.close_all(fabric_us())
    tl.alerts = [a.to_dict() for a in tel.alerts.all()]
    if "error" in result:
        tl.errors.append(result["error"])
    elif "run" in result:
        tl.errors += list(result["run"][0].errors)
    tl.take_port_deltas(tel)
    return tel
