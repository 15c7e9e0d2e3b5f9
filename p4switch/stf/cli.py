"""``p4switch-stf PROG.p4 TEST.stf [-I DIR] [-D X=Y] [--all-ports]``: compile a program and run an STF test
on it; exit status 0 when every expectation holds, 1 on a failed expectation, 2 on a
program or STF error (printed as file:line:col or line N)."""

from __future__ import annotations

import argparse
import sys

from p4switch.compile_cli import parse_defines
from p4switch.exec import LoadedProgram
from p4switch.frontend import CompileError
from p4switch.stf.runner import StfError, run_stf_file


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="p4switch-stf", description=__doc__)
    ap.add_argument("program", help="P4-16 program for v1model")
    ap.add_argument("stf", help="STF test file")
    ap.add_argument("-I", dest="include", action="append", default=[], help="include directory")
    ap.add_argument("-D", dest="define", action="append", default=[], help="preprocessor define X=Y")
    ap.add_argument("--all-ports", action="store_true",
                    help="a packet on a port no packet/expect line names is unexpected (drops can be expected)")
    ap.add_argument("--stats", action="store_true", help="print the pipeline counters (drops by reason)")
    ap.add_argument("--dump-python", metavar="FILE", help="write the generated Python code to FILE")
    args = ap.parse_args(argv)

    defines = parse_defines(args.define)
    try:
        prog = LoadedProgram.from_file(args.program, include_dirs=args.include, defines=defines)
    except CompileError as e:
        print(str(e), file=sys.stderr)
        return 2
    except Exception as e:  # the executor rejects a construct it does not implement
        print(f"{args.program}: error: {e}", file=sys.stderr)
        return 2
    if args.dump_python:
        with open(args.dump_python, "w") as f:
            f.write(prog.source)
    try:
        res = run_stf_file(prog, args.stf, all_ports=args.all_ports)
    except (StfError, OSError) as e:
        print(f"{args.stf}: {e}", file=sys.stderr)
        return 2
    if args.stats:
        for k, v in sorted(res.stats.items()):
            print(f"  {k}: {v}")
    if res.ok:
        print(f"PASS {args.stf}: {res.packets_sent} packets sent, {res.packets_received} received")
        return 0
    print(f"FAIL {args.stf}: {len(res.failures)} failed expectation(s)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
