"""Mininet nodes for P4 switches: a switch node that runs a P4 target on its interfaces and a
host whose interfaces suit a software switch.

``P4Switch`` starts our target (``p4switch``) or BMv2's ``simple_switch_grpc`` with the same
command line (see ``lab/targets.py``): one ``-i PORT@INTF`` per Mininet link, gRPC port,
device id, CPU port, priority queues, time dilation. It needs no OpenFlow controller and no
Open vSwitch: build the network with ``Mininet(topo, controller=None, switch=P4Switch, host=P4Host)``.
The switch process is stopped by its PID in ``stop()``; nothing is killed by name.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from mininet.node import Host, Switch

from lab.targets import SwitchProcess, free_tcp_port, start_switch, switch_command
from lab.veth import OFFLOADS_OFF, quiet


class P4Switch(Switch):
    """A P4 switch process on the node's interfaces (port numbers as Mininet assigns them)."""

    def __init__(self, name: str, target: str = "ours", program: str | None = None, grpc_port: int | None = None,
                 thrift_port: int | None = None, device_id: int | None = None, cpu_port: int | None = 255,
                 priority_queues: int = 1, time_dilation: float = 1.0, pcap_dir: str | None = None,
                 log_dir: str | None = None, **params: Any) -> None:
        Switch.__init__(self, name, **params)
        self.target = target
        self.program = program
        self.grpc_port = grpc_port or free_tcp_port()
        self.thrift_port = thrift_port or free_tcp_port()
        self.device_id = int(self.dpid, 16) if device_id is None else device_id
        self.cpu_port = cpu_port
        self.priority_queues = priority_queues
        self.time_dilation = time_dilation
        self.pcap_dir = pcap_dir
        self.log_dir = Path(log_dir or tempfile.gettempdir())
        self.process: SwitchProcess | None = None

    @property
    def grpc_addr(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"p4switch-{self.name}-{self.grpc_port}.log"

    def switch_interfaces(self) -> dict[int, str]:
        return {self.ports[intf]: intf.name for intf in self.intfList() if intf.name != "lo"}

    def start(self, controllers: list) -> None:
        interfaces = self.switch_interfaces()
        for name in interfaces.values():
            quiet(name)
        cmd = switch_command(self.target, interfaces, self.device_id, self.grpc_addr, self.thrift_port,
                             cpu_port=self.cpu_port, priority_queues=self.priority_queues,
                             time_dilation=self.time_dilation, pcap_dir=self.pcap_dir, program=self.program)
        self.process = start_switch(cmd, self.grpc_addr, self.thrift_port, self.log_path)
        self.process.wait_ready()

    def stop(self, deleteIntfs: bool = True) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None
        Switch.stop(self, deleteIntfs)


class P4Host(Host):
    """A host with offloads and IPv6 off: a software switch then sees finished checksums and
    no background IPv6 chatter."""

    def config(self, **params: Any) -> Any:
        result = Host.config(self, **params)
        for intf in self.intfList():
            if intf.name != "lo":
                self.cmd(f"ethtool -K {intf.name} {' '.join(OFFLOADS_OFF)}")
        self.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        return result
