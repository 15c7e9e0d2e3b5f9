"""A small live topology: two hosts, one P4 switch, basic L3 forwarding.

    python -m topo.simple [--target ours|bmv2] [--cli]

h1 (10.0.1.1/24) -- port 1 [ s1 ] port 2 -- h2 (10.0.2.2/24). The switch runs
``lab/programs/basic.p4``; a P4Runtime client pushes it and one route per host; each host
reaches the other through its gateway (the switch's MAC). Until the fabric topology replaces it,
this is what brings up a working network in one command.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mininet.cli import CLI
from mininet.net import Mininet
from mininet.topo import Topo

from lab.basic_program import BASIC_P4, FORWARD, SWITCH_MAC, TABLE
from lab.p4rt_client import P4RuntimeClient
from lab.targets import TargetUnavailable, compile_program, push_pipeline
from topo.p4node import P4Host, P4Switch


@dataclass(frozen=True)
class HostSpec:
    name: str
    ip: str
    mac: str
    gateway: str
    port: int


HOSTS = (
    HostSpec("h1", "10.0.1.1", "00:00:00:00:01:01", "10.0.1.254", 1),
    HostSpec("h2", "10.0.2.2", "00:00:00:00:02:02", "10.0.2.254", 2),
)


class SimpleTopo(Topo):
    def build(self, switch_name: str = "s1", **switch_opts: Any) -> None:
        sw = self.addSwitch(switch_name, **switch_opts)
        for h in HOSTS:
            self.addHost(h.name, ip=f"{h.ip}/24", mac=h.mac)
            self.addLink(h.name, sw, port2=h.port)


def start(target: str = "ours", work: Path | None = None, switch_name: str | None = None,
          **switch_opts: Any) -> tuple[Mininet, P4RuntimeClient]:
    """Start the network, push the program and routes; returns (net, connected controller).
    Compiled files and the switch log go to ``work`` (a new temporary directory by default).
    The caller stops both (``client.close()``, ``net.stop()``)."""
    work = work or Path(tempfile.mkdtemp(prefix="topo-simple-"))
    compiled = compile_program(target, BASIC_P4, work)
    name = switch_name or f"s{os.getpid() % 100000}"
    net = Mininet(SimpleTopo(switch_name=name, target=target, log_dir=str(work), **switch_opts),
                  controller=None, switch=P4Switch, host=P4Host, autoSetMacs=False)
    client = None
    try:
        net.start()
        sw: P4Switch = net.get(name)
        client = push_pipeline(sw.grpc_addr, sw.device_id, compiled)
        for h in HOSTS:
            client.insert(client.table_entry(TABLE, {"hdr.ipv4.dstAddr": f"{h.ip}/32"}, FORWARD,
                                             {"dstAddr": h.mac, "port": h.port}))
            node = net.get(h.name)
            node.cmd(f"ip route add default via {h.gateway} dev {node.defaultIntf().name}")
            node.cmd(f"ip neigh replace {h.gateway} lladdr {SWITCH_MAC} dev {node.defaultIntf().name}")
        return net, client
    except BaseException:
        if client is not None:
            client.close()
        net.stop()
        raise


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m topo.simple", description="2 hosts, 1 P4 switch, basic forwarding")
    ap.add_argument("--target", choices=("ours", "bmv2"), default="ours")
    ap.add_argument("--cli", action="store_true", help="open the Mininet CLI after the check")
    args = ap.parse_args(argv)
    try:
        net, client = start(args.target)
    except TargetUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"switch log: {net.switches[0].log_path}")
    try:
        h1, h2 = net.get("h1"), net.get("h2")
        out = h1.cmd(f"ping -c 3 -i 0.2 -W 2 {h2.IP()}")
        print(out)
        ok = " 0% packet loss" in out
        if args.cli:
            CLI(net)
        return 0 if ok else 1
    finally:
        client.close()
        net.stop()


if __name__ == "__main__":
    sys.exit(main())
