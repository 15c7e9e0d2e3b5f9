"""``fabricctl drill NAME ...``: rehearse a failure and print what the fabric did.

    fabricctl drill link-down leaf1:3 --at 20us --for 60us --sim --topology leafspine:2x2x2
    fabricctl drill pfc-storm h1_1 --prio 3 --sim --topology leafspine:2x2x2
    fabricctl drill congestion --into leaf1:3 --load 0.8 --modes ecmp,dlb,spray --sim
    fabricctl drill pfc-deadlock leaf1:3 --sim --topology leafspine:2x2x2

With ``--sim`` the drill runs in the virtual-time fabric (nothing else needs to be up); the
table (before / during / after), the events with their fabric times, ``drill_NAME.json`` and
the heat map with the fault marked are written under ``--out``. Without it the drill acts on
the running Mininet fabric (live.py; link-down, pfc-storm, congestion, switch-restart and
pfc-deadlock, whose own part is deadlock.py). The
congestion drill runs once per load-balancing mode of ``--modes`` (congestion.py) and ends
with a table of what each mode did with the workload's packets on the congested port. The
pfc-deadlock drill (deadlock.py) loops a route over a leaf uplink and adds a table of the
loop's two queues per stage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from controller.config_cmd import pending_canary
from controller.drills import congestion, deadlock, live, sim
from controller.drills.timeline import Timeline, save
from controller.pipeline import compile_fabric
from controller.profiles import PROFILES, settings_for
from controller.session import attached
from controller.settings import LB_MODES
from controller.sim_cmd import _duration_ns, _instant_ns, _size, parse_topology
from controller.textfmt import shown_path

DRILLS = ("link-down", "pfc-storm", "switch-restart", "congestion", "pfc-deadlock")
WATCHDOG_ACTIONS = ("drop", "forward")  # the switch's (p4switch/switch/pfc.py)
# Defaults per drill: fault start, fault length, workload, bytes per host, telemetry interval (us).
# A storm must outlast the watchdog's 200 ms detection, so that drill samples coarsely.
DEFAULTS = {
    "link-down": (20_000, 60_000, "all-to-all", 1 << 20, 5.0),
    "pfc-storm": (20_000, 300_000_000, "incast", 256 * 1024, 20_000.0),
    "switch-restart": (20_000, 50_000, "all-to-all", 256 * 1024, 5.0),
    "congestion": (50_000, 200_000, "poisson", 256 * 1024, 5.0),
    "pfc-deadlock": (20_000, 300_000_000, "poisson", 256 * 1024, 10_000.0),
}
LOOP_SAMPLE_NS = 1_000_000  # pfc-deadlock: the loop's queues, sampled every fabric ms in simulation
DEADLOCK_LOAD = 0.002  # pfc-deadlock: the workload's load, low enough to simulate a fabric second
# Live, the fabric runs time-dilated (a few wall seconds are a few hundred fabric us at D=20000)
# and a workload takes wall seconds to start: the fault comes later and lasts longer.
LIVE_DEFAULTS = {"link-down": (100_000, 200_000, "all-to-all", 256 * 1024, 0.0),
                 "pfc-storm": (100_000, 300_000_000, "incast", 256 * 1024, 0.0),
                 "congestion": (150_000, 300_000, "poisson", 256 * 1024, 0.0),
                 "switch-restart": (100_000, 200_000, "all-to-all", 256 * 1024, 0.0),
                 "pfc-deadlock": (100_000, 1_000_000, "all-to-all", 64 * 1024, 0.0)}
HOLD_NS = {"link-down": 40_000, "switch-restart": 40_000, "congestion": 50_000,
           "pfc-deadlock": 700_000_000}  # kept running after the fault ends (pfc-storm: 1.1 x --detect)


def add_parser(sub) -> None:
    p = sub.add_parser("drill", help="rehearse a failure: link-down, pfc-storm, switch-restart, congestion, pfc-deadlock",
                       description="Run a workload, inject a fault at a chosen time and print the fabric's "
                                   "reaction before / during / after it.")
    p.add_argument("name", choices=DRILLS, metavar="NAME", help=" | ".join(DRILLS))
    p.add_argument("target", nargs="?",
                   help="link-down: SW:PORT; pfc-storm: HOST; switch-restart: SW; pfc-deadlock: LEAF:PORT (the looped uplink)")
    p.add_argument("--into", metavar="HOST|SW:PORT", help="congestion: the port the background goes into")
    p.add_argument("--load", type=float, default=0.8, help="congestion: background load, of the port's rate (default 0.8)")
    p.add_argument("--modes", type=_modes, default=list(LB_MODES),
                   help=f"congestion: load-balancing modes to run it under, in turn (default {','.join(LB_MODES)})")
    p.add_argument("--boot", type=_duration_ns, default=None,
                   help="switch-restart: how long the switch takes to start again (default: --for)")
    p.add_argument("--at", type=_instant_ns, default=None,
                   help="fault start after the workload's start (e.g. 20us; 0us: in place before its first packet)")
    p.add_argument("--for", dest="length", type=_duration_ns, default=None, help="how long the fault lasts (e.g. 60us, 300ms)")
    p.add_argument("--prio", type=int, default=3,
                   help="pfc-storm, pfc-deadlock: the paused priority (default 3, the lossless class)")
    p.add_argument("--action", choices=WATCHDOG_ACTIONS, default="drop",
                   help="pfc-storm, pfc-deadlock: watchdog action (default drop)")
    p.add_argument("--detect", type=float, default=200.0,
                   help="pfc-storm, pfc-deadlock: watchdog detection and restoration, fabric ms (default 200, SONiC's)")
    p.add_argument("--sim", action="store_true", help="in the virtual-time fabric (no running fabric needed)")
    p.add_argument("--topology", default="leafspine:2x2x2", help="--sim: FILE, leafspine:NxMxK or fattree:K")
    p.add_argument("--profile", choices=list(PROFILES), default="ai-fabric")
    p.add_argument("--workload", choices=("all-to-all", "all-reduce", "incast", "poisson"), default=None)
    p.add_argument("--size", type=_size, default=None, help="bytes per host")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path("out/drills"))


def _modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in modes if m not in LB_MODES]
    if bad or not modes:
        raise argparse.ArgumentTypeError(f"--modes: choose from {', '.join(LB_MODES)}, got {text!r}")
    return modes


def prepare(args: argparse.Namespace, topo, live: bool = False) -> tuple[Timeline, object, dict]:
    """The drill's timeline, fault and run options from the arguments; ValueError if bad."""
    at, length, workload, size, sample_us = (LIVE_DEFAULTS if live else DEFAULTS)[args.name]
    at = args.at if args.at is not None else at
    length = args.length if args.length is not None else length
    if (args.name == "congestion") != (args.target is None):
        raise ValueError("congestion takes --into HOST|SW:PORT, no target" if args.name == "congestion"
                         else f"{args.name} needs its target")
    extra: dict = {}
    if args.name == "congestion":
        if args.into is None:
            raise ValueError("congestion needs --into HOST|SW:PORT")
        cong = congestion.plan(topo, args.into, args.load)
        fault = sim.congestion_fault(cong, at, length)
        what = cong.describe()
        # short flows (Alibaba storage sizes), each on a queue pair of its own, arriving all along
        extra = {"hosts": list(cong.hosts), "queues": cong.switch, "cdf": "alistorage", "load": 0.6}
    elif args.name == "link-down":
        switch, _, port = args.target.partition(":")
        if switch not in topo.switch_names() or not port.isdigit() or int(port) not in topo.ports_of(switch):
            raise ValueError(f"link-down: {args.target!r} is not a SWITCH:PORT of {topo.name}")
        fault = sim.cable_fault(switch, int(port), at, length)
        what = f"{switch}:{port} (cable to {topo.ports_of(switch)[int(port)][0]}) down"
    elif args.name == "switch-restart":
        if args.target not in topo.switch_names():
            raise ValueError(f"switch-restart: no switch {args.target!r} in {topo.name}")
        fault = sim.restart_fault(args.target, at, args.boot if args.boot is not None else length)
        what = f"{args.target} restarts"
    else:
        if not 0 <= args.prio < 8:
            raise ValueError("--prio must be 0..7")
        if args.detect <= 0:
            raise ValueError("--detect must be positive")
    if args.name == "pfc-deadlock":
        loop = deadlock.plan(topo, args.target)
        fault = deadlock.SimFault(loop, args.prio, at, length, args.action, args.detect, LOOP_SAMPLE_NS)
        what = f"{loop.describe()} (watchdog action {args.action})"
        # short flows (Alibaba storage sizes) all along, a few per fabric ms, on the other hosts
        extra = {"hosts": list(loop.hosts), "cdf": "alistorage", "load": DEADLOCK_LOAD}
    elif args.name == "pfc-storm":
        if args.target not in {h.name for h in topo.hosts}:
            raise ValueError(f"pfc-storm: no host {args.target!r} in {topo.name}")
        fault = sim.storm_fault(args.target, args.prio, at, length, args.action, args.detect, args.detect)
        what = f"{args.target} sends PFC XOFF on prio {args.prio} (watchdog action {args.action})"
    tl = Timeline(args.name, what, at / 1e3, (at + length) / 1e3)
    # a fault shorter than the default's is sampled finer (a tenth of its length), so what the
    # telemetry reads (watchdog events, alerts) lands in the phase it happened in
    sample_us = min(sample_us, max(5.0, length / 1e3 / 10))
    # after a storm, the watchdog restores the queue once it has been quiet for --detect
    hold_ns = round(args.detect * 1.1e6) if args.name == "pfc-storm" else HOLD_NS[args.name]
    opts = {"workload": args.workload or workload, "size": args.size or size, "sample_us": sample_us,
            "hold_ns": at + length + hold_ns, "seed": args.seed, **extra}
    return tl, fault, opts


