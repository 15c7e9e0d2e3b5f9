"""``python -m netbase``: build the per-packet modules of the data path (``netbase.hotpath.DATA_PATH``:
netbase's, the switch's, the NIC model's and the simulator's) into the native cache, as ``make
setup`` does; a build already made for the sources as they are is found, not built again.

A command of the package rather than of ``netbase.hotpath``: ``netbase`` installs the finder
from its ``__init__``, which imports ``netbase.hotpath`` before ``-m`` could run it."""

from __future__ import annotations

import argparse
import sys

from netbase.hotpath import DATA_PATH


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m netbase", description=__doc__.split("\n\n")[0]).parse_args(argv)
    print(f"{', '.join(DATA_PATH.modules)}: built in {DATA_PATH.build()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
