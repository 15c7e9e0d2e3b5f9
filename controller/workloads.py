"""Running a workload across the fabric's NICs and collecting its result.

The NICs run the traffic themselves (``start_workload`` of the management API); this module
gives each one its rank and peers, watches progress, samples switch telemetry meanwhile, and
turns NIC statistics plus switch counters into one :class:`RunResult` saved under
``<out_dir>/runs``; the time series (switch samples, INT hops, each NIC's full statistics with
its rate/window series) go to ``<out_dir>/telemetry/<run>/``. Peers are addressed by IP with
the *sender's* gateway MAC as destination, as an L3 fabric requires (the leaf routes on IP and rewrites the MAC hop by hop).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from controller import fabric_rules
from controller.results import Message, RunResult, transport_counts
from controller.telemetry import Telemetry
from controller.textfmt import ProgressBar
from netbase.lag import PREFIX as LAG_PREFIX
from netbase.lag import SchedulingLag
from p4rt.runtime_cli import CliClient, CommandError

SAMPLE_INTERVAL_S = 0.5  # wall seconds between switch counter samples during a run
POLL_INTERVAL_S = 0.1  # wall seconds between NIC progress polls
KINDS = {"all-reduce": "allreduce", "all-to-all": "alltoall", "incast": "incast", "poisson": "poisson"}


def workload_specs(topo, workload: str, hosts: list[str], *, size: int, cdf: str = "websearch",
                   load: float = 0.3, flows: int = 40, seed: int = 1, qp_per_flow: bool = False,
                   duration_ns: int | None = None) -> dict[str, dict[str, Any]]:
    """The spec each host's NIC gets: same workload, its own rank, everyone's address.
    Poisson flows: ``flows`` per host, or as many as arrive in ``duration_ns`` of fabric time
    when given; ``qp_per_flow``: each on a queue pair of its own (so ECMP hashes each)."""
    if workload not in KINDS:
        raise ValueError(f"unknown workload {workload!r} (workloads: {', '.join(KINDS)})")
    if len(hosts) < 2:
        raise ValueError("a workload needs at least two hosts")
    if workload == "all-reduce" and size % len(hosts):
        raise ValueError(f"all-reduce size {size} must be a multiple of the {len(hosts)} hosts")
    specs: dict[str, dict[str, Any]] = {}
    for rank, name in enumerate(hosts):
        gw_mac = topo.switch(topo.host(name).leaf).mac
        peers = [{"ip": topo.host(h).ip, "mac": gw_mac, "rank": r} for r, h in enumerate(hosts)]
        spec: dict[str, Any] = {"kind": KINDS[workload], "rank": rank, "peers": peers, "size": size}
        if workload == "incast":
            spec["dst"] = 0  # everyone else sends to the first host
        if workload == "poisson":
            arrivals = {"flows_per_host": flows} if duration_ns is None else {"duration_ns": duration_ns}
            spec.update(cdf=cdf, load=load, **arrivals, seed=seed, qp_per_flow=qp_per_flow)
        specs[name] = spec
    return specs


def run_workload(state, ctl, workload: str, hosts: list[str], *, size: int, cdf: str = "websearch",
                 load: float = 0.3, flows: int = 40, timeout_s: float = 300.0, progress: bool = True,
                 telemetry: Telemetry | None = None, nic_settings=None,
                 qp_per_flow: bool = False, duration_ns: int | None = None) -> tuple[RunResult, Path]:
    """Run to completion (or timeout) and save the result; returns it and its file.
    ``nic_settings``: host -> Settings for NICs that run their own (a canary's); Poisson
    flows arrive for ``duration_ns`` of fabric time when given, else ``flows`` per host."""
    topo = ctl.topo
    specs = workload_specs(topo, workload, hosts, size=size, cdf=cdf, load=load, flows=flows, qp_per_flow=qp_per_flow,
                           duration_ns=duration_ns)
    nics = {h: ctl.nics[h] for h in hosts}
    for nic in nics.values():
        nic.reset()
    ctl.configure_nics(hosts, nic_settings)
    tel = telemetry or Telemetry(ctl)
    tel.start_run()
    switch_before = read_switch_stats(state)
    bar = ProgressBar(f"{workload} ({ctl.profile})") if progress else None
    t0 = time.monotonic()
    for h in hosts:
        nics[h].start_workload(specs[h])
    errors: list[str] = []
    timed_out = False
    last_sample = time.monotonic()
    while True:
        statuses = {h: nic.workload_status() for h, nic in nics.items()}
        frac = sum(float(s.get("progress", 0.0)) for s in statuses.values()) / len(statuses)
        if time.monotonic() - last_sample >= SAMPLE_INTERVAL_S:
            tel.sample()
            last_sample = time.monotonic()
        if bar:
            bar.update(frac, f"{time.monotonic() - t0:.0f}s")
        if all(s.get("done") for s in statuses.values()):
            errors = workload_errors(statuses)
            break
        if time.monotonic() - t0 > timeout_s:
            timed_out = True
            errors = [f"{h}: not done after {timeout_s:.0f} s (progress {float(s.get('progress', 0)):.0%}): "
                      + stuck_detail(nics[h].stats()) for h, s in statuses.items() if not s.get("done")]
            break
        time.sleep(POLL_INTERVAL_S)
    tel.sample()
    if bar:
        bar.done("timed out" if timed_out else "done")
    switch_after = read_switch_stats(state)
    result, path = save_run(Path(state.out_dir), workload, ctl.profile, specs, nics, statuses, tel, errors,
                            switch_kernel_drops=kernel_drops(switch_after) - kernel_drops(switch_before),
                            switch_lag=switch_lag(switch_before, switch_after),
                            time_dilation=float(topo.time_dilation))
    return result, path


def stuck_detail(stats: dict[str, Any], shown: int = 3) -> str:
    """Where a NIC that did not finish stood, from its statistics: the messages it started and
    did not complete (peer, queue pair, size) and its transport's recovery counters, so a
    timed-out run tells a flow that kept timing out from one that never got going."""
    open_msgs = [m for m in stats.get("messages", []) if m.get("end_ns") is None]
    counters = {k: sum(int(c.get(k, 0)) for c in stats.get("nic_counters", {}).values())
                for k in ("timeouts", "retransmitted_pkts", "naks_received")}
    recovery = (f"{counters['timeouts']} ack timeouts, {counters['retransmitted_pkts']} packets resent, "
                f"{counters['naks_received']} NAKs")
    if not open_msgs:
        return f"every message it sent completed (waiting to receive); {recovery}"
    listed = ", ".join(f"to {m['dst']} on QP {m['qpn']} ({m['size']} B)" for m in open_msgs[:shown])
    more = f" and {len(open_msgs) - shown} more" if len(open_msgs) > shown else ""
    return f"{len(open_msgs)} message(s) unfinished: {listed}{more}; {recovery}"


def workload_errors(statuses: dict[str, dict[str, Any]]) -> list[str]:
    """What the NICs' final workload statuses say went wrong (errors, data that differ)."""
    errors = [f"{h}: {e}" for h, s in statuses.items() for e in s.get("errors", [])]
    errors += [f"{h}: received data differ from what was sent" for h, s in statuses.items()
               if s.get("data_ok") is False]
    return errors


def save_run(out_dir: Path, workload: str, profile: str, specs: dict[str, dict[str, Any]], nics: dict[str, Any],
             statuses: dict[str, dict[str, Any]], tel: Telemetry, errors: list[str],
             switch_kernel_drops: int = 0, switch_lag: dict[str, dict[str, int]] | None = None,
             time_dilation: float = 0.0) -> tuple[RunResult, Path]:
    """The run's result from the NICs' statistics and the telemetry, saved as
    ``out_dir/runs/<n>-<workload>-<profile>.json`` with its time series under
    ``out_dir/telemetry/<that name>/`` (live and simulated runs alike)."""
    stats = {h: nic.stats() for h, nic in nics.items()}
    result = build_result(workload, profile, specs, stats, tel, errors, switch_kernel_drops=switch_kernel_drops)
    result.sched_lag = {**(switch_lag or {}), **nic_lag(stats)}
    result.time_dilation = time_dilation
    result.sources = fabric_rules.figure_sources(getattr(tel.ctl, "read_via", {}))
    result.data_verified = sorted(h for h, st in statuses.items() if st.get("data_ok") is True)
    out = out_dir / "runs"
    out.mkdir(parents=True, exist_ok=True)
    n = len(list(out.glob("*.json"))) + 1
    path = out / f"{n:03d}-{workload}-{profile}.json"
    result.save(path)
    tel_dir = out_dir / "telemetry" / path.stem
    tel.write(tel_dir)
    for host, st in stats.items():  # each NIC's full statistics: messages, rate/window series, counters
        (tel_dir / f"nic-{host}.json").write_text(json.dumps(st, indent=1, default=str))
    return result, path


def read_switch_stats(state) -> dict[str, dict[str, str]]:
    """Each switch's ``switch_stats`` (our target's runtime CLI) as key -> value text.
    A switch without that CLI (BMv2) or not answering is left out: this must not fail a run."""
    if state.target != "ours":
        return {}
    out: dict[str, dict[str, str]] = {}
    for name, info in state.switches.items():
        if not info.thrift_port:
            continue
        try:
            cli = CliClient(info.thrift_port, timeout=5)
            try:
                text = cli.run("switch_stats")
            finally:
                cli.close()
        except (OSError, CommandError):
            continue
        out[name] = dict(line.partition("=")[::2] for line in text.splitlines() if "=" in line)
    return out


def kernel_drops(switch_stats: dict[str, dict[str, str]]) -> int:
    """Frames the switches' packet-socket ports lost in the kernel so far, summed over switches
    (``port<N>.rx_kernel_drops`` and ``.tx_kernel_drops``)."""
    return sum(int(v) for st in switch_stats.values() for k, v in st.items()
               if k.endswith((".rx_kernel_drops", ".tx_kernel_drops")) and v.isdigit())


def read_switch_kernel_drops(state) -> int:
    """:func:`kernel_drops` of the switches now (0 where they cannot say)."""
    return kernel_drops(read_switch_stats(state))


def _lag_summary(lag: SchedulingLag) -> dict[str, int]:
    return {"timers": lag.timers, "p50_ns": lag.quantile_ns(0.5), "p99_ns": lag.quantile_ns(0.99),
            "max_ns": lag.max_ns}


def switch_lag(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> dict[str, dict[str, int]]:
    """Each switch's scheduling lag during the run (the difference of two ``switch_stats``)."""
    return {sw: _lag_summary(SchedulingLag.from_fields(st).since(SchedulingLag.from_fields(before.get(sw, {}))))
            for sw, st in after.items() if f"{LAG_PREFIX}timers" in st}


def nic_lag(stats: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Each live NIC's scheduling lag in this run (its counters restart with every workload)."""
    out = {}
    for host, st in stats.items():
        for counters in (st.get("nic_counters") or {}).values():
            if f"{LAG_PREFIX}timers" in counters:
                out[f"nic {host}"] = _lag_summary(SchedulingLag.from_fields(counters))
    return out


def build_result(workload: str, profile: str, specs: dict[str, dict[str, Any]], stats: dict[str, dict[str, Any]],
                 tel: Telemetry, errors: list[str], switch_kernel_drops: int = 0) -> RunResult:
    messages: list[Message] = []
    starts, ends = [], []
    incomplete = 0
    for st in stats.values():
        for m in st.get("messages", []):
            if m.get("end_ns") is None:
                incomplete += 1
                continue
            starts.append(m["start_ns"])
            ends.append(m["end_ns"])
            messages.append(Message(m["src"], m["dst"], m["size"], m["fct_ns"] / 1e3, (m.get("ideal_ns") or 0) / 1e3))
    if incomplete:
        errors = [*errors, f"{incomplete} messages did not complete"]
    nic_stats = {h: st.get("summary", {}) for h, st in stats.items()}
    counts = transport_counts(nic_stats)
    counts["kernel_drops"] += switch_kernel_drops
    sw = tel.run_totals()
    return RunResult(
        workload=workload,
        profile=profile,
        params={k: v for k, v in next(iter(specs.values())).items() if k not in ("rank", "peers")},
        completion_us=(max(ends) - min(starts)) / 1e3 if ends else 0.0,
        bytes_delivered=sum(m.size for m in messages),
        messages=messages,
        **counts,
        pauses=sw["pauses"],
        ecn_marks=sw["ecn_marks"],
        drops=sw["drops"],
        int_reports=sw["int_reports"],
        links=tel.link_series(),
        queue_depth=tel.queue_depth_series(),
        nic_stats=nic_stats,
        alerts=tel.run_alerts(),
        ok=not errors,
        errors=errors,
    )
