"""Machine instructions per packet of the executor and the device (and per cell a telemetry
sample reads from the simulated switches), counted by callgrind.

Each workload of ``bench.instructions`` runs twice under ``valgrind --tool=callgrind``, for
``FEW`` and ``MANY`` steps with counting on only around the steps; the difference divided
by the extra packets is the cost of one packet, start-up and the counting switch cancelled.
The simulator's figure is everything a packet-hop takes in a whole simulated run (switches,
NICs, links, telemetry), from the hosts' start to the end, divided by its hops.
Every figure is counted with each backend (``P4SWITCH_BACKEND``: the generated Python, and it
compiled by mypyc); the compiled modules are built (or found in their cache) before counting.
The figure does not depend on the machine's load (packets/s here moves by 30 % between runs
of the same code), so it is the one to compare a lever against: run it on both trees.
Needs valgrind (``make setup`` installs it); reported, not fatal, without it.

Run alone: ``python -m bench instructions``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.bench_exec import BASIC, FABRIC
from bench.instructions import WORKLOADS
from bench.result import Result
from p4switch.exec import native

FEW, MANY = 2, 8
FABRICSIM_BYTES = 256 << 10  # per host: 3,840 packet-hops, about a minute under callgrind
ROOT = Path(__file__).resolve().parent.parent


def _callgrind(*args: str, reported: str, backend: str) -> tuple[int, int]:
    """(instructions counted, the number the worker printed after ``reported``) of one run of
    ``python -m bench.instructions ARGS`` under callgrind, the P4 run by ``backend``."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null",
                           sys.executable, "-m", "bench.instructions", *args],
                          cwd=ROOT, capture_output=True, text=True, check=True,
                          env={**os.environ, native.BACKEND_ENV: backend})
    counted = re.search(r"Collected : (\d+)", proc.stderr)
    number = re.search(reported + r" (\d+)", proc.stdout)
    if counted is None or number is None:
        raise RuntimeError(f"callgrind run of {args} reported nothing: {proc.stderr[-500:]}")
    return int(counted.group(1)), int(number.group(1))


def _count(name: str, steps: int, backend: str) -> tuple[int, int]:
    """(instructions counted, packets per step) of ``steps`` steps of workload ``name``."""
    return _callgrind(name, str(steps), reported="packets per step", backend=backend)


def _per_packet(name: str, backend: str) -> Result:
    (few, packets), (many, _) = _count(name, FEW, backend), _count(name, MANY, backend)
    return Result(f"instructions/packet {name} [{backend}]", (many - few) / ((MANY - FEW) * packets), "instr/packet",
                  f"callgrind, ({MANY} - {FEW}) steps of {packets} packets; independent of the machine's load")


def _per_hop(backend: str) -> Result:
    counted, hops = _callgrind("fabricsim", str(FABRICSIM_BYTES), reported="packet-hops", backend=backend)
    return Result(f"instructions/packet-hop fabricsim 2x2x2 all-reduce {FABRICSIM_BYTES >> 10}KiB [{backend}]",
                  counted / hops,
                  "instr/hop", f"callgrind, {hops} hops, the run from the hosts' start (set-up not counted); "
                  "everything a hop takes: switches, NICs, links, telemetry")


def run() -> list[Result]:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        return [Result("instructions/packet", 0.0, "instr/packet", "valgrind not installed (make setup installs it)")]
    # built outside valgrind, where a build would take minutes
    subprocess.run([sys.executable, "-m", "p4switch.exec.prebuild", str(BASIC), str(FABRIC)], check=True,
                   capture_output=True)
    with ThreadPoolExecutor(max_workers=2) as pool:  # one valgrind per core
        hops = [pool.submit(_per_hop, backend) for backend in native.BACKENDS]
        per_packet = pool.map(_per_packet, *zip(*[(w, b) for b in native.BACKENDS for w in WORKLOADS]))
        return [*per_packet, *(hop.result() for hop in hops)]
