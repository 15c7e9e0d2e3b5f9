"""Drills against the running Mininet fabric (the one ``fabricctl`` finds by its state file).

The workload runs as ``fabricctl run`` runs it (``run_workload``, in a thread); meanwhile this
module polls every switch's runtime CLI (``show_ports``, ``pfc_stats``: controller/oper_status.py)
and the NICs' counters, and at the chosen fabric time injects the fault:

- link-down: the switch's interface (``SW-ethPORT``, Mininet's name) is set down with ``ip link``
  and up again after ``--for``; the veth's peer loses carrier, so both switches report it;
- switch-restart: the switch's process (its PID from the state file) is killed with SIGKILL;
  the fabric's supervisor (topo/fabric.py, ``FabricNet.supervise``) starts it again with its
  ports, and the controllers' sessions come back and re-push pipeline and entries;
- pfc-storm: every switch's PFC watchdog is armed (runtime CLI ``pfc_watchdog``) and the host
  sends XOFF frames from its own namespace (frame_sender.py under ``nsenter``). The detection
  time is fabric time: 200 ms last 200 ms x the dilation of wall time (over an hour at
  D=20000), so ``--detect`` shortens it for a live rehearsal.

Times given are fabric time (wall time / the fabric's time dilation), as everywhere.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from controller.drills import congestion
from controller.drills.congestion import Congestion
from controller.drills.timeline import Timeline
from controller.oper_status import Event, FabricMonitor
from controller.telemetry import Telemetry
from controller.workloads import run_workload
from netbase import pfc
from p4rt.runtime_cli import CliClient

PROJECT_ROOT = Path(__file__).resolve().parents[2]
POLL_S = 0.05  # wall seconds between polls of the switches' port state
SENDER_START_S = 30.0  # wall seconds a frame sender may take to send its first frame


def set_interface(name: str, up: bool) -> None:
    subprocess.run(["ip", "link", "set", name, "up" if up else "down"], check=True, capture_output=True)


def run_link_down(state, ctl, tl: Timeline, switch: str, port: int, *, workload: str, size: int,
                  nic_settings=None) -> Telemetry:
    """Run ``workload`` on every host, take ``switch:port`` down from ``tl.start_us`` to
    ``tl.end_us`` (fabric time from the workload's start) and record it in ``tl``."""
    iface = f"{switch}-eth{port}"
    return run(state, ctl, tl, lambda clis, monitor: set_interface(iface, False), lambda monitor: set_interface(iface, True),
               workload=workload, size=size, nic_settings=nic_settings)


def start_sender(state, host: str, frame: bytes, interval_s: float, duration_s: float) -> subprocess.Popen:
    """``host`` sends ``frame`` every ``interval_s`` wall seconds for ``duration_s`` from its own
    namespace (frame_sender.py under ``nsenter``), as the host itself would. Returns once the
    first frame is out, so the fault begins when the drill says, not a Python start-up later
    (tenths of a wall second: many fabric microseconds at a large dilation)."""
    cmd = ["nsenter", f"--net=/proc/{state.nics[host].pid}/ns/net", sys.executable, "-m",
           "controller.drills.frame_sender", f"{host}-eth0", frame.hex(), str(interval_s), str(duration_s)]
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}  # the sender imports netbase from here
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if select.select([proc.stdout], [], [], SENDER_START_S)[0]:
        proc.stdout.readline()  # its "sending", or nothing when it failed (wait_senders reports it)
    return proc


def wait_senders(procs: list[subprocess.Popen], timeout_s: float, tl: Timeline) -> None:
    """Let the senders finish their time (killed if they overrun it by ``timeout_s``); one
    that failed is an error of the drill."""
    for p in procs:
        try:
            p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        err = p.stderr.read().decode(errors="replace").strip() if p.stderr else ""
        if p.returncode:
            tl.errors.append(f"frame sender exited with {p.returncode}: {err.splitlines()[-1] if err else ''}")


