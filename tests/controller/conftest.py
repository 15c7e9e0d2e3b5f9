"""Shared by the controller tests: fabric.p4 compiled once, switch processes without ports.

Each switch is our target started as simple_switch_grpc would be, with no interfaces and a
gRPC address on 127.0.0.1 at a free port; it is stopped by PID when the test ends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.pipeline import Pipeline, compile_fabric
from ptf_tests.targets import SwitchProcess, free_tcp_port, start_switch, switch_command
from topo.spec import Topology

@pytest.fixture(scope="session")
def fabric_pipeline(tmp_path_factory) -> Pipeline:
    """fabric.p4 compiled for our target, once per test session."""
    return compile_fabric("ours", tmp_path_factory.mktemp("fabric-build"))


class Switches:
    """One p4switch process per topology switch, on the topology's gRPC ports."""

    def __init__(self, topo: Topology, log_dir: Path) -> None:
        self.topo = topo
        self.log_dir = log_dir
        self.procs: dict[str, SwitchProcess] = {}

    def start(self, name: str) -> SwitchProcess:
        s = self.topo.switch(name)
        addr = f"127.0.0.1:{s.grpc_port}"
        thrift = free_tcp_port()
        cmd = switch_command("ours", {}, s.device_id, addr, thrift, cpu_port=s.cpu_port, priority_queues=8)
        proc = start_switch(cmd, addr, thrift, self.log_dir / f"{name}-{len(self.procs)}.log")
        proc.wait_ready()
        self.procs[name] = proc
        return proc

    def start_all(self) -> None:
        for s in self.topo.switches:
            self.start(s.name)

    def stop(self, name: str) -> None:
        self.procs.pop(name).stop()

    def stop_all(self) -> None:
        for name in list(self.procs):
            self.stop(name)


def free_topology_ports(topo: Topology) -> Topology:
    """The same topology with every switch's gRPC port moved to a free one."""
    for s in topo.switches:
        s.grpc_port = free_tcp_port()
    return topo


@pytest.fixture(scope="module")
def switches(tmp_path_factory):
    """Factory: ``switches(topo)`` starts one switch per topology switch; all are stopped when
    the test module ends (modules share one fabric between tests to stay fast)."""
    made: list[Switches] = []
    log_dir = tmp_path_factory.mktemp("switch-logs")

    def start(topo: Topology) -> Switches:
        sw = Switches(free_topology_ports(topo), log_dir)
        made.append(sw)
        sw.start_all()
        return sw

    yield start
    for sw in made:
        sw.stop_all()
