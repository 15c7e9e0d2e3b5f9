"""Machine instructions per packet of the executor and the device, counted by callgrind.

Each workload of ``bench.instructions`` runs twice under ``valgrind --tool=callgrind``, for
``FEW`` and ``MANY`` steps with counting on only around the steps; the difference divided
by the extra packets is the cost of one packet, start-up and the counting switch cancelled.
The figure does not depend on the machine's load (packets/s here moves by 30 % between runs
of the same code), so it is the one to compare a lever against: run it on both trees.
Needs valgrind (``make setup`` installs it); reported, not fatal, without it.

Run alone: ``python -m bench instructions``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.instructions import WORKLOADS
from bench.result import Result

FEW, MANY = 2, 8
ROOT = Path(__file__).resolve().parent.parent


def _count(name: str, steps: int) -> tuple[int, int]:
    """(instructions counted, packets per step) of ``steps`` steps of workload ``name``."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null",
                           sys.executable, "-m", "bench.instructions", name, str(steps)],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    counted = re.search(r"Collected : (\d+)", proc.stderr)
    packets = re.search(r"packets per step (\d+)", proc.stdout)
    if counted is None or packets is None:
        raise RuntimeError(f"callgrind run of {name!r} reported nothing: {proc.stderr[-500:]}")
    return int(counted.group(1)), int(packets.group(1))


def _per_packet(name: str) -> Result:
    (few, packets), (many, _) = _count(name, FEW), _count(name, MANY)
    return Result(f"instructions/packet {name}", (many - few) / ((MANY - FEW) * packets), "instr/packet",
                  f"callgrind, ({MANY} - {FEW}) steps of {packets} packets; independent of the machine's load")


def run() -> list[Result]:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        return [Result("instructions/packet", 0.0, "instr/packet", "valgrind not installed (make setup installs it)")]
    with ThreadPoolExecutor(max_workers=2) as pool:  # one valgrind per core
        return list(pool.map(_per_packet, WORKLOADS))
