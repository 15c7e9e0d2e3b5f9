"""Controller speed on the default 2x2x2 fabric against four real switch processes (our target,
no ports, P4Runtime on loopback): pipeline push to all switches, the full install of every
switch's state, and a profile switch (baseline -> ai-fabric, only the differences written)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.result import Result
from controller.controller import FabricController
from controller.intent import Intent
from controller.pipeline import compile_fabric
from controller.profiles import settings_for
from lab.targets import free_tcp_port, start_switch, switch_command
from topo.builder import leaf_spine


def run() -> list[Result]:
    topo = leaf_spine()
    for s in topo.switches:
        s.grpc_port = free_tcp_port()
    procs = []
    with tempfile.TemporaryDirectory(prefix="bench-ctl-") as tmp:
        try:
            pipe = compile_fabric("ours", Path(tmp) / "build")
            for s in topo.switches:
                addr = f"127.0.0.1:{s.grpc_port}"
                thrift = free_tcp_port()
                cmd = switch_command("ours", {}, s.device_id, addr, thrift, cpu_port=s.cpu_port, priority_queues=8)
                procs.append(start_switch(cmd, addr, thrift, Path(tmp) / f"{s.name}.log"))
            for p in procs:
                p.wait_ready()
            ctl = FabricController(topo, pipe, settings_for("baseline"), profile="baseline")
            try:
                t0 = time.perf_counter()
                ctl.start()
                t_start = time.perf_counter() - t0
                objects = sum(i.size() for i in ctl.installed.values())
                t0 = time.perf_counter()
                for name, conn in ctl.conns.items():  # pipeline again: every switch empty
                    conn.set_pipeline(pipe.p4info, pipe.device_config, pipe.cookie)
                    ctl.installed[name] = Intent()
                t_push = time.perf_counter() - t0
                t0 = time.perf_counter()
                written = ctl.apply(settings_for("baseline"))
                t_install = time.perf_counter() - t0
                t0 = time.perf_counter()
                changed = ctl.apply(settings_for("ai-fabric"), "ai-fabric")
                t_switch = time.perf_counter() - t0
            finally:
                ctl.close()
        finally:
            for p in procs:
                p.stop()
    return [
        Result("controller: start 2x2x2 fabric (push + install)", t_start * 1e3, "ms", f"{objects} objects"),
        Result("controller: pipeline push, 4 switches in turn", t_push * 1e3 / len(topo.switches), "ms/switch"),
        Result("controller: full install", written / t_install, "updates/s", f"{written} updates on 4 switches"),
        Result("controller: profile switch", t_switch * 1e3, "ms", f"baseline -> ai-fabric, {changed} updates"),
    ]
