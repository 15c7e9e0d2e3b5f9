"""``fabricctl mixed-traffic``: the RoCE workload alone, then again with best-effort TCP
background traffic beside it, and the report of controller/mixed_traffic.py.

    fabricctl mixed-traffic --workload all-to-all --size 64KiB            # the running Mininet fabric
    fabricctl mixed-traffic --sim --topology leafspine:2x2x2 --profile ai-fabric

Live, the background is real TCP: iperf3 between the hosts' kernels (controller/tcp_background.py),
started LEAD_S before the workload and stopped TAIL_S after it. With ``--sim`` it is the
virtual-time fabric's best-effort flow (fabricsim/background.py), which fills what each host's
uplink leaves, from LEAD_NS before the workload until as long after it as the workload took.
``--pairs SRC:DST,...`` chooses the TCP flows (default: every host to the host half the host
list away, so every flow crosses the spines).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from controller.config_cmd import nic_settings
from controller.mixed_traffic import MixedReport, TcpShare, nic_pauses, switch_pauses
from controller.pipeline import compile_fabric
from controller.profiles import PROFILES, settings_for
from controller.session import attached
from controller.settings import Settings
from controller.sim_cmd import _size, parse_topology, simulate
from controller.tcp_background import TcpBackground, TcpFlow, default_pairs
from controller.telemetry import Telemetry
from controller.textfmt import shown_path
from controller.workloads import build_result, run_workload, workload_specs

WORKLOADS = ("all-to-all", "all-reduce", "incast")
LEAD_S, TAIL_S = 3.0, 3.0  # live: wall seconds TCP runs alone before and after the workload
LEAD_NS = 20_000  # simulated: TCP alone before the workload


def add_parser(sub) -> None:
    p = sub.add_parser("mixed-traffic", help="RoCE alone vs. with TCP background on priority 0 (best effort)",
                       description="Run a RoCE workload alone, then with best-effort TCP background between "
                                   "hosts (iperf3 live; a best-effort flow with --sim), and show RoCE unaffected, "
                                   "TCP taking the rest and no PFC pause on TCP's priority.")
    p.add_argument("--workload", choices=WORKLOADS, default="all-to-all")
    p.add_argument("--size", type=_size, default=None, help="bytes per host (default 64KiB live, 256KiB --sim)")
    p.add_argument("--pairs", default=None, metavar="SRC:DST,...",
                   help="TCP flows (default: each host to the host half the list away)")
    p.add_argument("--timeout", type=float, default=300.0, help="live: wall seconds allowed per RoCE run")
    p.add_argument("--sim", action="store_true", help="in the virtual-time fabric (no running fabric needed)")
    p.add_argument("--topology", default="leafspine:2x2x2", help="--sim: FILE, leafspine:NxMxK or fattree:K")
    p.add_argument("--profile", choices=list(PROFILES), default="ai-fabric", help="--sim: the fabric's profile")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path("out/mixed"))


def parse_pairs(text: str | None, topo) -> list[tuple[str, str]]:
    hosts = [h.name for h in topo.hosts]
    if not text:
        return default_pairs(hosts)
    pairs = []
    for item in text.split(","):
        src, sep, dst = item.strip().partition(":")
        if not sep or src not in hosts or dst not in hosts or src == dst:
            raise ValueError(f"--pairs: {item!r} is not SRC:DST of two different hosts of {topo.name}")
        pairs.append((src, dst))
    return pairs


def cmd_mixed(args: argparse.Namespace, state_path: Path) -> int:
    try:
        report = run_sim(args) if args.sim else run_live(args, state_path)
    except ValueError as e:
        print(f"fabricctl: error: {e}", file=sys.stderr)
        return 2
    print(report.format())
    print(f"wrote {shown_path(report.save(args.out))}")
    return 0 if report.alone.ok and report.mixed.ok else 1


# -- live ----------------------------------------------------------------------------------
def run_live(args: argparse.Namespace, state_path: Path) -> MixedReport:
    with attached(state_path, with_nics=True) as (state, ctl):
        topo = ctl.topo
        pairs = parse_pairs(args.pairs, topo)
        hosts = [h.name for h in topo.hosts]
        size = args.size or 64 * 1024
        workload_specs(topo, args.workload, hosts, size=size)  # bad sizes fail before anything runs
        ctl.connect(timeout=10)
        tel = Telemetry(ctl)
        ctl.on_packet_in = tel.on_packet_in

        def roce(label: str):
            before = switch_pauses(ctl)
            result, _ = run_workload(state, ctl, args.workload, hosts, size=size, timeout_s=args.timeout,
                                     progress=False, telemetry=tel, nic_settings=nic_settings(state_path))
            result.profile = label
            return result, before

        alone, p0 = roce(ctl.profile)
        p1 = switch_pauses(ctl)
        with TcpBackground(state, topo, pairs) as bg:
            bg.start()
            time.sleep(LEAD_S)
            t_start = time.monotonic()
            mixed, _ = roce(f"{ctl.profile} + TCP")
            t_end = time.monotonic()
            time.sleep(TAIL_S)
            flows = bg.stop()
        p2 = switch_pauses(ctl)
        dilation = float(topo.time_dilation)
        shares = [_live_share(f, t_start, t_end, dilation) for f in flows]
        return MixedReport(f"live, time dilation {dilation:g}", args.workload, ctl.settings.classes.data_priority,
                           ctl.settings.classes.default_priority, alone, mixed, shares,
                           dict(p1 - p0), dict(p2 - p1), dict(nic_pauses(alone)), dict(nic_pauses(mixed)),
                           notes=_missing_reports(flows))


def _live_share(flow: TcpFlow, t_start: float, t_end: float, dilation: float) -> TcpShare:
    """The flow's received bytes per phase (iperf3's server intervals, split where the RoCE
    workload started and ended), in fabric Gb/s: wall bits/s x D."""
    intervals = flow.received_intervals()
    start, end = t_start - flow.started_at, t_end - flow.started_at
    last = intervals[-1][1] if intervals else end
    phases = {"before": (0.0, start), "during": (start, end), "after": (end, last)}
    rates = {}
    for name, (a, b) in phases.items():
        got = sum(n * _overlap(s, e, a, b) / (e - s) for s, e, n in intervals if e > s)
        rates[name] = got * 8 * dilation / (b - a) / 1e9 if b > a else 0.0
    return TcpShare(flow.src, flow.dst, rates["before"], rates["during"], rates["after"],
                    sum(n for _, _, n in intervals), flow.retransmits)


def _overlap(s: float, e: float, a: float, b: float) -> float:
    return max(0.0, min(e, b) - max(s, a))


def _missing_reports(flows: list[TcpFlow]) -> list[str]:
    return [f"note: iperf3 {f.src} -> {f.dst} left no report ({f.client_json.get('error', 'no output')})"
            for f in flows if not f.server_json.get("intervals")]


# -- simulated -----------------------------------------------------------------------------
def run_sim(args: argparse.Namespace) -> MixedReport:
    try:
        topo = parse_topology(args.topology)
    except OSError as e:
        raise ValueError(str(e)) from None
    pairs = parse_pairs(args.pairs, topo)
    size = args.size or 256 * 1024
    settings = settings_for(args.profile)
    pipe = compile_fabric("ours", args.out / "build")
    alone, p_alone, _ = _sim_once(topo, pipe, settings, args, size, args.profile, [], 0)
    span = LEAD_NS + 2 * round(alone.completion_us * 1e3)  # TCP alone, with RoCE, alone again
    mixed, p_mixed, shares = _sim_once(topo, pipe, settings, args, size, f"{args.profile} + TCP", pairs, span)
    return MixedReport(f"virtual time, {topo.name}, seed {args.seed}", args.workload,
                       settings.classes.data_priority, settings.classes.default_priority, alone, mixed, shares,
                       dict(p_alone), dict(p_mixed), dict(nic_pauses(alone)), dict(nic_pauses(mixed)))


def _sim_once(topo, pipe, settings: Settings, args: argparse.Namespace, size: int, label: str,
              pairs: list[tuple[str, str]], span_ns: int):
    """One run on a fresh simulated fabric, the workload starting LEAD_NS in, with the
    background flows ``pairs`` from its start for ``span_ns``; (result, pauses by priority, shares)."""
    hosts = [h.name for h in topo.hosts]
    specs = workload_specs(topo, args.workload, hosts, size=size)
    for spec in specs.values():
        spec.update(seed=args.seed, start_delay_ns=LEAD_NS)
    seen: dict = {}

    def prepare(fab, ctl, tel):
        seen["t0"], seen["pauses"] = fab.now_ns(), switch_pauses(ctl)
        seen["flows"] = fab.start_background(pairs, seen["t0"], seen["t0"] + span_ns) if pairs else []
        return None

    run = simulate(topo, pipe, settings, args.profile, specs, seed=args.seed, prepare=prepare, hold_ns=span_ns)
    try:
        pauses: Counter = switch_pauses(run.controller) - seen["pauses"]
    finally:
        run.controller.close()
    stats = {h: nic.stats() for h, nic in run.fabric.nics.items()}
    result = build_result(args.workload, label, specs, stats, run.telemetry, run.errors)
    result.data_verified = sorted(h for h, st in run.statuses.items() if st.get("data_ok") is True)
    msgs = [m for st in stats.values() for m in st.get("messages", []) if m.get("end_ns") is not None]
    t0 = seen["t0"]
    start = min((m["start_ns"] for m in msgs), default=t0)
    end = max((m["end_ns"] for m in msgs), default=t0)
    shares = []
    for flow in seen["flows"]:
        sink = run.fabric.hosts[flow.dst].sink
        phases = ((t0, start), (start, end), (end, t0 + span_ns))
        rates = [sink.bytes_between(flow.src_ip, a, b) * 8 / (b - a) if b > a else 0.0 for a, b in phases]
        shares.append(TcpShare(flow.src, flow.dst, *rates, sink.bytes_between(flow.src_ip, t0, t0 + span_ns),
                               sink.lost.get(flow.src_ip, 0)))
    return result, pauses, shares


COMMANDS = {"mixed-traffic": cmd_mixed}
