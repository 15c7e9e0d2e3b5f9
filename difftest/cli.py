"""``p4switch-difftest PROG.p4 [-I DIR]... [--entries TEST.stf] [--seed N] [--count N] [-o OUT.stf]``

Compiles PROG.p4 with our front end and with the reference p4c (``--target bmv2 --arch
v1model``), derives table entries (from the STF file's setup lines and/or generated per table)
and packets (crafted per parser path, mutated, random; all from ``--seed``), runs them through
our target and BMv2's ``simple_switch`` and compares the frames out per packet (ports and
bytes; a drop is no frame). The first divergence is printed as an STF test (entries, the
packet, both outputs in comments, BMv2's output as ``expect``) and written to ``-o``.

Exit status: 0 no divergence, 1 a divergence, 2 a usage error, a missing tool (p4c,
simple_switch, libnanomsg) or a program one compiler refuses.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from difftest.run import Config, DiffRun, ToolError, stf_text
from lab.targets import TargetUnavailable
from netbase.nanomsg import NanomsgUnavailable


def _ports(text: str) -> list[int]:
    try:
        ports = [int(p, 0) for p in text.split(",") if p.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of port numbers: {text!r}") from None
    if not ports or any(not 0 <= p < 511 for p in ports):
        raise argparse.ArgumentTypeError(f"ports must be 0..510: {text!r}")
    return ports


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="p4switch-difftest", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("program", help="P4-16 program for v1model")
    ap.add_argument("-I", dest="include", action="append", default=[], help="include directory")
    ap.add_argument("--entries", metavar="STF", help="STF file: its add/setdefault/mirroring/multicast/register "
                                                     "lines are installed, its packets seed the mutations")
    ap.add_argument("--no-generated-entries", action="store_true", help="install only the --entries lines")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1): same seed, same run")
    ap.add_argument("--count", type=int, default=100, help="packets (default 100)")
    ap.add_argument("--per-table", type=int, default=3, help="at most this many generated entries per table")
    ap.add_argument("--ports", type=_ports, default=[0, 1, 2, 3], help="ingress ports, e.g. 0,1,2,3 (default)")
    ap.add_argument("--settle", type=float, default=0.2,
                    help="seconds BMv2 may stay silent before a packet counts as done (default 0.2); a "
                         "divergence is confirmed with five times that")
    ap.add_argument("-o", "--output", metavar="STF", help="where the divergence's STF test goes "
                                                         "(default: difftest-PROGRAM-seedN.stf)")
    ap.add_argument("--bmv2-json", metavar="JSON", help="BMv2 JSON of the program compiled elsewhere by p4c "
                                                         "(then p4c is not run here)")
    ap.add_argument("--workdir", help="keep p4c's output and BMv2's logs here (default: a temporary directory)")
    args = ap.parse_args(argv)
    if args.count < 1 or args.per_table < 0 or args.settle <= 0:
        ap.error("--count must be >= 1, --per-table >= 0 and --settle > 0")
    cfg = Config(args.program, args.include, args.entries, args.seed, args.count, args.per_table, args.ports,
                 args.settle, 5 * args.settle, not args.no_generated_entries, args.workdir,
                 args.bmv2_json)
    try:
        run = DiffRun(cfg, sys.stderr)
        try:
            res = run.run()
        finally:
            run.close()
    except (ToolError, TargetUnavailable, NanomsgUnavailable) as e:
        print(f"p4switch-difftest: {e}", file=sys.stderr)
        return 2
    d = res.divergence
    if d is None:
        print(f"PASS {args.program}: {res.packets} packets ({res.forwarded} forwarded, the rest dropped on both), "
              f"no divergence (seed {args.seed})")
        return 0
    text = stf_text(cfg, d)
    out = Path(args.output or f"difftest-{Path(args.program).stem}-seed{args.seed}.stf")
    out.write_text(text)
    print(text, end="")
    print(f"DIVERGENCE {args.program}: packet {d.index} of {res.packets} (seed {args.seed}); STF test written to {out}")
    return 1
