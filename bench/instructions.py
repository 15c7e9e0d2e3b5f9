"""One workload of the executor, the device or the controller's telemetry, run under callgrind
with instrumentation switched on only around its packets: ``python -m bench.instructions NAME STEPS``; or the
simulator's 2x2x2 ring all-reduce (``bench_fabricsim``'s (a), baseline profile) counted from
the workload's start to its end: ``python -m bench.instructions fabricsim BYTES_PER_HOST``.

Why: on this shared machine the same code's packets/s moves by 30 % and more between runs
(CPU time included), so a lever worth 5 % cannot be seen by timing it. The number of machine
instructions a packet takes is the same from run to run whatever else the machine does;
``bench_instructions`` runs this module at two step counts and reports the difference per
packet. The cyclic garbage collector is held off while counting: when it runs depends on the
whole heap, not on the code being measured (``bench_fabricsim`` shows what it costs there).
"""

from __future__ import annotations

import gc
import itertools
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench import bench_exec, bench_fabric, bench_switch
from controller.controller import FabricController
from controller.fabric_rules import PORT_STATS, stat_cells
from controller.pipeline import compile_fabric
from controller.profiles import settings_for
from controller.sim_cmd import sim_units, simulate
from controller.telemetry import Telemetry
from controller.workloads import workload_specs
from fabricsim.fabric import P4Fabric
from p4switch.exec import V1Pipeline
from topo.builder import fat_tree, leaf_spine

Step = Callable[[], None]
MIN_STEP_PACKETS = 64  # a workload of fewer frames goes through them again
WARM_UP_STEPS = 4  # CPython specialises the generated code's instructions on first runs


def _process(built: tuple[V1Pipeline, int, list[bytes]]) -> tuple[Step, int]:
    """``pipe.process`` over the workload's frames, the clock ticking 1 us a packet (as
    ``bench_exec.median_rate`` drives it)."""
    pipe, port, frames = built
    frames = frames * max(1, MIN_STEP_PACKETS // len(frames))
    clock = itertools.count(1)

    def step() -> None:
        for frame in frames:
            pipe.process(port, frame, next(clock))

    return step, len(frames)


def _device() -> tuple[Step, int]:
    """A read of frames to the device, then a poll, as the I/O loop drives it."""
    device, read = bench_switch.device_workload()

    def step() -> None:
        device.receive_frames(1, read)
        device.poll()

    return step, len(read)


def _telemetry() -> tuple[Step, int]:
    """One telemetry sample of a configured k=4 fat tree in the simulator (fabric.p4, the
    ai-fabric profile): every port statistic of every switch read over the in-process
    P4Runtime connection; its "packets" are the cells read."""
    topo = fat_tree(4)
    fab = P4Fabric(topo)
    with tempfile.TemporaryDirectory() as tmp:
        ctl = FabricController(topo, compile_fabric("ours", Path(tmp)), settings_for("ai-fabric"),
                               nics=fab.nics, connection=fab.connection, units=sim_units(fab))
        ctl.start()
    tel = Telemetry(ctl, fabric_us=lambda: fab.now_ns() / 1e3)
    cells = sum(len(stat_cells(list(topo.ports_of(s.name)), per_prio))
                for s in topo.switches for _kind, _short, per_prio in PORT_STATS.values())

    def step() -> None:
        tel.sample()

    return step, cells


WORKLOADS: dict[str, Callable[[], tuple[Step, int]]] = {
    "exec basic L3": lambda: _process(bench_exec.basic_workload()),
    "exec fabric.p4 routing": lambda: _process(bench_exec.fabric_routing_workload()),
    **{f"exec fabric.p4 {name}": (lambda setup=setup: _process(bench_fabric.workload(setup)))
       for name, setup in bench_fabric.PROFILES.items()},
    "device basic L3": _device,
    "telemetry sample fattree4 (cells)": _telemetry,
}


def _instrument(on: bool) -> None:
    """Ask callgrind to start or stop counting this process (it answers before this returns)."""
    subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(os.getpid())],
                   check=True, capture_output=True)


def fabricsim(size: int) -> None:
    """The simulated all-reduce, counted from the hosts' start (``simulate``'s ``prepare``
    hook) to the end of the run; prints its packet-hops."""
    with tempfile.TemporaryDirectory() as tmp:
        pipe = compile_fabric("ours", Path(tmp))
        topo = leaf_spine(2, 2, 2)
        specs = workload_specs(topo, "all-reduce", [h.name for h in topo.hosts], size=size)

        def count(*_: object) -> None:
            gc.collect()
            gc.disable()
            _instrument(True)

        run = simulate(topo, pipe, settings_for("baseline"), "baseline", specs, prepare=count)
        _instrument(False)
        if run.errors:
            raise RuntimeError(f"simulated all-reduce failed: {run.errors[:3]}")
        print(f"packet-hops {run.fabric.packet_hops()}")


def main(name: str, steps: int) -> None:
    step, packets = WORKLOADS[name]()
    for _ in range(WARM_UP_STEPS):
        step()
    gc.collect()
    gc.disable()
    _instrument(True)
    for _ in range(steps):
        step()
    _instrument(False)
    print(f"packets per step {packets}")


if __name__ == "__main__":
    if sys.argv[1] == "fabricsim":
        fabricsim(int(sys.argv[2]))
    else:
        main(sys.argv[1], int(sys.argv[2]))
