"""A live leaf/spine fabric for the tests that need one (root, Mininet, switch and NIC
processes): node names carry a random prefix so nothing collides with another fabric on the
machine, the controller is attached and started, the state file that `fabricctl --state`
reads is written, and everything is stopped when the test ends, also when it fails."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from controller.controller import FabricController
from controller.pipeline import Pipeline, compile_fabric
from controller.profiles import settings_for
from controller.run_demo import free_grpc_base
from controller.state import FabricState
from nicmodel.mgmt import NicClient
from topo.builder import leaf_spine
from topo.fabric import FabricNet
from topo.spec import Topology


@dataclass
class LiveFabric:
    prefix: str
    topo: Topology
    fab: FabricNet
    state: FabricState
    state_path: Path
    ctl: FabricController


@contextmanager
def live_fabric(tmp: Path, letter: str, profile: str, dilation: int, pipe: Pipeline | None = None,
                out: str = "out") -> Iterator[LiveFabric]:
    """The default 2x2x2 fabric under ``tmp`` (prefix ``letter`` + two hex digits) with
    ``profile`` applied, run files under ``tmp / out``; ``pipe`` defaults to fabric.p4
    compiled for our target into ``tmp / "build"``."""
    prefix = letter + secrets.token_hex(1)
    ids = [s.device_id for s in leaf_spine().switches]
    topo = leaf_spine(prefix=prefix, time_dilation=dilation, grpc_base=free_grpc_base(ids))
    pipe = pipe or compile_fabric("ours", tmp / "build")
    fab = FabricNet(topo, tmp / "fabric")
    ctl = None
    try:
        fab.start()
        state = FabricState.of_fabric(fab, str(pipe.p4info_path), str(pipe.config_path), profile, str(tmp / out))
        nics = {h: NicClient(info.mgmt) for h, info in state.nics.items()}
        ctl = FabricController(topo, pipe, settings_for(profile), nics=nics, profile=profile)
        ctl.start()
        state_path = tmp / "state.json"
        state.save(state_path)
        yield LiveFabric(prefix, topo, fab, state, state_path, ctl)
    finally:
        if ctl is not None:
            ctl.close()
        fab.stop()
