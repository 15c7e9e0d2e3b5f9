"""``python -m p4switch.exec.prebuild PROGRAM.p4...``: build the mypyc backend's compiled
module of each program ahead (``native.py``), so that no switch waits for a build when it
loads the program (fabric.p4's takes about 42 s at gcc -O3, ``native.AHEAD_OPT_LEVEL``), and the per-packet modules of the switch,
the NIC model and the simulator (``netbase.hotpath.DATA_PATH``). A build already in the cache
is found, not made again; the command prints where each one is."""

from __future__ import annotations

import argparse
import sys

from netbase.hotpath import DATA_PATH
from p4switch.exec.compile import compile_checked
from p4switch.frontend import compile_file


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m p4switch.exec.prebuild", description=__doc__.split("\n\n")[0])
    ap.add_argument("programs", nargs="*", help="P4-16 (v1model) source files")
    ap.add_argument("-I", dest="include", action="append", default=[], help="include directory")
    args = ap.parse_args(argv)
    for path in args.programs:
        compiled = compile_checked(compile_file(path, include_dirs=args.include), backend="mypyc", ahead=True)
        print(f"{path}: {compiled.backend} module {compiled.module_file}")
    print(f"{', '.join(DATA_PATH.modules)}: built in {DATA_PATH.build()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
