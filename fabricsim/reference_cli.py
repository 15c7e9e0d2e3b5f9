"""``fabricsim-ref``: a workload on the fast reference switch model, from the shell.

    fabricsim-ref incast --hosts 5 --size 1MiB --cc dcqcn --pfc

Simulates HOSTS NICs (``nicmodel.Nic``) on one output-queued switch (``star``) or two joined by
a core link (``dumbbell``) of the reference model (reference_switch.py), and prints the run's
statistics. For the fabric program itself (fabric.p4 on every switch, configured by the
controller) use ``fabricctl sim run``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from fabricsim.link import LinkConfig
from fabricsim.reference_fabric import FabricConfig, SimFabric
from fabricsim.reference_switch import SwitchConfig
from nicmodel.cli import add_transport_args, format_summary, parse_rate, parse_size, transport_settings
from nicmodel.workloads import CDF_FILES, KINDS


def build_parser() -> argparse.ArgumentParser:
    run = argparse.ArgumentParser(prog="fabricsim-ref",
                                  description="Simulate HOSTS NICs on the fast reference switch model running "
                                              "WORKLOAD and print its statistics.")
    run.add_argument("workload", choices=KINDS)
    run.add_argument("--hosts", type=int, default=4, help="number of hosts (default 4)")
    run.add_argument("--size", type=parse_size, default=256 * 1024, help="message / buffer size (default 256KiB)")
    run.add_argument("--count", type=int, default=1, help="p2p: number of messages")
    run.add_argument("--src", type=int, default=0, help="p2p: sending rank")
    run.add_argument("--dst", type=int, default=None, help="p2p/incast: receiving rank")
    run.add_argument("--cdf", default="websearch", help=f"poisson: {', '.join(CDF_FILES)} or a file")
    run.add_argument("--load", type=float, default=0.5, help="poisson: offered load 0..1")
    run.add_argument("--flows", type=int, default=10, help="poisson: flows per host")
    run.add_argument("--stagger", type=int, default=0, metavar="NS", help="rank r starts r*NS late")
    run.add_argument("--seed", type=int, default=1)
    run.add_argument("--topology", choices=("star", "dumbbell"), default="star",
                     help="one switch, or two switches joined by a core link")
    run.add_argument("--core-rate", type=parse_rate, help="dumbbell: core link bit/s (default: line rate)")
    run.add_argument("--link-delay", type=int, default=1_000, metavar="NS", help="per-link delay (default 1000)")
    run.add_argument("--loss", type=float, default=0.0, help="per-frame loss probability on every link")
    run.add_argument("--pfc", action="store_true", help="switch sends PFC pauses")
    run.add_argument("--no-ecn", action="store_true", help="switch does not mark CE")
    run.add_argument("--kmin", type=parse_size, default=5 * 1024, help="ECN Kmin bytes")
    run.add_argument("--kmax", type=parse_size, default=200 * 1024, help="ECN Kmax bytes")
    run.add_argument("--pmax", type=float, default=0.01, help="ECN Pmax")
    run.add_argument("--json", metavar="PATH", help="write the full statistics as JSON")
    run.add_argument("--csv", metavar="DIR", help="write messages/series/counters CSV files")
    add_transport_args(run)
    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    except (ValueError, FileNotFoundError) as exc:
        print(f"fabricsim-ref: error: {exc}", file=sys.stderr)
        return 2
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.hosts < 2:
        raise ValueError("--hosts must be at least 2")
    switch = SwitchConfig(pfc=args.pfc, ecn=not args.no_ecn, kmin_bytes=args.kmin,
                          kmax_bytes=args.kmax, pmax=args.pmax)
    link = LinkConfig(rate_bps=args.line_rate, delay_ns=args.link_delay, loss=args.loss)
    core = LinkConfig(rate_bps=args.core_rate, delay_ns=args.link_delay, loss=args.loss) if args.core_rate else None
    fabric = SimFabric(FabricConfig(hosts=args.hosts, line_rate_bps=args.line_rate, link=link,
                                    switch=switch, topology=args.topology, core_link=core, seed=args.seed))
    settings = transport_settings(args, fabric.base_rtt_ns(args.mtu))
    spec: dict[str, Any] = {"kind": args.workload, "size": args.size, "count": args.count,
                            "src": args.src, "seed": args.seed, "stagger_ns": args.stagger,
                            "verify": args.workload == "allreduce"}
    dst = args.dst if args.dst is not None else (1 if args.workload == "p2p" else 0)
    spec["dst"] = dst
    if args.workload == "poisson":
        spec.update(cdf=args.cdf, load=args.load, flows_per_host=args.flows)
    stats = fabric.run(spec, settings)
    print(format_summary(stats.summary(), stats.fabric))
    if args.json:
        stats.to_json(args.json)
    if args.csv:
        stats.to_csv(args.csv)
    failed = [e.errors for e in fabric.endpoints if e.errors]
    if failed:
        print(f"fabricsim-ref: workload errors: {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