def cmd_live(args: argparse.Namespace, state_path: Path) -> int:
    """The drill against the running fabric."""
    if args.name not in LIVE_DEFAULTS:
        print(f"fabricctl: error: {args.name} runs with --sim only so far (live: {', '.join(LIVE_DEFAULTS)})",
              file=sys.stderr)
        return 2
    canary = pending_canary(state_path)
    if canary is not None and (refused := canary_conflict(args, canary[0])):
        print(f"fabricctl: error: a canary is pending on {','.join(canary[0])} ({refused}); "
              "run `fabricctl apply FILE --promote` or `--rollback` first", file=sys.stderr)
        return 2
    with attached(state_path, with_nics=True) as (state, ctl):
        try:
            tl, _, opts = prepare(args, ctl.topo, live=True)
        except ValueError as e:
            print(f"fabricctl: error: {e}", file=sys.stderr)
            return 2
        # each NIC runs the workload with its own settings (the reroutes' switch updates do not
        # depend on the settings a canary changes: routes, groups and members only)
        nics = canary[1].nics if canary is not None else None
        tl.notes += watchdog_notes(args, ctl.settings.pfc.stale_us)
        ctl.connect(timeout=10)  # primary while the drill lasts: its reroutes are written
        if args.name == "congestion":
            return _congestion(args, ctl.topo, ctl.settings.classes.data_priority,
                               lambda mode, tl, fault, opts: _live_mode(state, ctl, args, mode, tl, opts), live=True)
        if args.name == "link-down":
            switch, _, port = args.target.partition(":")
            tel = live.run_link_down(state, ctl, tl, switch, int(port), workload=opts["workload"], size=opts["size"],
                                     nic_settings=nics)
        elif args.name == "switch-restart":
            try:
                tel = live.run_restart(state, ctl, tl, args.target, workload=opts["workload"], size=opts["size"],
                                       nic_settings=nics)
            except ValueError as e:
                print(f"fabricctl: error: {e}", file=sys.stderr)
                return 2
        elif args.name == "pfc-deadlock":
            tel, watch = deadlock.run_live(state, ctl, tl, deadlock.plan(ctl.topo, args.target), args.prio,
                                           action=args.action, detect_ms=args.detect, workload=opts["workload"],
                                           size=opts["size"], nic_settings=nics)
            _show(tl, tel, args.out)
            deadlock.report(watch, tl, args.out)
            return 0
        else:
            tel = live.run_storm(state, ctl, tl, args.target, args.prio, action=args.action, detect_ms=args.detect,
                                 workload=opts["workload"], size=opts["size"], nic_settings=nics)
    return _show(tl, tel, args.out)


