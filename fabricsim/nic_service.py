"""A simulated host's NIC behind the management API's interface (nicmodel.mgmt.NicService).

The controller configures NICs and runs workloads through ``configure``, ``start_workload``,
``workload_status``, ``stats`` and ``reset``; a live host answers them from its ``LiveNic``
process, a simulated one from here, in virtual time. Each workload gets a fresh ``Nic``
(workload endpoints rely on identical set-up on every host), as on a live host.
"""

from __future__ import annotations

from typing import Any

from fabricsim.host import SimHost
from nicmodel.nic import Nic
from nicmodel.settings import NicSettings
from nicmodel.stats import RunStats
from nicmodel.workloads import Endpoint, WorkloadSpec, nic_counters


class SimNicService:
    def __init__(self, host: SimHost, ip: str, mac: str, line_rate_bps: float, gateway_mac: bytes | None = None,
                 settings: NicSettings | None = None, nic_options: dict[str, Any] | None = None) -> None:
        self.host = host
        self.ip, self.mac = ip, mac
        self.line_rate_bps = line_rate_bps
        self.gateway_mac = gateway_mac
        self.settings = settings or NicSettings()
        self.settings.validate(line_rate_bps)
        self.nic_options = dict(nic_options or {})
        self._new_nic()

    def _new_nic(self) -> None:
        self.host.nic = Nic(self.mac, self.ip, self.line_rate_bps, **self.nic_options)
        self.host.endpoint = None
        self.run_stats = RunStats(self.line_rate_bps, self.settings.base_rtt_ns)
        self._started_ns = self.host.sim.now

    @property
    def endpoint(self) -> Endpoint | None:
        return self.host.endpoint

    # -- nicmodel.mgmt.NicService -------------------------------------------------------
    def status(self) -> dict[str, Any]:
        now = self.host.sim.now
        ep = self.endpoint
        return {"ip": self.ip, "mac": self.mac, "line_rate_bps": self.line_rate_bps, "now_ns": now,
                "config": self.settings.as_dict(), "qps": sorted(qp.qpn for qp in self.host.nic.qps),
                "workload": ep.status() if ep else None, "counters": nic_counters(self.host.nic, now)}

    def configure(self, **params: Any) -> dict[str, Any]:
        fields = set(NicSettings.__dataclass_fields__)
        unknown = sorted(set(params) - fields)
        if unknown:
            raise ValueError(f"unknown setting(s) {unknown}; valid: {sorted(fields)}")
        settings = NicSettings(**{**self.settings.as_dict(), **params})
        settings.validate(self.line_rate_bps)
        self.settings = settings
        return {"config": settings.as_dict()}

    def start_workload(self, spec: dict[str, Any]) -> dict[str, Any]:
        ep = self.endpoint
        if ep is not None and not ep.done:
            raise ValueError("a workload is running; wait for it or call reset")
        ws = WorkloadSpec.from_dict(spec)
        if ws.peer(ws.rank).ip != self.ip:
            raise ValueError(f"rank {ws.rank} is {ws.peer(ws.rank).ip}, but this NIC is {self.ip}")
        self._new_nic()
        host = self.host
        host.endpoint = Endpoint(host.nic, ws, self.settings, self.run_stats, host=self.ip,
                                 gateway_mac=self.gateway_mac)
        host.endpoint.start(host.sim.now)
        host.service()
        return {"started": True, "rank": ws.rank, "kind": ws.kind}

    def workload_status(self) -> dict[str, Any]:
        ep = self.endpoint
        if ep is None:
            return {"kind": None, "progress": 0.0, "done": False, "errors": []}
        return ep.status()

    def stats(self) -> dict[str, Any]:
        now = self.host.sim.now
        self.run_stats.nic_counters[self.ip] = nic_counters(self.host.nic, now)
        self.run_stats.elapsed_ns = now - self._started_ns
        return self.run_stats.to_dict()

    def reset(self) -> dict[str, Any]:
        self._new_nic()
        return {"reset": True}

    def close(self) -> None:
        """Nothing to release (the controller closes every NIC client it holds)."""
