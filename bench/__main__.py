"""`make bench`: runs every benchmark module in this package and prints one table.

Each ``bench/bench_*.py`` module exposes ``run() -> list[Result]``; ``python -m bench NAME...``
runs only the modules whose names contain one of the NAMEs (``python -m bench p4runtime``); a module whose subject
is not built yet (an import error) is reported, not fatal, so the table grows with the project.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import traceback
from pathlib import Path

from bench.result import Result

# Benchmarks stop switches (gRPC servers) on purpose; gRPC's C core can log the GOAWAY that
# reaches a client channel still being torn down as an INFO line, which would land in the
# table. Set before any benchmark imports grpc; an explicit GRPC_VERBOSITY still wins.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")


def main(only: list[str]) -> int:
    results: list[Result] = []
    failed = 0
    here = Path(__file__).parent
    for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda m: m.name):
        if not info.name.startswith("bench_") or (only and not any(n in info.name for n in only)):
            continue
        try:
            module = importlib.import_module(f"bench.{info.name}")
            results.extend(module.run())
        except Exception:  # one broken benchmark must not hide the others' figures
            failed += 1
            print(f"[{info.name}] failed:", file=sys.stderr)
            traceback.print_exc()
    width = max((len(r.name) for r in results), default=10)
    for r in results:
        print(f"{r.name:<{width}}  {r.value:>14,.1f} {r.unit:<12} {r.detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
