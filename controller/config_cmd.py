"""``fabricctl diff FILE`` and ``fabricctl apply FILE [--canary NODES] [--compare WORKLOAD]
[--promote | --rollback]``: configuration as code, canary first (controller/config_file.py).

Live, the fabric's per-node settings after a canary are kept beside its state file
(``config-current.json``), and the settings before the rollout started in
``config-previous.json``, which ``--rollback`` writes back. With ``--sim --topology SPEC`` a
fresh virtual-time fabric running ``--from`` (default baseline) takes the same steps in one go.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from controller import config_file as cf
from controller.pipeline import compile_fabric
from controller.profiles import settings_for
from controller.report import comparison_table
from controller.session import attached, current_settings
from controller.settings import SettingsError
from controller.sim_cmd import WORKLOADS, _size, parse_topology, simulate
from controller.telemetry import Telemetry
from controller.workloads import build_result, run_workload, workload_specs

CURRENT_FILE = "config-current.json"
COMPARE_SIZE = 256 * 1024


def add_parser(sub) -> None:
    for name, what in (("diff", "show what a fabric configuration file would change per switch and NIC"),
                       ("apply", "apply a fabric configuration file, canary first")):
        sp = sub.add_parser(name, help=what, description=what + " (YAML: profile, overrides, switches, nics).")
        sp.add_argument("file", type=Path, metavar="FILE", help="the configuration file")
        sp.add_argument("--canary", default=None, metavar="NODES", help="only these switches/hosts, e.g. leaf1,h1_1")
        sp.add_argument("--sim", action="store_true", help="on a fresh virtual-time fabric instead of the live one")
        sp.add_argument("--topology", default="leafspine:2x2x2", help="--sim: FILE, leafspine:NxMxK or fattree:K")
        sp.add_argument("--from", dest="from_profile", default="baseline", help="--sim: the fabric's profile before")
        if name == "apply":
            sp.add_argument("--compare", choices=WORKLOADS, default=None, metavar="WORKLOAD",
                            help="run WORKLOAD on all hosts after the canary apply; compare canary hosts with the rest")
            sp.add_argument("--size", type=_size, default=COMPARE_SIZE, help="--compare: bytes per host (e.g. 64KiB)")
            step = sp.add_mutually_exclusive_group()
            step.add_argument("--promote", action="store_true", help="roll the file out to every node")
            step.add_argument("--rollback", action="store_true", help="restore the settings before the rollout")


def _canary_hosts(topo, nodes: set[str] | None) -> list[str]:
    """The hosts the canary touches: named ones and those below a canary leaf."""
    if nodes is None:
        return [h.name for h in topo.hosts]
    return [h.name for h in topo.hosts if h.name in nodes or h.leaf in nodes]


# -- live --------------------------------------------------------------------------------------
def _current(state_dir: Path, state, topo) -> tuple[cf.NodeSettings, list[str] | None]:
    """The per-node settings the live fabric runs, and the pending canary set (None if none)."""
    path = state_dir / CURRENT_FILE
    if path.exists():
        rec = json.loads(path.read_text())
        return cf.NodeSettings.from_dict(rec["nodes"]), rec["canary"]
    return cf.uniform(topo, current_settings(state)), None


def pending_canary(state_path: Path) -> tuple[list[str], cf.NodeSettings] | None:
    """The canary set and every node's settings while a canary is pending (applied, neither
    promoted nor rolled back); None otherwise."""
    path = state_path.parent / CURRENT_FILE
    if not path.exists():
        return None
    rec = json.loads(path.read_text())
    return (rec["canary"], cf.NodeSettings.from_dict(rec["nodes"])) if rec["canary"] is not None else None


def nic_settings(state_path: Path) -> dict | None:
    """Each NIC's settings while a canary is pending, for runs that must not push the
    fabric-wide settings over the canary's; None otherwise."""
    pending = pending_canary(state_path)
    return pending[1].nics if pending is not None else None


def _save_current(state_dir: Path, ns: cf.NodeSettings, canary: list[str] | None) -> None:
    path = state_dir / CURRENT_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"nodes": ns.to_dict(), "canary": canary}, indent=1))
    tmp.replace(path)


def cmd_diff(args: argparse.Namespace, state_path: Path) -> int:
    if args.sim:
        return _sim(args, diff_only=True)
    with attached(state_path) as (state, ctl):
        topo = ctl.topo
        cfg = cf.load_config(args.file, topo)
        current, _ = _current(state_path.parent, state, topo)
        ctl.installed = cf.node_intents(ctl, current)
        print("\n".join(cf.describe_diff(ctl, current, cf.target(current, cfg, cf.canary_set(args.canary, topo)))))
    return 0


