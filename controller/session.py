"""Attaching to a running fabric from its state file (what every ``fabricctl`` command does).

The operator's CLI uses a higher election id than the fabric's own controller, so while a
``set``/``profile`` command runs it is primary; when it exits the switches hand primary back
to the long-running controller (P4Runtime arbitration), which keeps running undisturbed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from controller.controller import FabricController
from controller.pipeline import load_compiled
from controller.profiles import settings_for
from controller.settings import Settings
from controller.state import FabricState, StateError
from nicmodel.mgmt import NicClient  # the NIC model's management API

CLI_ELECTION_ID = 10  # above the fabric controller's 1


def open_fabric(state_path: Path, with_nics: bool = False) -> tuple[FabricState, FabricController]:
    """The state and an (unconnected) controller that has adopted the fabric's current settings."""
    state = FabricState.load(state_path)
    topo = state.topo()
    try:
        pipeline = load_compiled(Path(state.p4info), Path(state.device_config))
    except OSError as e:
        raise StateError(f"the fabric's compiled pipeline is missing: {e.filename}: {e.strerror}") from None
    nics = nic_clients(state) if with_nics else {}
    ctl = FabricController(
        topo, pipeline, current_settings(state),
        addresses={name: sw.grpc for name, sw in state.switches.items()},
        nics=nics, election_id=CLI_ELECTION_ID,
        thrift_ports={name: sw.thrift_port for name, sw in state.switches.items()},
    )
    ctl.adopt(current_settings(state), profile_label(state))
    return state, ctl


@contextmanager
def attached(state_path: Path, with_nics: bool = False) -> Iterator[tuple[FabricState, FabricController]]:
    """``open_fabric`` for a ``with`` block: the sessions and NIC connections are closed after."""
    state, ctl = open_fabric(state_path, with_nics)
    try:
        yield state, ctl
    finally:
        ctl.close()


def current_settings(state: FabricState) -> Settings:
    return settings_for(state.profile, state.overrides)


def profile_label(state: FabricState) -> str:
    """How results name the fabric's settings: the profile, marked when `set` changed it."""
    return state.profile + ("+set" if state.overrides else "")


def nic_clients(state: FabricState) -> dict[str, object]:
    clients = {}
    for host, info in state.nics.items():
        try:
            clients[host] = NicClient(info.mgmt)
        except OSError as e:
            for c in clients.values():
                c.close()
            raise StateError(f"the NIC of {host} does not answer at {info.mgmt}: {e.strerror or e}") from None
    return clients