def canary_conflict(args: argparse.Namespace, canary: list[str]) -> str:
    """Why this live drill cannot run beside a pending canary (``canary``: its nodes), or "".
    The others run with each switch's and NIC's own settings."""
    if args.name == "congestion":
        return "the congestion drill sets the load-balancing mode of every switch and NIC"
    if args.name == "switch-restart" and args.target in canary:
        return f"the fabric's controller restores a restarted {args.target} with the fabric-wide settings"
    return ""


def _live_mode(state, ctl, args: argparse.Namespace, mode: str, tl: Timeline, opts: dict):
    """One live congestion run with the data class balanced by ``mode``; the fabric's own
    settings are back afterwards."""
    original = ctl.settings
    ctl.apply(original.with_overrides({"lb": {"data_mode": mode}}))
    try:
        return live.run_congestion(state, ctl, tl, congestion.plan(ctl.topo, args.into, args.load),
                                   workload=opts["workload"], size=opts["size"], cdf=opts["cdf"], load=opts["load"])
    finally:
        ctl.apply(original)


def _congestion(args: argparse.Namespace, topo, data_prio: int, run_mode, live: bool = False) -> int:
    """The congestion drill once per mode of ``--modes`` (``run_mode(mode, timeline, fault,
    options) -> telemetry``): each run's record and per-uplink table, then the modes side by side."""
    per_mode = {}
    for mode in args.modes:
        tl, fault, opts = prepare(args, topo, live)
        tl.name = f"congestion-{mode}"
        tel = run_mode(mode, tl, fault, opts)
        _show(tl, tel, args.out)
        cong = congestion.plan(topo, args.into, args.load)
        per_mode[mode] = congestion.measure(tl, tel, topo, cong, data_prio)
        print(congestion.uplink_table(cong, per_mode[mode]))
        print()
    text = congestion.mode_table(cong, per_mode)
    print(text)
    path = args.out / "drill_congestion.json"
    path.write_text(json.dumps({"fault": cong.describe(), "port": f"{cong.switch}:{cong.port}",
                                "modes": per_mode, "table": text}, indent=1))
    print(f"wrote {shown_path(path)}")
    return 0


