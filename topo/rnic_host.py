"""Mininet host whose network interface is driven by the RoCEv2 NIC model, not the kernel.

The kernel gets no IPv4 address and no IPv6 at all on the host's interface: the NIC model
owns the host's IP and MAC on a raw socket, and a kernel that also knew the address would
answer RoCE packets with ICMP port-unreachable and send IPv6 router solicitations into the
fabric. The NIC (``rnic serve``) runs in the host's namespace; its management socket is a
path in the shared file system, so the controller reaches it from the root namespace.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from nicmodel.mgmt import NicClient
from topo.p4node import P4Host


class RnicHost(P4Host):
    """Params (passed to ``rnic serve``): ``nic_ip``, ``nic_mac``, ``gateway_mac`` (the leaf: every
    frame goes to it, as to a router), ``mgmt_path``,
    ``line_rate_gbps``, ``time_dilation``, ``log_path``."""

    def __init__(self, name: str, **params) -> None:
        # Set before Mininet configures the node, so teardown after a failed start still works.
        self.nic_proc: subprocess.Popen | None = None
        super().__init__(name, **params)

    def config(self, **params):
        r = super().config(**params)  # offloads and IPv6 off
        intf = self.defaultIntf()
        if intf is not None:
            self.cmd(f"sysctl -qw net.ipv6.conf.{intf.name}.disable_ipv6=1")
        return r

    def nic_command(self) -> list[str]:
        p = self.params
        return [
            sys.executable, "-m", "nicmodel.cli", "serve",
            "--iface", self.defaultIntf().name,
            "--ip", p["nic_ip"], "--mac", p["nic_mac"], "--gateway-mac", p["gateway_mac"],
            "--mgmt", str(p["mgmt_path"]),
            "--line-rate", f"{float(p.get('line_rate_gbps', 100)) * 1e9:.0f}",
            "--time-dilation", str(p.get("time_dilation", 1)),
        ]

    def start_nic(self) -> subprocess.Popen:
        log = open(self.params["log_path"], "wb")
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
        self.nic_proc = self.popen(self.nic_command(), stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=env)
        log.close()
        return self.nic_proc

    def wait_nic(self, timeout: float = 60.0) -> None:
        """Until the management socket answers; raises with the NIC's log if it died."""
        path = self.params["mgmt_path"]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.nic_proc is not None and self.nic_proc.poll() is not None:
                raise RuntimeError(f"{self.name}: NIC exited with {self.nic_proc.returncode}:\n{self._log_tail()}")
            if os.path.exists(path):
                try:
                    with NicClient(path, timeout=2) as c:
                        c.status()
                    return
                except OSError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"{self.name}: NIC management socket {path} not up after {timeout:.0f} s:\n{self._log_tail()}")

    def stop_nic(self, timeout: float = 5.0) -> None:
        proc = self.nic_proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def _log_tail(self, lines: int = 30) -> str:
        path = Path(self.params["log_path"])
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""
