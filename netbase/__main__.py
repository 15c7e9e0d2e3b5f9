"""``python -m netbase PACKAGE...``: build the per-packet modules of each package named (its
``HOTPATH``, ``netbase.hotpath``) into the native cache, as ``make setup`` does; a group
already built for its sources as they are is found, not built again.

A command of the package rather than of ``netbase.hotpath``: ``netbase`` installs its own
group from its ``__init__``, which imports ``netbase.hotpath`` before ``-m`` could run it."""

from __future__ import annotations

import argparse
import importlib
import sys

from netbase.hotpath import HotPath


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m netbase",
                                 description="Build the per-packet modules of each package named (its HOTPATH).")
    ap.add_argument("packages", nargs="+", help="e.g. netbase p4switch nicmodel fabricsim")
    for name in ap.parse_args(argv).packages:
        group: HotPath = importlib.import_module(name).HOTPATH
        print(f"{', '.join(group.modules)}: built in {group.build()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
