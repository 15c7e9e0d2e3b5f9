"""A sweep whose points run until interrupted, for the Ctrl-C test: each point writes its
worker's PID into ``STARTED_DIR`` and then works (sleeps) for far longer than the test waits.

    python interrupted_sweep.py STARTED_DIR OUT_DIR
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from experiments import registry
from experiments.base import Point
from fabricctl.main import main


class Endless:
    name = "endless"
    title = "points that run until the sweep is interrupted"
    claims: list = []

    def __init__(self, started: Path) -> None:
        self.started = started

    def points(self, quick: bool, seeds: int = 1) -> list[Point]:
        return [Point(self.name, {"n": n}, 1, quick) for n in range(4)]

    def run_point(self, point: Point) -> dict:
        (self.started / f"point-{point.params['n']}").write_text(str(os.getpid()))
        time.sleep(600)
        return {}


if __name__ == "__main__":
    registry.EXPERIMENTS["endless"] = Endless(Path(sys.argv[1]))
    sys.exit(main(["sweep", "endless", "--workers", "2", "--out", sys.argv[2], "--no-progress"]))