def nic_messages(nics: Mapping[str, Any], fabric_us: Callable[[], float], t0_us: float) -> list[dict[str, Any]]:
    """The workload's messages on the drill's clock (microseconds from ``t0_us``). Each NIC
    stamps them with its own fabric clock, counted from its process's start; the offset to
    ours is read around a status call (wall milliseconds: a fraction of a fabric microsecond
    at the dilations the fabric runs live with)."""
    out: list[dict[str, Any]] = []
    for nic in nics.values():
        try:
            before = fabric_us()
            nic_us = nic.status()["now_ns"] / 1e3
            offset = (before + fabric_us()) / 2 - nic_us - t0_us
            messages = nic.stats().get("messages", [])
        except Exception:  # noqa: BLE001 - a NIC gone: its messages are missing from the table
            continue
        for m in messages:
            end = m.get("end_ns")
            out.append({"size": m["size"], "start_us": m["start_ns"] / 1e3 + offset,
                        "ideal_us": (m.get("ideal_ns") or 0) / 1e3, "end_us": None if end is None else end / 1e3 + offset})
    return out


def run_storm(state, ctl, tl: Timeline, host: str, prio: int, *, action: str, detect_ms: float,
              workload: str, size: int, nic_settings=None) -> Telemetry:
    """Every switch's watchdog armed on ``prio`` (fabric ms); ``host`` sends XOFF on ``prio``
    from its interface from ``tl.start_us`` to ``tl.end_us``."""
    dilation = float(ctl.topo.time_dilation)
    frame = pfc.build(bytes.fromhex(ctl.topo.host(host).mac.replace(":", "")), {prio: 0xFFFF})
    interval_s = STORM_INTERVAL_US * 1e-6 * dilation
    proc: list[subprocess.Popen] = []

    def begin(clis, monitor) -> None:
        for c in clis.values():
            c.run(f"pfc_watchdog all {prio} detect={detect_ms:g} restore={detect_ms:g} action={action}")
        proc.append(start_sender(state, host, frame, interval_s, (tl.end_us - tl.start_us) * 1e-6 * dilation))

    return run(state, ctl, tl, begin, lambda monitor: wait_senders(proc, interval_s + 5, tl), workload=workload, size=size,
               hold_us=tl.end_us + detect_ms * 1e3 * 1.2, nic_settings=nic_settings)


def run_congestion(state, ctl, tl: Timeline, cong: Congestion, *, workload: str, size: int, cdf: str,
                   load: float) -> Telemetry:
    """``cong``'s background (its destination pinned to the congested port) from
    ``tl.start_us`` to ``tl.end_us`` while ``workload`` runs on ``cong.hosts`` (a poisson
    workload: flow sizes from ``cdf`` at ``load``, each flow on a queue pair of its own, as
    in the simulator); the switch's queues are sampled for the per-uplink table."""
    dilation = float(ctl.topo.time_dilation)
    interval_s = congestion.interval_ns(ctl.topo, cong) * 1e-9 * dilation
    proc: list[subprocess.Popen] = []

    def begin(clis, monitor) -> None:
        congestion.pin(ctl, cong, True, monitor)
        for i, host in enumerate(cong.senders):
            frame = congestion.background_frame(ctl.topo, host, cong.dst, i)
            proc.append(start_sender(state, host, frame, interval_s, (tl.end_us - tl.start_us) * 1e-6 * dilation))

    def end(monitor) -> None:
        wait_senders(proc, interval_s + 5, tl)
        congestion.pin(ctl, cong, False, monitor)

    return run(state, ctl, tl, begin, end, workload=workload, size=size, hosts=list(cong.hosts),
               queues=cong.switch, cdf=cdf, load=load, qp_per_flow=True)


