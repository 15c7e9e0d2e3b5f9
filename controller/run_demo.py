"""``make run``: the default fabric in Mininet, a ring all-reduce under each profile, a table.

Steps: compile fabric.p4 for the target, start 2 spines x 2 leaves x 2 hosts in Mininet (P4
switch processes, one RNIC model per host), start the controller (pipeline, routes, groups,
thresholds, NIC settings), then for each profile (``baseline``, then ``ai-fabric``) apply it in
one step and run a ring all-reduce across all hosts while telemetry samples every switch.
Prints the side-by-side table, writes plots and run files under ``out/``, and tears down: every
process it started is stopped by PID and every interface deleted.

``--cli`` (with a terminal) leaves you in the Mininet CLI after the runs, with the controller
still running and the state file in place so ``fabricctl`` works from another shell; leaving
the CLI (``exit`` or Ctrl-D) tears everything down. ``--keep`` does the same without the
Mininet CLI (until Ctrl-C), for terminals-less use of ``fabricctl``.

The fabric runs time-dilated: links are 100 Gb/s in fabric time, the wall runs D times
slower, and all results are reported in fabric time. D is calibrated at start-up from what the
switch and NIC processes sustain on this machine now (controller/calibrate.py), unless
``--time-dilation`` (or the topology file) gives it. Each profile runs ``--repeats`` times
(default 3, interleaved); the table shows every metric as median [min-max], with the runs whose
switches or NICs ran late against the dilated clock flagged (controller/repeats.py says where
the limit is and why), and one line says whether the profiles differ beyond the run-to-run
spread. The plots show each profile's median run.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from controller.calibrate import calibrate_fabric
from controller.controller import FabricController
from controller.pipeline import Pipeline, compile_fabric
from controller.profiles import PROFILES, settings_for
from controller.repeats import lag_flagged, median_runs, repeated_table, verdicts
from controller.report import plot, source_lines
from controller.session import current_settings, profile_label
from controller.settings import Settings
from controller.state import FabricState, default_path
from controller.telemetry import Telemetry
from controller.textfmt import shown_path
from controller.workloads import run_workload
from lab.targets import Compiled
from nicmodel.mgmt import NicClient
from topo.builder import DEFAULT_RATE_GBPS, leaf_spine
from topo.fabric import FabricNet
from topo.spec import Topology, TopologyError, load

log = logging.getLogger("run_demo")

DEFAULT_SIZE = 1024 * 1024
DEFAULT_REPEATS = 3


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m controller.run_demo",
                                 description="Bring up the default leaf/spine fabric in Mininet, run a ring "
                                             "all-reduce under each profile and compare them.")
    ap.add_argument("--cli", action="store_true", help="after the runs, stay in the Mininet CLI (needs a terminal)")
    ap.add_argument("--keep", action="store_true", help="after the runs, keep the fabric up until Ctrl-C")
    ap.add_argument("--target", choices=("ours", "bmv2"), default="ours",
                    help="switch target: our p4switch (default) or BMv2 simple_switch_grpc (needs p4c and BMv2)")
    ap.add_argument("--time-dilation", type=float, default=None, metavar="D",
                    help="fabric time = wall time / D (default: calibrated at start-up for the built-in "
                         "topology, the topology file's otherwise)")
    ap.add_argument("--repeats", type=int, default=DEFAULT_REPEATS,
                    help=f"runs per profile, interleaved (default {DEFAULT_REPEATS}); the table shows median [min-max]")
    ap.add_argument("--topology", type=Path, help="topology file (YAML/JSON, see topo/spec.py) instead of the "
                                                  "built-in 2 x 2 x 2 leaf/spine")
    ap.add_argument("--size", type=int, default=DEFAULT_SIZE,
                    help=f"all-reduce buffer bytes per host (default {DEFAULT_SIZE}, a multiple of the hosts)")
    ap.add_argument("--profiles", default="baseline,ai-fabric",
                    help="comma-separated profiles to run, in order (default baseline,ai-fabric; "
                         "`fabricctl profile` lists them)")
    ap.add_argument("--spines", type=int, default=2, help="built-in topology: spines (default 2)")
    ap.add_argument("--leaves", type=int, default=2, help="built-in topology: leaves (default 2)")
    ap.add_argument("--hosts-per-leaf", type=int, default=2, help="built-in topology: hosts per leaf (default 2)")
    ap.add_argument("--uplink-gbps", type=float, default=None, metavar="G",
                    help="built-in topology: leaf-spine link rate in Gb/s (default: the 100 Gb/s of the host links; "
                         "lower it to oversubscribe the uplinks, so that queues build and PFC pauses the senders)")
    ap.add_argument("--prefix", default="", help="built-in topology: prefix of every node name (to run beside "
                                                 "another fabric on the same machine)")
    ap.add_argument("--out", type=Path, default=Path("out"), help="output directory (plots, runs, telemetry, logs; default out)")
    ap.add_argument("--state", type=Path, default=None, help="state file for fabricctl (default: $FABRICCTL_STATE "
                                                             "or /run/aifabric/state.json)")
    ap.add_argument("--pcap", action="store_true", help="capture every switch port into out/fabric/pcap")
    ap.add_argument("--timeout", type=float, default=600.0, help="wall seconds allowed per run (default 600)")
    return ap


def free_grpc_base(offsets: list[int]) -> int:
    """A base port such that base + each offset (the switches' device ids) is free."""
    rng = random.Random(os.getpid())
    for _ in range(50):
        base = rng.randrange(20000, 60000 - max(offsets))
        if all(_port_free(base + d) for d in offsets):
            return base
    raise RuntimeError("no free block of TCP ports for the switches")


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _check_names_free(topo) -> None:
    taken = [f"{link.b}-eth{link.b_port}" for link in topo.links
             if subprocess.run(["ip", "link", "show", f"{link.b}-eth{link.b_port}"], capture_output=True).returncode == 0]
    if taken:
        raise RuntimeError(f"another fabric is running on this machine (interfaces {', '.join(taken[:3])}"
                           f"{' ...' if len(taken) > 3 else ''} exist); tear it down first (Ctrl-C or `exit` where "
                           "it runs), or give this one other switch names with --topology")


def load_topology(args: argparse.Namespace) -> Topology:
    """The topology file given, or the built-in leaf/spine on free gRPC ports."""
    if args.topology is not None:
        topo = load(args.topology)
        busy = [f"{s.name}:{s.grpc_port}" for s in topo.switches if not _port_free(s.grpc_port)]
        if busy:
            raise ValueError(f"gRPC ports in use: {', '.join(busy)}")
        if args.time_dilation is not None:
            topo.time_dilation = args.time_dilation
        return topo
    ids = [s.device_id for s in leaf_spine(args.spines, args.leaves, args.hosts_per_leaf).switches]
    return leaf_spine(args.spines, args.leaves, args.hosts_per_leaf, prefix=args.prefix,
                      rate_gbps=DEFAULT_RATE_GBPS if args.uplink_gbps is None else args.uplink_gbps,
                      host_rate_gbps=DEFAULT_RATE_GBPS,
                      time_dilation=args.time_dilation or 1.0, grpc_base=free_grpc_base(ids))


def calibrated_dilation(args: argparse.Namespace, topo: Topology, pipe: Pipeline) -> None:
    """Set ``topo.time_dilation`` from a calibration unless the user or the file chose D."""
    if args.time_dilation is not None or args.topology is not None:
        return
    log.info("calibrating the time dilation: %s switch and NIC packet rates on this machine ...", args.target)
    cal = calibrate_fabric(args.target, Compiled(pipe.p4info_path, pipe.config_path), topo)
    topo.time_dilation = cal.dilation
    log.info("  %s", cal.describe())


def fabricctl_command() -> str:
    """How to call fabricctl from another shell: its full path unless the venv is on PATH."""
    script = Path(sys.executable).parent / "fabricctl"
    if script.exists() and shutil.which("fabricctl") != str(script):
        return str(script)
    return "fabricctl"


def state_settings(path: Path) -> tuple[Settings, str]:
    """The settings the state file says the fabric runs (``fabricctl`` may have changed them)."""
    st = FabricState.load(path)
    return current_settings(st), profile_label(st)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    unknown = [p for p in profiles if p not in PROFILES]
    if unknown or not profiles:
        print(f"run_demo: unknown profile(s) {', '.join(unknown)} (profiles: {', '.join(PROFILES)})", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("run_demo: Mininet needs root (run `sudo make run`)", file=sys.stderr)
        return 1
    if args.cli and not sys.stdin.isatty():
        print("run_demo: --cli needs a terminal; use --keep instead", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    out = args.out.resolve()
    state_path = args.state or default_path()
    if args.uplink_gbps is not None and not args.uplink_gbps > 0:
        print("run_demo: --uplink-gbps must be a positive link rate in Gb/s", file=sys.stderr)
        return 2
    try:
        topo = load_topology(args)
    except (TopologyError, ValueError) as e:
        print(f"run_demo: {e}", file=sys.stderr)
        return 2
    if args.repeats < 1:
        print("run_demo: --repeats must be at least 1", file=sys.stderr)
        return 2
    if args.size <= 0 or args.size % len(topo.hosts):
        print(f"run_demo: --size must be a positive multiple of the {len(topo.hosts)} hosts", file=sys.stderr)
        return 2
    try:
        _check_names_free(topo)
    except RuntimeError as e:
        print(f"run_demo: {e}", file=sys.stderr)
        return 1

    t0 = time.monotonic()
    log.info("compiling p4src/fabric.p4 for %s ...", args.target)
    try:
        pipe = compile_fabric(args.target, out / "build")
        calibrated_dilation(args, topo, pipe)
    except RuntimeError as e:  # compiler errors, or BMv2's tools not installed
        print(f"run_demo: {e}", file=sys.stderr)
        return 1
    fab = FabricNet(topo, out / "fabric", args.target, args.pcap)
    ctl: FabricController | None = None
    # SIGTERM tears down like Ctrl-C; so does SIGINT also where the shell started us with it ignored
    # (a background job: `make run ... &`, nohup). Python's own handler, which P4Runtime calls
    # hold back until they end (p4rt/interrupts.py)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        log.info("starting %s in Mininet (%d switches, %d RNIC hosts, time dilation %g) ...",
                 topo.name, len(topo.switches), len(topo.hosts), topo.time_dilation)
        fab.start()
        state = FabricState.of_fabric(fab, str(pipe.p4info_path), str(pipe.config_path), profiles[0], str(out))
        state.save(state_path)

        def switch_restarted(name: str, pid: int) -> None:  # a drill killed it; the state file names the new one
            state.switches[name].pid = pid
            state.save(state_path)

        fab.supervise(switch_restarted)
        nics = {h: NicClient(info.mgmt) for h, info in state.nics.items()}
        ctl = FabricController(topo, pipe, settings_for(profiles[0]), nics=nics, profile=profiles[0],
                               settings_source=lambda: state_settings(state_path),
                               thrift_ports={name: sw.thrift_port for name, sw in state.switches.items()})
        tel = Telemetry(ctl)
        ctl.on_packet_in = tel.on_packet_in
        log.info("controller: pushing the pipeline and installing state ...")
        ctl.start()
        log.info("fabric ready after %.0f s", time.monotonic() - t0)
        results = []
        hosts = [h.name for h in topo.hosts]
        for rep in range(args.repeats):
            for profile in profiles:  # interleaved: a slow phase of the machine hits every profile
                n = ctl.apply(settings_for(profile), profile)
                state.profile, state.overrides = profile, {}
                state.save(state_path)
                log.info("profile %s, run %d/%d: %d switch updates (%s)", profile, rep + 1, args.repeats, n,
                         PROFILES[profile]["description"])
                result, path = run_workload(state, ctl, "all-reduce", hosts, size=args.size, timeout_s=args.timeout,
                                            progress=True, telemetry=tel)
                lag = result.worst_lag_p99_ns
                log.info("  saved %s%s", shown_path(path), "" if lag is None else
                         f" (scheduling lag p99 {lag / 1e3:.3g} us{', FLAGGED' if lag_flagged(result) else ''})")
                results.append(result)
        print()
        print(f"Ring all-reduce of {args.size // 1024} KiB per host over {len(hosts)} hosts "
              f"({topo.name}, time dilation {topo.time_dilation:g}, times in fabric microseconds; "
              f"median [min-max] of {args.repeats} run(s) per profile):")
        print(repeated_table(results))
        for v in verdicts(results):
            print(v.line)
        for line in source_lines(results):
            print(line)
        for png in plot(median_runs(results), out / "plots"):
            print(f"wrote {shown_path(png)}")
        tel.write(out / "telemetry" / "all")
        failed = [r for r in results if not r.ok]
        for r in failed:
            print(f"{r.profile}: " + "; ".join(r.errors), file=sys.stderr)
        if args.cli:
            print(f"Mininet CLI: the controller keeps running; `{fabricctl_command()} --state {state_path} status` works "
                  "from another shell. `exit` tears the fabric down.")
            fab.cli()
        elif args.keep:
            print(f"fabric up; from another shell: `{fabricctl_command()} --state {state_path} status`; "
                  f"Ctrl-C (or kill -INT/-TERM {os.getpid()}) tears it down", flush=True)
            try:
                threading.Event().wait()
            except KeyboardInterrupt:  # the way --keep is meant to end: not a failure
                log.info("tearing down ...")
        return 1 if failed else 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if ctl is not None:
            ctl.close()
        fab.stop()
        state_path.unlink(missing_ok=True)
        log.info("torn down after %.0f s", time.monotonic() - t0)


if __name__ == "__main__":
    sys.exit(main())