def cmd_apply(args: argparse.Namespace, state_path: Path) -> int:
    if args.sim:
        return _sim(args, diff_only=False)
    state_dir = state_path.parent
    with attached(state_path, with_nics=True) as (state, ctl):
        topo = ctl.topo
        current, pending = _current(state_dir, state, topo)
        base = None
        if args.rollback:
            new, base = cf.load_previous(state_dir)
            canary = None
        else:
            cfg = cf.load_config(args.file, topo)  # the whole file is validated before any write
            nodes = None if args.promote else cf.canary_set(args.canary, topo)
            new, canary = cf.target(current, cfg, nodes), sorted(nodes) if nodes else None
            if nodes is None and not cfg.switches and not cfg.nics:
                base = {"profile": cfg.profile, "overrides": cfg.overrides}
        ctl.connect(timeout=10)
        ctl.installed = cf.node_intents(ctl, current)
        if not args.rollback and pending is None:  # the state before this rollout began
            cf.save_previous(state_dir, current, {"profile": state.profile, "overrides": state.overrides})
        n = cf.apply_settings(ctl, current, new)
        _save_current(state_dir, new, canary)
        if base is not None:  # the fabric runs one profile + overrides again: what restarts re-push
            state.profile, state.overrides = base["profile"], base["overrides"]
            state.save(state_path)
        print(f"{_step(args)}: {n} switch updates written")
        if args.compare:
            return _live_compare(args, state, ctl, new, canary)
    return 0


def _live_compare(args: argparse.Namespace, state, ctl, settings: cf.NodeSettings, canary: list[str] | None) -> int:
    """The workload on every host of the live fabric, each NIC with its own settings; the
    canary hosts' results against the rest's."""
    topo = ctl.topo
    hosts = [h.name for h in topo.hosts]
    size = args.size - args.size % len(hosts)
    tel = Telemetry(ctl)
    ctl.on_packet_in = tel.on_packet_in
    result, _ = run_workload(state, ctl, args.compare, hosts, size=size, progress=False, telemetry=tel,
                             nic_settings=settings.nics)
    stats = {h: ctl.nics[h].stats() for h in hosts}
    specs = workload_specs(topo, args.compare, hosts, size=size)
    print(_compare_groups(args.compare, topo, set(canary) if canary else None, specs, stats, tel, result.errors))
    return 0 if result.ok else 1


def _compare_groups(workload: str, topo, nodes: set[str] | None, specs, stats, tel, errors: list[str]) -> str:
    """The comparison table of the canary hosts (named, or below a canary leaf) and the rest."""
    hosts = [h.name for h in topo.hosts]
    picked = _canary_hosts(topo, nodes)
    groups = [("canary", picked), ("rest", [h for h in hosts if h not in picked])]
    results = [build_result(workload, name, specs, {h: stats[h] for h in group}, tel, errors)
               for name, group in groups if group]
    return (f"\n{workload} on every host, canary ({','.join(picked)}) against the rest "
            f"(switch columns are fabric-wide):\n" + comparison_table(results))


def _step(args: argparse.Namespace) -> str:
    if args.rollback:
        return "rolled back"
    if args.promote:
        return "promoted to every node"
    return f"applied to {args.canary}" if args.canary else "applied to every node"


# -- simulated ---------------------------------------------------------------------------------
def _sim(args: argparse.Namespace, diff_only: bool) -> int:
    """On a fresh simulated fabric: diff; apply to the canary set (comparing a workload there
    and on the rest); then promote and/or roll back as asked, checking the rollback's reads."""
    try:
        topo = parse_topology(args.topology)
    except (ValueError, OSError) as e:
        raise SettingsError(str(e)) from None
    cfg = cf.load_config(args.file, topo)
    nodes = cf.canary_set(args.canary, topo)
    before = cf.uniform(topo, settings_for(args.from_profile))
    canary = cf.target(before, cfg, nodes)
    pipe = compile_fabric("ours", Path("out/sim/build"))
    hosts = [h.name for h in topo.hosts]
    compare = None if diff_only else args.compare
    specs = workload_specs(topo, compare, hosts, size=args.size - args.size % len(hosts)) if compare else {}
    lines: list[str] = []

    def prepare(fab, ctl, tel):
        lines.extend(cf.describe_diff(ctl, before, canary))
        if not diff_only:
            n = cf.apply_settings(ctl, before, canary)
            lines.append(f"applied to {args.canary or 'every node'}: {n} switch updates written")
        return None

    run = simulate(topo, pipe, settings_for(args.from_profile), args.from_profile,
                   specs, prepare=prepare)
    print("\n".join(lines))
    try:
        if compare:
            stats = {h: nic.stats() for h, nic in run.fabric.nics.items()}
            print(_compare_groups(compare, topo, nodes, specs, stats, run.telemetry, run.errors))
        if not diff_only and (args.promote or args.rollback):
            ctl = run.controller
            everywhere = cf.target(before, cfg, None)
            if args.promote:
                print(f"promoted to every node: {cf.apply_settings(ctl, canary, everywhere)} switch updates written")
            if args.rollback:
                now = everywhere if args.promote else canary
                print(f"rolled back: {cf.apply_settings(ctl, now, before)} switch updates written")
    finally:
        run.controller.close()
    return 1 if run.errors else 0


COMMANDS = {"diff": cmd_diff, "apply": cmd_apply}