def watchdog_notes(args: argparse.Namespace, stale_us: int) -> list[str]:
    """A watchdog that drops, shortened below fabric.p4's stale time: v1model tells the program
    nothing of the drops, so they stay counted (pfc.stale_us, which may not go below the default
    detection) and the switch keeps pausing its senders after the fault."""
    if args.name not in ("pfc-storm", "pfc-deadlock") or args.action != "drop" or args.detect * 1000 >= stale_us:
        return []
    return [f"--detect {args.detect:g} ms is below pfc.stale_us ({stale_us / 1000:g} ms): what the watchdog drops "
            "stays counted by fabric.p4 until then, so the switch keeps pausing its senders after the fault "
            "(--action forward keeps the counts exact)"]


def _show(tl: Timeline, tel, out: Path) -> int:
    print(tl.format())
    print(f"longest receive stall of any host: {tl.max_stall_us():.1f} us")
    for path in save(tl, tel.link_series(), out):
        print(f"wrote {shown_path(path)}")
    return 0  # the drill ran; what the fault broke (errors included) is its record


def cmd_drill(args: argparse.Namespace, state_path: Path) -> int:
    if not args.sim:
        return cmd_live(args, state_path)
    try:
        topo = parse_topology(args.topology)
        tl, fault, opts = prepare(args, topo)
    except (ValueError, OSError) as e:
        print(f"fabricctl: error: {e}", file=sys.stderr)
        return 2
    tl.notes += watchdog_notes(args, settings_for(args.profile).pfc.stale_us)
    pipe = compile_fabric("ours", args.out / "build")
    if args.name == "congestion":
        return _congestion(args, topo, settings_for(args.profile).classes.data_priority,
                           lambda mode, tl, fault, opts: sim.run(topo, pipe, args.profile, tl, fault,
                                                                 overrides={"lb": {"data_mode": mode}}, **opts).telemetry)
    run = sim.run(topo, pipe, args.profile, tl, fault, **opts)
    rc = _show(tl, run.telemetry, args.out)
    if args.name == "pfc-deadlock":
        deadlock.report(fault.watch, tl, args.out)
    return rc