def run_restart(state, ctl, tl: Timeline, switch: str, *, workload: str, size: int, nic_settings=None) -> Telemetry:
    """``switch``'s process is killed (SIGKILL, by the PID the state file names) at
    ``tl.start_us``; the drill runs on until the workload is over, the controller's restore
    of the switch included. The new process's queues are read through the drill's runtime
    connection to it (reopened once the new process listens): what it forwarded after its
    restore is the drill's last event."""
    info = state.switches[switch]
    cmdline = Path(f"/proc/{info.pid}/cmdline").read_bytes().split(b"\0") if info.pid else []
    if str(info.thrift_port).encode() not in cmdline:  # not (any more) that switch's process
        raise ValueError(f"switch-restart: no running process of {switch} with PID {info.pid} "
                         "(is the fabric up, and its state file current?)")
    dilation = float(ctl.topo.time_dilation)

    def kill(clis, monitor) -> None:
        os.kill(info.pid, signal.SIGKILL)
        tl.events.append(Event(time.monotonic() * 1e6 / dilation - tl.t0_us, "switch-restart", switch,
                               detail=f"process {info.pid} killed (kill -9): program, entries and queues lost"))

    tel = run(state, ctl, tl, kill, lambda monitor: None, workload=workload, size=size, nic_settings=nic_settings,
              queues=switch)
    restored = [e.t_us for e in tl.events if e.kind == "restore" and e.switch == switch]
    after = [(t, sum(n for _, n in q.values())) for t, q in tl.queue_samples if restored and t >= restored[0]]
    if len(after) > 1:
        tl.events.append(Event(after[-1][0], "forwarding", switch,
                               detail=f"{after[-1][1] - after[0][1]} packets through it since its restore "
                                      "(queue_stats of the new process)"))
    return tel


STORM_INTERVAL_US = 100.0  # fabric time between a stuck host's XOFFs (each pauses 335 us at 100G)


def run(state, ctl, tl: Timeline, begin, end, *, workload: str, size: int, hold_us: float = 0.0,
        hosts: list[str] | None = None, queues: str | None = None, **options: Any) -> Telemetry:
    """The workload on ``hosts`` (default: every host) with ``begin(clis, monitor)`` at
    ``tl.start_us`` and ``end(monitor)`` at ``tl.end_us``; polls and records (the queues of switch ``queues`` too)
    until both happened, the workload is over and ``hold_us`` of fabric time passed.
    ``options`` go to ``run_workload`` (a pending canary's ``nic_settings``, a poisson
    workload's ``cdf``, ``load``, ``qp_per_flow``)."""
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
    monitor.drops = tl.queue_drops
    hosts = hosts or [h.name for h in ctl.topo.hosts]
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["run"] = run_workload(state, ctl, workload, hosts, size=size, progress=False, telemetry=tel,
                                         duration_ns=tl.arrivals_ns(round(hold_us * 1e3)), **options)
        except Exception as e:  # noqa: BLE001 - reported with the drill
            result["error"] = str(e)

    monitor.poll()
    tl.t0_us = tel.alerts.t0_us = fabric_us()
    if queues is not None:
        tl.sample_queues(fabric_us(), monitor.queue_stats.get(queues))
    worker = threading.Thread(target=work, daemon=True)
    down = up = False
    try:
        if tl.start_us <= 0:  # a fault from the start is in place before the workload's first packet
            begin(clis, monitor)
            down = True
        worker.start()
        while True:
            t = fabric_us() - tl.t0_us
            if not down and t >= tl.start_us:
                begin(clis, monitor)
                down = True
            if down and not up and t >= tl.end_us:
                end(monitor)
                up = True
            monitor.poll()
            if queues is not None:
                tl.sample_queues(fabric_us(), monitor.queue_stats.get(queues))
            tl.sample_nics(fabric_us(), ctl.nics)
            tel.alerts.feed_nics(fabric_us(), tl.nic_samples[-1][1])
            if up and not worker.is_alive() and t >= hold_us:
                break
            time.sleep(POLL_S)  # the pace of polling, not a synchronisation
    finally:
        if down and not up:
            end(monitor)
        if worker.is_alive():  # not started when the fault failed to begin
            worker.join(timeout=60 * dilation / 1e3)
        for c in clis.values():
            c.close()
    tl.messages += nic_messages({h: ctl.nics[h] for h in hosts}, fabric_us, tl.t0_us)
    monitor.poll()
    tel.alerts.close_all(fabric_us())
    tl.alerts = [a.to_dict() for a in tel.alerts.all()]
    if "error" in result:
        tl.errors.append(result["error"])
    elif "run" in result:
        tl.errors += list(result["run"][0].errors)
    tl.take_port_deltas(tel)
    return tel
