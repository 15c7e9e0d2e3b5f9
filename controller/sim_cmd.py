"""``fabricctl sim run``: the comparison ``make run`` prints, from the virtual-time fabric.

    fabricctl sim run --topology leafspine:2x2x2 --profiles baseline,ai-fabric \\
        --workload all-reduce --size 1MiB --seed 1 --out out/sim

For each profile, a fresh fabric (fabricsim.P4Fabric: fabric.p4 on every switch, a
``nicmodel.Nic`` per host) is configured by this controller exactly as a live one
(``FabricController`` over in-process P4Runtime sessions, the same ``fabric_rules`` and
profiles), the workload runs on the NICs through their management interface, telemetry samples
the switches' counters and takes the INT reports in simulated time, and the run is saved with
the live runs' format (``out/runs/*.json``, ``out/telemetry/<run>/``), so ``fabricctl
report`` and the plots work on it. Same topology, profiles, workload and seed: byte-identical
run files.

Topologies: a topology file, ``leafspine:NxMxK`` (N spines, M leaves, K hosts per leaf), or
``fattree:K`` (the three-tier fat tree of parameter K). ``--size`` bounds the work; ``--load``
with ``--duration`` gives Poisson arrivals for that long (run to completion), and
``--duration`` alone stops any workload at that simulated time.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.controller import FabricController
from controller.fabric_rules import TargetUnits
from controller.pipeline import compile_fabric
from controller.profiles import PROFILES, settings_for
from controller.report import comparison_table, plot
from controller.telemetry import Telemetry
from controller.textfmt import ProgressBar, shown_path
from controller.workloads import save_run, stuck_detail, workload_errors, workload_specs
from fabricsim.fabric import CHOICES as BACKEND_CHOICES
from fabricsim.fabric import P4Fabric, use_backend
from fabricsim.link import LinkConfig
from topo.builder import fat_tree, leaf_spine
from topo.spec import load

WORKLOADS = ("all-reduce", "all-to-all", "incast", "poisson")
DEFAULT_SIZE = 1024 * 1024
# Simulated microseconds between telemetry samples, per 16 switch ports: a sample reads every
# port's counters and registers over P4Runtime, so its cost grows with the fabric; the interval
# grows with it, keeping telemetry a small part of the run (2x2x2: 20 us; fat tree k=4: 100 us).
SAMPLE_US = 20.0
SAMPLE_PORTS = 16
_SIZE_UNITS = {"": 1, "k": 1000, "kib": 1024, "kb": 1000, "m": 10**6, "mib": 1 << 20, "mb": 10**6,
               "g": 10**9, "gib": 1 << 30}
_TIME_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _SIZE_UNITS or int(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"expected a size such as 65536, 64KiB or 1MiB, got {text!r}")
    return int(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]


def _time_ns(text: str) -> int | None:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s)\s*", text)
    return round(float(m.group(1)) * _TIME_UNITS[m.group(2)]) if m else None


def _duration_ns(text: str) -> int:
    ns = _time_ns(text)
    if not ns:  # None (not a time) or 0
        raise argparse.ArgumentTypeError(f"expected a simulated duration such as 500us or 1ms, got {text!r}")
    return ns


def _instant_ns(text: str) -> int:
    """A moment from the run's start: 0us (from the start) is one, unlike a duration of 0."""
    ns = _time_ns(text)
    if ns is None:
        raise argparse.ArgumentTypeError(f"expected a simulated time such as 0us, 20us or 1ms, got {text!r}")
    return ns


def _link_down(text: str) -> tuple[str, str, int, int | None]:
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9_]*)-([A-Za-z][A-Za-z0-9_]*)@([^:]+)(?::(.+))?", text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"expected A-B@T[:T2] such as leaf1-spine1@20us:200us, got {text!r}")
    down = _duration_ns(m.group(3))
    up = _duration_ns(m.group(4)) if m.group(4) else None
    if up is not None and up <= down:
        raise argparse.ArgumentTypeError(f"{text!r}: the link must come up after it went down")
    return m.group(1), m.group(2), down, up


