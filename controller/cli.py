"""``fabricctl``: the operator's command line for a running fabric.

Every command finds the fabric through its state file (``--state``, ``$FABRICCTL_STATE`` or
/run/aifabric/state.json; see ``controller.state``). Exit status: 0 success, 1 the fabric
refused or could not be reached, 2 bad arguments. Arguments are validated completely before
anything is written, so a rejected command leaves switches and NICs as they were.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

from controller import alerts_cmd, config_cmd, mixed_cmd, sim_cmd
from controller.drills import cli as drill_cmd
from controller.fabric_rules import describe_index
from controller.intent import diff
from controller.profiles import PROFILES, settings_for
from controller.report import comparison_table, plot, source_lines
from controller.results import RunResult
from controller.session import attached
from controller.settings import SettingsError, parse_value
from controller.state import FabricState, StateError, default_path
from controller.telemetry import Telemetry
from controller.textfmt import shown_path, table
from controller.workloads import run_workload, workload_specs
from nicmodel.hw_counters import format_hw
from nicmodel.mgmt import MgmtError, NicClient
from nicmodel.workloads import CDF_FILES, WorkloadSpec
from p4rt.errors import P4InfoError, P4RuntimeError
from p4rt.formatting import format_match, format_value

EXIT_FAIL = 1
EXIT_USAGE = 2
SHOWN_UPDATE_ERRORS = 5  # failing updates of a Write printed with their codes; the rest counted

# `set` sections: a settings section, or a shorthand that also selects a mode.
SET_ALIASES: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {
    # alias: (section, implied values, key renames)
    "dlb": ("lb", {"data_mode": "dlb"}, {"timeout_us": "flowlet_timeout_us"}),
    "spray": ("lb", {"data_mode": "spray"}, {"algo": "spray_algo"}),
    "ecmp": ("lb", {"data_mode": "ecmp"}, {}),
}
WORKLOADS = ("all-reduce", "all-to-all", "incast", "poisson")
SHELL_ELECTION_ID = 20  # above the fabric controller (1) and fabricctl (10)


class UsageError(Exception):
    """Bad arguments discovered after parsing (unknown switch, malformed key=value...)."""


def build_parser(plugins: tuple[Any, ...] = ()) -> argparse.ArgumentParser:
    """``plugins``: modules above the controller adding commands (``add_parser(sub)`` and
    ``COMMANDS``), e.g. the experiments; the ``fabricctl`` entry point (fabricctl/main.py) passes them."""
    p = argparse.ArgumentParser(
        prog="fabricctl",
        description="Operate a running AI-fabric testbed (switches over P4Runtime, RNICs over their management API).",
        epilog="The fabric is found through its state file, written by `python -m controller.run_demo --keep` "
               "(or --cli) while the fabric is up.",
    )
    p.add_argument("--state", type=Path, default=None,
                   help="fabric state file (default: $FABRICCTL_STATE or /run/aifabric/state.json)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sub.add_parser("status", help="switches, ports, links and NICs of the fabric",
                   description="Show every switch (reachable? pipeline?), its ports and links, and every NIC.")
    for name, what in (("tables", "table entries and selector groups"), ("counters", "counter values"),
                       ("registers", "register values")):
        sp = sub.add_parser(name, help=f"{what} of one switch", description=f"Read the {what} of SWITCH over P4Runtime.")
        sp.add_argument("switch", metavar="SWITCH" if name != "counters" else "SWITCH|HOST")
        sp.add_argument("--name", help="only this one (P4Info name, or its last part, e.g. routing_v4)")
        if name != "tables":
            sp.add_argument("--all", action="store_true", help="also show zero values")

    sp = sub.add_parser("set", help="change ECN, PFC, DLB, spray, INT, CC or class settings",
                        description="Set fabric parameters. SECTION is one of: "
                                    + ", ".join(["lb", "classes", "ecn", "pfc", "int", "nic", "cc", *SET_ALIASES])
                                    + ". `cc` sets nic.cc (algo=NAME) and its parameters; `dlb`/`spray`/`ecmp` "
                                      "select that load-balancing mode for RoCE data.",
                        epilog="examples: fabricctl set ecn kmin_bytes=10000 kmax_bytes=50000 pmax=0.1 | "
                               "fabricctl set dlb timeout_us=300 | fabricctl set spray algo=random | "
                               "fabricctl set cc algo=hpcc eta=0.9 | fabricctl set int enabled=false")
    sp.add_argument("section", metavar="SECTION")
    sp.add_argument("values", nargs="*", metavar="KEY=VALUE")

    sp = sub.add_parser("profile", help="apply a named profile in one step",
                        description="Apply a profile to every switch and NIC: "
                                    + "; ".join(f"{n}: {v['description']}" for n, v in PROFILES.items())
                                    + ". Clears earlier `set` overrides.")
    sp.add_argument("name", nargs="?", metavar="NAME", help="profile name (omit to list them)")

    sp = sub.add_parser("run", help="run a workload on the NICs with a progress bar",
                        description="Run a workload among the fabric's hosts and save its results for `report`.")
    sp.add_argument("workload", choices=WORKLOADS, metavar="WORKLOAD", help=" | ".join(WORKLOADS))
    sp.add_argument("--size", type=_positive_int, default=256 * 1024,
                    help="bytes per host (all-reduce buffer, all-to-all/incast message); default 256 KiB")
    sp.add_argument("--hosts", help="comma-separated hosts (default: all)")
    sp.add_argument("--cdf", default="websearch",
                    help="poisson: flow-size CDF: " + ", ".join(CDF_FILES) + " (the HPCC paper's workloads) or a file")
    sp.add_argument("--load", type=_fraction, default=0.3, help="poisson: offered load 0..1 of host link rate")
    sp.add_argument("--flows", type=_positive_int, default=40, help="poisson: number of flows")
    sp.add_argument("--timeout", type=_positive_float, default=300.0, help="wall-clock seconds before giving up")

    sp = sub.add_parser("telemetry", help="live queue depth, pauses, ECN marks and link utilisation per link",
                        description="Sample counters and INT data from every switch and print one table per sample.")
    sp.add_argument("--interval", type=_positive_float, default=1.0, help="seconds between samples (wall clock)")
    sp.add_argument("--count", type=_positive_int, default=0, help="number of samples (default: until Ctrl-C)")
    sp.add_argument("--json", action="store_true", help="one JSON object per sample instead of a table")
    alerts_cmd.add_threshold_args(sp)

    sp = sub.add_parser("report", help="FCT/slowdown percentiles, goodput, retransmissions, pauses; table + PNGs",
                        description="Compare saved runs (default: the latest run of each workload/profile in the "
                                    "fabric's out directory, or in ./out when no fabric is up).")
    sp.add_argument("runs", nargs="*", type=Path, metavar="RUN.json")
    sp.add_argument("--out", type=Path, help="directory for the PNG plots (default: <fabric out dir>/plots)")

    sp = sub.add_parser("shell", help="open p4runtime-shell on one switch",
                        description="Start p4runtime-shell connected to SWITCH. The shell is primary while it is "
                                    "open (the fabric controller is backup and takes over again when it exits).")
    sp.add_argument("switch", metavar="SWITCH")

    sim_cmd.add_parser(sub)
    drill_cmd.add_parser(sub)
    alerts_cmd.add_parser(sub)
    config_cmd.add_parser(sub)
    mixed_cmd.add_parser(sub)
    for plugin in plugins:
        plugin.add_parser(sub)
    return p


def _checked(convert: Callable[[str], Any], ok: Callable[[Any], bool], what: str) -> Callable[[str], Any]:
    """An argparse ``type`` that converts and range-checks, naming ``what`` it expected."""
    def parse(text: str) -> Any:
        try:
            v = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return v
    return parse


_positive_int = _checked(int, lambda v: v > 0, "a positive integer")
_positive_float = _checked(float, lambda v: 0 < v < float("inf"), "a positive number")  # no nan, no inf
_fraction = _checked(float, lambda v: 0 < v <= 1, "a number in (0, 1]")


def main(argv: list[str] | None = None, plugins: tuple[Any, ...] = ()) -> int:
    args = build_parser(plugins).parse_args(argv)
    state_path = args.state or default_path()
    commands = dict(COMMANDS)
    for plugin in plugins:
        commands.update(plugin.COMMANDS)
    try:
        return commands[args.command](args, state_path)
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (UsageError, SettingsError, P4InfoError) as e:
        print(f"fabricctl: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except P4RuntimeError as e:  # its first line says what failed; then the first failing updates
        print(f"fabricctl: {str(e).splitlines()[0]}", file=sys.stderr)
        for line in e.details[:SHOWN_UPDATE_ERRORS]:
            print(f"  {line}", file=sys.stderr)
        if len(e.details) > SHOWN_UPDATE_ERRORS:
            print(f"  ... and {len(e.details) - SHOWN_UPDATE_ERRORS} more failed updates", file=sys.stderr)
        return EXIT_FAIL
    except (StateError, ConnectionError, RuntimeError, OSError, MgmtError) as e:
        print(f"fabricctl: {e}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        return 130


# -- commands --------------------------------------------------------------------------------
def cmd_status(args, state_path: Path) -> int:
    with attached(state_path) as (state, ctl):
        return _status(state, ctl)


def _status(state, ctl) -> int:
    topo = ctl.topo
    rows = []
    down = 0
    for s in topo.switches:
        conn = ctl.conns[s.name]
        config = "-"
        try:
            cfg = conn.get_pipeline()
            pipe = "fabric.p4" if cfg.cookie.cookie == ctl.pipeline.cookie else "other program"
            up = "up"
            if pipe == "fabric.p4":  # compare what the switch holds with what the profile implies
                n = len(diff(ctl.p4, ctl.read_intent(s.name), ctl.installed[s.name]))
                config = "in sync" if n == 0 else f"DIFFERS ({n} updates to sync)"
        except P4RuntimeError as e:
            if e.code == grpc.StatusCode.FAILED_PRECONDITION:  # answering, but no program loaded
                pipe, up = "none", "up"
            else:
                pipe, up = "-", f"DOWN ({e.code.name})"
                down += 1
        rows.append([s.name, s.role, s.device_id, state.switches[s.name].grpc, up, pipe, config])
    print(f"fabric {topo.name}: target {state.target}, profile {state.profile}"
          + (f" + overrides {json.dumps(state.overrides)}" if state.overrides else "")
          + f", time dilation {topo.time_dilation:g}")
    print(table(["switch", "role", "device", "grpc", "state", "pipeline", "config vs profile"], rows))
    print()
    link_rows = [[f"{link.a}:{link.a_port}", f"{link.b}:{link.b_port}", link.rate_gbps, link.delay_us]
                 for link in topo.links]
    print(table(["end A", "end B", "Gb/s", "delay us"], link_rows))
    print()
    nic_rows = []
    for h in topo.hosts:
        info = state.nics.get(h.name)
        nic_rows.append([h.name, h.ip, h.mac, f"{topo.host_port(h.name)[0]}:{topo.host_port(h.name)[1]}",
                         info.mgmt if info else "-", _nic_state(info)])
    print(table(["host", "ip", "mac", "leaf port", "mgmt socket", "nic"], nic_rows))
    return EXIT_FAIL if down else 0


def _nic_state(info) -> str:
    if info is None:
        return "none"
    if not os.path.exists(info.mgmt):
        return "DOWN (no socket)"
    try:
        with NicClient(info.mgmt, timeout=3) as nic:
            cfg = nic.status().get("config", {})
        return f"up cc={cfg.get('cc', '?')} rel={cfg.get('reliability', '?')}"
    except Exception as e:  # an unreachable NIC is a status to show, not a crash
        return f"DOWN ({e})"


def _switch(ctl, name: str):
    if name not in ctl.conns:
        raise UsageError(f"no switch named {name!r} (switches: {', '.join(ctl.conns)})")
    return name


def cmd_tables(args, state_path: Path) -> int:
    with attached(state_path) as (_, ctl):
        return _tables(ctl, _switch(ctl, args.switch), args.name)


def _tables(ctl, sw: str, only: str | None) -> int:
    names = [ctl.p4.resolve("tables", only)] if only else ctl.p4.names("tables")  # unknown: usage error
    for name in names:
        entries = ctl.read_table(sw, name)
        default = next((_format_action(ctl, ctl.p4.table_entry_from_pb(pb)[2])
                        for pb in ctl.read_table(sw, name, default=True)), "-")
        print(f"{name}: {len(entries)} {'entry' if len(entries) == 1 else 'entries'}, default {default}")
        rows = []
        keys = {k.name: k for k in ctl.p4.table_keys(name)}
        for pb in entries:
            _, entry, action = ctl.p4.table_entry_from_pb(pb)
            if entry is None:
                continue
            match = " ".join(f"{k}={format_match(v, keys.get(k))}" for k, v in sorted(entry.match.items()))
            rows.append([match or "*", _format_action(ctl, action), entry.priority or ""])
        if rows:
            print("  " + table(["match", "action", "prio"], rows).replace("\n", "\n  "))
    # selector groups: all of them, or those of the one table asked for
    wanted = {ctl.p4.get("tables", n).implementation_id for n in names}
    for prof in ctl.p4.names("action_profiles"):
        if only and ctl.p4.get("action_profiles", prof).preamble.id not in wanted:
            continue
        groups = ctl.read_groups(sw, prof)
        members = ctl.read_members(sw, prof)
        if groups:
            print(f"{prof}: {len(groups)} {'group' if len(groups) == 1 else 'groups'}")
            for gid, group in sorted(groups.items()):
                print(f"  group {gid}: " + ", ".join(f"{mid}: {_format_action(ctl, members.get(mid))}"
                                                    + (f" x{weight}" if weight != 1 else "") for mid, weight in group))
    return 0


def _format_action(ctl, action) -> str:
    if action is None:
        return "-"
    if hasattr(action, "params"):
        widths = {name: width for _, name, width in ctl.p4.action_params(action.name)}
        params = ", ".join(f"{k}={format_value(k, widths.get(k, 0), v)}" for k, v in action.params.items())
        return f"{action.name}({params})"
    return repr(action)


def cmd_counters(args, state_path: Path) -> int:
    with attached(state_path, with_nics=True) as (_, ctl):
        if args.switch in ctl.nics:  # a host: its NIC's counters under the names RDMA NICs use
            print(f"NIC statistics of {args.switch}:")
            print(format_hw(ctl.nics[args.switch].status()["counters"], args.all))
            return 0
        sw = _switch(ctl, args.switch)
        names = [ctl.p4.resolve("counters", args.name)] if args.name else ctl.p4.names("counters")
        for name in names:
            values = ctl.read_counter(sw, name)
            _print_cells(ctl, sw, name, [[i, pk, by] for i, (pk, by) in sorted(values.items()) if args.all or pk or by],
                         ["index", "packets", "bytes"], args.all)
    return 0


def cmd_registers(args, state_path: Path) -> int:
    with attached(state_path) as (_, ctl):
        sw = _switch(ctl, args.switch)
        names = [ctl.p4.resolve("registers", args.name)] if args.name else ctl.p4.names("registers")
        for name in names:
            values = ctl.read_register(sw, name)
            _print_cells(ctl, sw, name, [[i, v] for i, v in sorted(values.items()) if args.all or v],
                         ["index", "value"], args.all)
    return 0


def _print_cells(ctl, sw: str, name: str, rows: list[list[int]], headers: list[str], show_all: bool) -> None:
    """One table per counter/register, with what each index stands for where fabric.p4 says."""
    print(f"{name}: {len(rows)} {'' if show_all else 'non-zero '}{'cell' if len(rows) == 1 else 'cells'}")
    meaning = [describe_index(ctl.topo, sw, name, row[0]) for row in rows]
    if any(meaning):
        headers, rows = [headers[0], "meaning", *headers[1:]], [[r[0], m, *r[1:]] for r, m in zip(rows, meaning)]
    if rows:
        print("  " + table(headers, rows).replace("\n", "\n  "))


def parse_set(section: str, values: list[str]) -> dict[str, dict[str, Any]]:
    """``set`` arguments as settings overrides; raises UsageError/SettingsError."""
    if not values and section not in SET_ALIASES:
        raise UsageError(f"set {section}: give at least one KEY=VALUE")
    pairs: dict[str, Any] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise UsageError(f"expected KEY=VALUE, got {item!r}")
        pairs[key] = parse_value(value)
    if section in SET_ALIASES:
        target, implied, renames = SET_ALIASES[section]
        return {target: {**implied, **{renames.get(k, k): v for k, v in pairs.items()}}}
    if section == "cc":
        nic: dict[str, Any] = {}
        if "algo" in pairs:
            nic["cc"] = pairs.pop("algo")
        if pairs:
            nic["cc_params"] = pairs
        return {"nic": nic}
    return {section: pairs}


def _merge(base: dict[str, dict[str, Any]], extra: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {k: dict(v) for k, v in base.items()}
    for section, values in extra.items():
        cur = out.setdefault(section, {})
        for k, v in values.items():
            cur[k] = {**cur[k], **v} if isinstance(v, dict) and isinstance(cur.get(k), dict) else v
    return out


def cmd_set(args, state_path: Path) -> int:
    state = _load_state(state_path)
    overrides = _merge(state.overrides, parse_set(args.section, args.values))
    new = settings_for(state.profile, overrides)  # validates before anything is touched
    return _apply(state_path, new, profile=state.profile, overrides=overrides,
                  what=f"set {args.section} {' '.join(args.values)}".strip())


def cmd_profile(args, state_path: Path) -> int:
    if args.name is None:
        print(table(["profile", "what it does"], [[n, v["description"]] for n, v in PROFILES.items()]))
        return 0
    new = settings_for(args.name)  # unknown name -> SettingsError (usage) before any write
    return _apply(state_path, new, profile=args.name, overrides={}, what=f"profile {args.name}")


def _load_state(state_path: Path):
    return FabricState.load(state_path)


def _apply(state_path: Path, new, *, profile: str, overrides: dict, what: str) -> int:
    """Write the difference to every switch and configure every NIC, then record it."""
    with attached(state_path, with_nics=True) as (state, ctl):
        ctl.connect(timeout=10)
        n = ctl.apply(new)
        nics = len(ctl.nics)
    state.profile, state.overrides = profile, overrides
    state.save(state_path)
    print(f"{what}: {n} switch updates written, {nics} NICs configured")
    return 0


def cmd_run(args, state_path: Path) -> int:
    state = _load_state(state_path)
    hosts = args.hosts.split(",") if args.hosts else list(state.nics)
    for h in hosts:
        if h not in state.nics:
            raise UsageError(f"no NIC on host {h!r} (hosts: {', '.join(state.nics)})")
    try:  # the NICs' own checks (sizes, CDF), before any NIC starts anything
        for spec in workload_specs(state.topo(), args.workload, hosts, size=args.size, cdf=args.cdf,
                                   load=args.load, flows=args.flows).values():
            WorkloadSpec.from_dict(spec)
    except ValueError as e:
        raise UsageError(str(e)) from None
    with attached(state_path, with_nics=True) as (state, ctl):
        ctl.connect(timeout=10)  # primary while the run lasts: INT reports come to us as packet-ins
        tel = Telemetry(ctl)
        ctl.on_packet_in = tel.on_packet_in
        result, path = run_workload(state, ctl, args.workload, hosts, size=args.size, cdf=args.cdf,
                                    load=args.load, flows=args.flows, timeout_s=args.timeout, progress=True,
                                    telemetry=tel, nic_settings=config_cmd.nic_settings(state_path))
    print(comparison_table([result]))
    print(f"saved {shown_path(path)}")
    return 0 if result.ok else EXIT_FAIL


def cmd_telemetry(args, state_path: Path) -> int:
    with attached(state_path) as (_, ctl):
        sampler = Telemetry(ctl, alerts=alerts_cmd.monitor_for(args, ctl, state_path))
        sampler.sample()
        n = 0
        while not args.count or n < args.count:
            time.sleep(args.interval)
            snap = sampler.sample()
            n += 1
            if args.json:
                print(json.dumps(snap.to_dict()), flush=True)
            else:
                print(f"--- sample {n}: {snap.span_us:.0f} us of fabric time")
                print(snap.format(), flush=True)
    return 0


def cmd_report(args, state_path: Path) -> int:
    paths = list(args.runs)
    out = args.out
    if not paths:
        try:
            out_dir = Path(_load_state(state_path).out_dir)
        except StateError:  # no fabric up (e.g. after `make run`): the runs it left in ./out
            out_dir = Path("out")
        latest: dict[tuple[str, str], Path] = {}
        for p in sorted((out_dir / "runs").glob("*.json")):
            r = RunResult.load(p)
            latest[(r.workload, r.profile)] = p
        paths = list(latest.values())
        out = out or out_dir / "plots"
        if not paths:
            raise StateError(f"no saved runs in {out_dir / 'runs'} (`make run` or `fabricctl run` saves them)")
    runs = []
    for p in paths:
        try:
            runs.append(RunResult.load(p))
        except (OSError, ValueError, TypeError, KeyError) as e:
            raise UsageError(f"{p}: not a run result ({e})") from None
    print(comparison_table(runs))
    for line in source_lines(runs):
        print(line)
    for png in plot(runs, out or Path("out/plots")):
        print(f"wrote {shown_path(png)}")
    return 0


def cmd_shell(args, state_path: Path) -> int:
    state = _load_state(state_path)
    if args.switch not in state.switches:
        raise UsageError(f"no switch named {args.switch!r} (switches: {', '.join(state.switches)})")
    sw = state.switches[args.switch]
    cmd = [sys.executable, "-m", "p4runtime_sh", "--grpc-addr", sw.grpc, "--device-id", str(sw.device_id),
           "--election-id", f"0,{SHELL_ELECTION_ID}"]
    os.execv(sys.executable, cmd)
    return 0  # not reached


COMMANDS = {
    "status": cmd_status,
    "tables": cmd_tables,
    "counters": cmd_counters,
    "registers": cmd_registers,
    "set": cmd_set,
    "profile": cmd_profile,
    "run": cmd_run,
    "telemetry": cmd_telemetry,
    "report": cmd_report,
    "shell": cmd_shell,
    "sim": sim_cmd.cmd_sim,
    "drill": drill_cmd.cmd_drill,
    "alerts": alerts_cmd.cmd_alerts,
    **config_cmd.COMMANDS,
    **mixed_cmd.COMMANDS,
}

if __name__ == "__main__":
    sys.exit(main())
