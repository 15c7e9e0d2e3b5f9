"""Shared by the controller tests: fabric.p4 compiled once, switch processes without ports,
and a leaf of the default topology on our executor holding the controller's entries.

Each switch is our target started as simple_switch_grpc would be, with no interfaces and a
gRPC address on 127.0.0.1 at a free port; it is stopped by PID when the test ends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.fabric_rules import build_intents
from controller.pipeline import Pipeline, compile_fabric
from controller.profiles import settings_for
from lab.targets import SwitchProcess, free_tcp_port, start_switch, switch_command
from p4rt.p4info import P4InfoIndex
from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.frontend import compile_file
from topo.builder import leaf_spine
from topo.spec import Topology

FABRIC_P4 = Path(__file__).resolve().parents[2] / "p4src" / "fabric.p4"
LEAF_CPU_PORT = 255  # the builder's cpu_port for every switch

@pytest.fixture(scope="session")
def fabric_pipeline(tmp_path_factory) -> Pipeline:
    """fabric.p4 compiled for our target, once per test session."""
    return compile_fabric("ours", tmp_path_factory.mktemp("fabric-build"))


@pytest.fixture(scope="session")
def fabric_checked():
    """fabric.p4 through our front end, once per session (for executor-level tests)."""
    return compile_file(str(FABRIC_P4))


@pytest.fixture(scope="session")
def leaf_switch(fabric_checked, fabric_pipeline):
    """Factory: ``leaf_switch(profile, leaf="leaf1") -> (pipeline, program)``, a leaf of the
    default topology running fabric.p4 on our executor with exactly the members, groups, clone
    sessions, entries and defaults the controller computes for ``profile``, so packet tests
    check what the controller would install, without gRPC in between."""

    def build(profile: str, leaf: str = "leaf1") -> tuple[V1Pipeline, LoadedProgram]:
        intent = build_intents(leaf_spine(), settings_for(profile), P4InfoIndex(fabric_pipeline.p4info))[leaf]
        prog = LoadedProgram.from_checked(fabric_checked)
        for (profile_name, member_id), call in intent.members.items():
            prog.action_profiles[profile_name].add_member(member_id, call)
        for (profile_name, group_id), members in intent.groups.items():
            prog.action_profiles[profile_name].add_group(group_id, list(members))
        for session in intent.clone_sessions.values():
            prog.pre.set_clone_session(session)
        for table, entry in intent.entries.values():
            prog.tables[table].insert(entry)
        for table, call in intent.defaults.items():
            prog.tables[table].set_default(call)
        return V1Pipeline(prog, cpu_port=LEAF_CPU_PORT), prog

    return build


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