def _load(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0 < v <= 1:
        raise argparse.ArgumentTypeError(f"expected a load in (0, 1], got {text!r}")
    return v


def add_parser(sub: Any) -> None:
    sim = sub.add_parser("sim", help="run workloads on the virtual-time fabric (fabric.p4, NIC model)",
                         description="Deterministic simulation of the fabric: the same P4 program, switch "
                                     "target, NIC model and controller as the live fabric, in virtual time.")
    simsub = sim.add_subparsers(dest="sim_command", required=True, metavar="SUBCOMMAND")
    sp = simsub.add_parser("run", help="run a workload under each profile and compare them",
                           description="Run WORKLOAD on a simulated fabric under each profile; print the "
                                       "comparison table of `make run` and save the run files under --out.")
    sp.add_argument("--topology", default="leafspine:2x2x2",
                    help="topology FILE, leafspine:NxMxK or fattree:K (default leafspine:2x2x2)")
    sp.add_argument("--profiles", default="baseline,ai-fabric", help="comma-separated profiles, in order")
    sp.add_argument("--workload", choices=WORKLOADS, default="all-reduce", metavar="NAME",
                    help=" | ".join(WORKLOADS) + " (default all-reduce)")
    sp.add_argument("--size", type=_size, default=None,
                    help=f"bytes per host (all-reduce buffer, all-to-all/incast message); default {DEFAULT_SIZE // 1024} KiB")
    sp.add_argument("--load", type=_load, default=None, help="poisson: offered load of the host links (0..1]")
    sp.add_argument("--duration", type=_duration_ns, default=None,
                    help="poisson: arrivals for this simulated time (e.g. 1ms), run to completion; other "
                         "workloads: stop at this simulated time")
    sp.add_argument("--flows", type=int, default=None, help="poisson without --duration: flows per host (default 40)")
    sp.add_argument("--cdf", default="websearch", help="poisson: flow-size CDF (default websearch)")
    sp.add_argument("--qp-reuse", action="store_true",
                    help="poisson: one queue pair per peer instead of one per flow")
    sp.add_argument("--rate", type=float, choices=(25.0, 100.0, 400.0), default=100.0,
                    help="built-in topologies: link rate in Gb/s (default 100)")
    sp.add_argument("--mtu", type=int, choices=(1024, 4096), default=1024,
                    help="built-in topologies: RoCE MTU (default 1024)")
    sp.add_argument("--loss", type=float, default=0.0, help="per-frame loss probability on every link")
    sp.add_argument("--link-down", action="append", default=[], type=_link_down, metavar="A-B@T[:T2]",
                    help="the cable between nodes A and B goes down at simulated time T (and up at T2), "
                         "e.g. leaf1-spine1@20us:200us (repeatable)")
    sp.add_argument("--seed", type=int, default=1)
    sp.add_argument("--backend", choices=BACKEND_CHOICES, default=None,
                    help="what runs the switches' P4: python (the generated code), mypyc (it compiled "
                         "to C: the same results, faster; built once per program and cached) or auto "
                         "(mypyc if the program's module is built, else python); default "
                         "$P4SWITCH_BACKEND or auto")
    sp.add_argument("--out", type=Path, default=Path("out/sim"), help="output directory (default out/sim)")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")


def parse_topology(text: str, rate_gbps: float = 100.0, mtu: int = 1024):
    """FILE, ``leafspine:NxMxK`` or ``fattree:K`` -> a validated Topology."""

    kind, sep, arg = text.partition(":")
    if sep and kind == "leafspine":
        m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", arg)
        if not m:
            raise ValueError(f"--topology {text!r}: expected leafspine:NxMxK (spines x leaves x hosts per leaf)")
        spines, leaves, hosts = (int(g) for g in m.groups())
        return leaf_spine(spines, leaves, hosts, rate_gbps=rate_gbps, mtu=mtu)
    if sep and kind == "fattree":
        if not arg.isdigit():
            raise ValueError(f"--topology {text!r}: expected fattree:K with K even (4: 16 hosts, 8: 128 hosts)")
        return fat_tree(int(arg), rate_gbps=rate_gbps, mtu=mtu)
    return load(text)


def cmd_sim(args: argparse.Namespace, state_path: Path) -> int:
    if args.backend:
        use_backend(args.backend)

    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    unknown = [p for p in profiles if p not in PROFILES]
    if unknown or not profiles:
        print(f"fabricctl: error: unknown profile(s) {', '.join(unknown)} (profiles: {', '.join(PROFILES)})",
              file=sys.stderr)
        return 2
    if args.load is not None and args.workload != "poisson":
        print("fabricctl: error: --load is for the poisson workload", file=sys.stderr)
        return 2
    if args.workload == "poisson" and args.load is not None and args.duration is None and args.flows is None:
        print("fabricctl: error: poisson with --load needs --duration (or --flows)", file=sys.stderr)
        return 2
    try:
        topo = parse_topology(args.topology, args.rate, args.mtu)
    except (ValueError, OSError) as e:
        print(f"fabricctl: error: {e}", file=sys.stderr)
        return 2
    cables = {frozenset((lk.a, lk.b)) for lk in topo.links}
    for a, b, _, _ in args.link_down:
        if frozenset((a, b)) not in cables:
            print(f"fabricctl: error: --link-down: no cable between {a} and {b} in {topo.name}", file=sys.stderr)
            return 2
    size = args.size or DEFAULT_SIZE
    if args.workload == "all-reduce" and size % len(topo.hosts):
        print(f"fabricctl: error: --size must be a multiple of the {len(topo.hosts)} hosts", file=sys.stderr)
        return 2

    out = args.out
    pipe = compile_fabric("ours", out / "build")
    results = []
    for profile in profiles:
        result, path = run_profile(topo, pipe, profile, args, size, out)
        print(f"  saved {shown_path(path)}", file=sys.stderr)
        results.append(result)
    print()
    print(f"{_describe(args, size, len(topo.hosts))} ({topo.name}, virtual time, seed {args.seed}, "
          f"times in fabric microseconds):")
    print(comparison_table(results))
    for png in plot(results, out / "plots"):
        print(f"wrote {shown_path(png)}")
    failed = [r for r in results if not r.ok]
    for r in failed:
        print(f"{r.profile}: " + "; ".join(r.errors), file=sys.stderr)
    return 1 if failed else 0


def _describe(args: argparse.Namespace, size: int, hosts: int) -> str:
    if args.workload == "poisson":
        span = f"{args.duration / 1e3:g} us of arrivals" if args.duration else f"{args.flows or 40} flows/host"
        return f"Poisson {args.cdf} at load {args.load or 0.3:g}, {span}, over {hosts} hosts"
    what = {"all-reduce": "Ring all-reduce", "all-to-all": "All-to-all", "incast": "Incast"}[args.workload]
    return f"{what} of {size // 1024} KiB per host over {hosts} hosts"


def run_profile(topo, pipe, profile: str, args: argparse.Namespace, size: int, out: Path):
    """One profile on a fresh simulated fabric: configure, run, save; returns (result, path)."""

    hosts = [h.name for h in topo.hosts]
    specs = workload_specs(topo, args.workload, hosts, size=size, cdf=args.cdf, load=args.load or 0.3,
                           flows=args.flows or 40, seed=args.seed, qp_per_flow=not args.qp_reuse,
                           duration_ns=args.duration)
    for spec in specs.values():
        spec["seed"] = args.seed  # also the data pattern and the Poisson arrivals
    until = args.duration if args.workload != "poisson" else None
    bar = None if args.no_progress else ProgressBar(f"{args.workload} ({profile})")
    run = simulate(topo, pipe, settings_for(profile), profile, specs, seed=args.seed, loss=args.loss,
                   until_ns=until, progress=bar, cables_down=args.link_down)
    run.controller.close()
    return save_run(out, args.workload, profile, specs, run.fabric.nics, run.statuses, run.telemetry, run.errors)


@dataclass
class SimRun:
    """What one simulated run leaves: the fabric (switches, NICs, links), its controller and
    telemetry, the NICs' final workload statuses and what went wrong."""

    fabric: Any
    controller: Any
    telemetry: Any
    statuses: dict[str, dict[str, Any]]
    errors: list[str]
    done: bool


def sim_units(fab: P4Fabric) -> TargetUnits:
    """What the simulated switches' timestamps and INT queue occupancy count in."""
    return TargetUnits(fab.timestamp_unit_ns, fab.keeps_queue_bytes)


def simulate(topo, pipe, settings, profile: str, specs: dict[str, dict[str, Any]], *, seed: int = 1,
             loss: float = 0.0, until_ns: int | None = None, progress: ProgressBar | None = None,
             sample_us: float | None = None, observe: Callable[[str, Any], None] | None = None,
             cables_down: list[tuple[str, str, int, int | None]] = (),
             impaired: list[tuple[str, str, dict[str, float]]] = (), nic_options: dict[str, Any] | None = None,
             on_tick: Callable[[Any, int], None] | None = None,
             prepare: Callable[[P4Fabric, FabricController, Telemetry], Callable[[int], None] | None] | None = None,
             hold_ns: int = 0) -> SimRun:
    """Configure a fresh simulated fabric with ``settings`` through the controller, start each
    host's workload ``specs[host]`` and advance virtual time until every host is done (or
    ``until_ns``), sampling telemetry every ``sample_us`` simulated microseconds (default:
    SAMPLE_US per SAMPLE_PORTS switch ports). ``observe``
    sees every packet-in (switch, PacketIn) after the telemetry. ``cables_down``: (a, b, down
    at, up at) cables that fail during the run, in ns from its start. ``impaired``: (from,
    to, {"loss": p, ...}) one direction of a cable impaired alone (``P4Fabric.impair``).
    ``nic_options``: keyword arguments of every ``Nic`` (e.g. ``roce_extensions=False``).
    ``on_tick(fabric, now)`` is called every 10 simulated microseconds (experiments' own sampling).
    The controller stays connected (for reads); the caller closes it.
    ``prepare(fabric, controller, telemetry)`` runs before the workload starts (drills schedule
    their faults there) and may return a callback called with the time after every telemetry
    sample; ``hold_ns`` keeps the run going at least that long after the start even when the
    workload is done."""

    fab = P4Fabric(topo, seed=seed, impairments=LinkConfig(loss=loss) if loss else None, nic_options=nic_options)
    for src, dst, fields in impaired:
        fab.impair(src, dst, **fields)
    ctl = FabricController(topo, pipe, settings, nics=fab.nics, profile=profile, connection=fab.connection,
                           units=sim_units(fab))
    tel = Telemetry(ctl, fabric_us=lambda: fab.now_ns() / 1e3)

    def packet_in(switch: str, pkt: Any) -> None:
        tel.on_packet_in(switch, pkt)
        observe(switch, pkt)

    # the collector's record itself when nobody observes (compiled; no lock: one thread): a
    # packet-in per INT report
    ctl.on_packet_in = tel.report_log.take if observe is None else packet_in
    ctl.start()
    hosts = list(specs)
    nics = fab.nics
    t0 = fab.now_ns()
    for a, b, down, up in cables_down:
        fab.cable_down(a, b, t0 + down, None if up is None else t0 + up)
    after_sample = prepare(fab, ctl, tel) if prepare is not None else None
    tel.start_run()
    for h in hosts:
        nics[h].start_workload(specs[h])
    if sample_us is None:
        ports = sum(len(topo.ports_of(s.name)) for s in topo.switches)
        sample_us = SAMPLE_US * -(-ports // SAMPLE_PORTS)
    next_sample = fab.now_ns() + sample_us * 1e3

    def tick(now: int) -> None:
        nonlocal next_sample
        if on_tick is not None:
            on_tick(fab, now)
        if now >= next_sample:
            tel.sample()
            next_sample = now + sample_us * 1e3
            if after_sample is not None:
                after_sample(now)
        if progress is not None:
            if until_ns is not None:
                frac = now / until_ns
            else:
                frac = sum(nics[h].endpoint.progress() for h in hosts) / len(hosts)
            progress.update(frac, f"{now / 1e3:.0f} us simulated")

    done = fab.run(lambda: all(nics[h].endpoint.done for h in hosts) and fab.now_ns() >= t0 + hold_ns,
                   until_ns=until_ns, on_tick=tick)
    tel.sample()
    if after_sample is not None:
        after_sample(fab.now_ns())
    if progress is not None:
        progress.done(f"{fab.now_ns() / 1e3:.0f} us simulated" if done else "stopped")
    statuses = {h: nics[h].workload_status() for h in hosts}
    errors = workload_errors(statuses)
    if not done:
        errors += [f"{h}: not done at {fab.now_ns() / 1e3:.0f} us simulated (progress {s['progress']:.0%}): "
                   + stuck_detail(nics[h].stats()) for h, s in statuses.items() if not s["done"]]
    return SimRun(fab, ctl, tel, statuses, errors, done)
