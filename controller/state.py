"""The state file: how ``fabricctl`` finds a running fabric.

Whoever starts a fabric (``python -m controller.run_demo``, ``topo.fabric``) writes one JSON
file; every ``fabricctl`` command reads it. It holds the topology, where each switch's
P4Runtime server listens, where each NIC's management socket is, the compiled pipeline files,
the active profile with the operator's overrides, and where telemetry goes. ``fabricctl
profile``/``set`` update the profile/overrides in it after the fabric accepted the change, so
the file always says what the fabric runs. Path: ``--state PATH``, else ``$FABRICCTL_STATE``,
else ``/run/aifabric/state.json``.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from topo.spec import Topology

if TYPE_CHECKING:
    from topo.fabric import FabricNet

DEFAULT_PATH = Path("/run/aifabric/state.json")
VERSION = 1


class StateError(RuntimeError):
    """No fabric to talk to, or a state file that is not ours."""


def default_path() -> Path:
    return Path(os.environ.get("FABRICCTL_STATE", DEFAULT_PATH))


@dataclass
class SwitchInfo:
    grpc: str  # host:port of the P4Runtime server
    device_id: int
    pid: int = 0
    thrift_port: int = 0  # the Thrift runtime port (BMv2's API; both targets serve it)


@dataclass
class NicInfo:
    mgmt: str  # Unix socket path of the NIC's management API (reachable from the root namespace)
    ip: str
    pid: int = 0


@dataclass
class FabricState:
    topology: dict[str, Any]
    target: str
    p4info: str
    device_config: str
    switches: dict[str, SwitchInfo]
    nics: dict[str, NicInfo]
    profile: str = "baseline"
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    out_dir: str = "out"
    version: int = VERSION

    @classmethod
    def of_fabric(cls, fab: FabricNet, p4info: str, device_config: str, profile: str, out_dir: str) -> FabricState:
        """The state of a fabric that ``topo.fabric`` started: where its switches and NICs are."""
        switches = {s.name: SwitchInfo(f"127.0.0.1:{s.grpc_port}", s.device_id, fab.switch_pid(s.name),
                                       fab.thrift_ports.get(s.name, 0)) for s in fab.topo.switches}
        nics = {h.name: NicInfo(str(fab.mgmt_path(h.name)), h.ip, fab.nic_pid(h.name)) for h in fab.topo.hosts}
        return cls(fab.topo.to_dict(), fab.target, p4info, device_config, switches, nics,
                   profile=profile, out_dir=out_dir)

    def topo(self) -> Topology:
        return Topology.from_dict(self.topology)

    def save(self, path: Path) -> None:
        """Atomic replace, so a reader never sees half a file."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".state-")
        with os.fdopen(fd, "w") as f:
            json.dump(asdict(self), f, indent=2)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> FabricState:
        try:
            d = json.loads(path.read_text())
        except FileNotFoundError:
            raise StateError(f"no running fabric: state file {path} does not exist "
                             "(start one with `.venv/bin/python -m controller.run_demo --keep`, "
                             "or pass --state)") from None
        except (OSError, json.JSONDecodeError) as e:
            raise StateError(f"cannot read state file {path}: {e}") from None
        if not isinstance(d, dict) or d.get("version") != VERSION:
            raise StateError(f"{path} is not a fabric state file of version {VERSION}")
        try:
            d["switches"] = {k: SwitchInfo(**v) for k, v in d["switches"].items()}
            d["nics"] = {k: NicInfo(**v) for k, v in d["nics"].items()}
            return cls(**d)
        except (KeyError, TypeError) as e:
            raise StateError(f"{path}: malformed state file ({e})") from None
