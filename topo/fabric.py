"""Brings a topology file up as a Mininet network: P4 switches, RNIC hosts, links, rates.

``FabricNet(topo, ...).start()`` creates one ``P4Switch`` per switch (our target by default,
BMv2's simple_switch_grpc with ``target="bmv2"`` where installed), one ``RnicHost`` per host
running ``rnic serve`` on its interface, the links with the ports the topology names, sets
each switch port's rate and delay from the link (fabric units; the switch runs time-dilated)
and every queue's depth from the topology's ``queue_depth_pkts``,
and writes the state file that ``fabricctl`` reads. ``stop()`` stops every NIC and switch
process by PID and deletes every interface it created (Mininet's ``net.stop()``; never
``mn -c``/``cleanup()``), also after a failed start. ``supervise()`` restarts a switch
process that dies while the fabric is up (the switch-restart drill's kill -9), as a switch's
init system restarts its agent.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

from lab.targets import free_tcp_port
from nicmodel.roce import write_frame_bytes
from p4rt.runtime_cli import CliClient
from topo.spec import Topology

log = logging.getLogger(__name__)

PRIORITY_QUEUES = 8


class FabricNet:
    def __init__(self, topo: Topology, work_dir: Path, target: str = "ours", pcap: bool = False) -> None:
        self.topo = topo
        self.work_dir = Path(work_dir)
        self.target = target
        self.pcap = pcap
        self.net = None
        self.thrift_ports: dict[str, int] = {}
        self._supervisor: threading.Thread | None = None
        self._stopping = threading.Event()

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> None:
        # Mininet (and the nodes built on it) is a Debian package installed only where the
        # fabric can run (as root): imported here so the rest of the package works without it.
        from mininet.log import setLogLevel
        from mininet.net import Mininet

        from topo.p4node import P4Switch  # Mininet nodes
        from topo.rnic_host import RnicHost

        setLogLevel(os.environ.get("MININET_LOG", "warning"))
        self._stopping.clear()
        logs = self.work_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        (self.work_dir / "nic").mkdir(exist_ok=True)
        topo = self.topo
        net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False, autoStaticArp=False,
                      waitConnected=False)
        self.net = net
        try:
            for s in topo.switches:
                self.thrift_ports[s.name] = free_tcp_port()
                net.addSwitch(s.name, cls=P4Switch, target=self.target, grpc_port=s.grpc_port,
                              thrift_port=self.thrift_ports[s.name], device_id=s.device_id, cpu_port=s.cpu_port,
                              priority_queues=PRIORITY_QUEUES,
                              # BMv2's clock is the wall's: its dilation is in queue rates and P4 constants
                              time_dilation=topo.time_dilation if self.target == "ours" else 1.0,
                              pcap_dir=str(self.work_dir / "pcap") if self.pcap else None, log_dir=str(logs),
                              dpid=f"{s.device_id:016x}")
            for h in topo.hosts:
                leaf_port = topo.host_port(h.name)[1]
                rate = topo.ports_of(h.leaf)[leaf_port][2].rate_gbps
                net.addHost(h.name, cls=RnicHost, ip=None, mac=h.mac, nic_ip=h.ip, nic_mac=h.mac,
                            gateway_mac=topo.switch(h.leaf).mac,
                            mgmt_path=str(self.mgmt_path(h.name)), line_rate_gbps=rate,
                            time_dilation=topo.time_dilation, log_path=str(logs / f"rnic-{h.name}.log"))
            for link in topo.links:
                net.addLink(link.a, link.b, port1=link.a_port, port2=link.b_port)
            net.build()
            net.start()  # starts every switch process and waits for its gRPC port
            self._set_port_rates()
            for h in topo.hosts:
                net.get(h.name).start_nic()
            for h in topo.hosts:
                net.get(h.name).wait_nic()
        except BaseException:
            self.stop()
            raise

    def mgmt_path(self, host: str) -> Path:
        return self.work_dir / "nic" / f"{host}.sock"

    def supervise(self, on_restart: Callable[[str, int], None] | None = None, interval_s: float = 0.2) -> None:
        """Watch every switch process (in a thread, until ``stop()``); one that exited is
        started again with the same command line, interfaces, gRPC and Thrift ports, and gets
        its port rates, delays and queue depth again (its chassis configuration; the P4
        program and entries are the controller's to push, which it does when its session
        comes back). ``on_restart(switch, new_pid)`` is called after each restart."""
        if self._supervisor is not None:
            return

        def watch() -> None:
            pending: set[str] = set()  # restarted, but not yet answering or not yet configured
            while not self._stopping.wait(interval_s):
                net = self.net
                if net is None:
                    return
                for node in net.switches:
                    proc = node.process
                    dead = proc is None or proc.proc.poll() is not None
                    if self._stopping.is_set() or (node.name not in pending and not dead):
                        continue
                    try:
                        if dead:
                            log.warning("%s: switch process exited; starting it again", node.name)
                            pending.add(node.name)
                            node.process = None
                            node.start([])
                        else:  # started earlier but slow to answer (a busy machine): wait on
                            proc.wait_ready()
                        self._set_port_rates([node.name])
                    except Exception:  # the next round waits for it again (or starts it again)
                        log.exception("%s: restarting the switch failed", node.name)
                        continue
                    pending.discard(node.name)
                    if on_restart is not None:
                        on_restart(node.name, node.process.proc.pid)

        self._supervisor = threading.Thread(target=watch, name="switch-supervisor", daemon=True)
        self._supervisor.start()

    def _set_port_rates(self, switches: list[str] | None = None) -> None:
        """Queue depth on every switch port (of ``switches``, default all) (BMv2's Thrift call, either target). On our target,
        the link rate (fabric bits/s) and delay (its own words); on BMv2, which has no link
        model, a queue rate of the link rate divided by the time dilation, in full-MTU WRITE
        frames per second (data leaves at the dilated line rate; smaller frames such as ACKs at
        the same packet rate). Delays are not modelled on BMv2."""
        if self.target != "ours":
            log.warning("target %s: link delays are not modelled (BMv2 has no link model)", self.target)
        frame = write_frame_bytes(self.topo.mtu)
        for s in self.topo.switches:
            if switches is not None and s.name not in switches:
                continue
            cli = CliClient(self.thrift_ports[s.name])
            try:
                cli.run(f"set_queue_depth {self.topo.queue_depth_pkts}")
                for port, (_, _, link) in sorted(self.topo.ports_of(s.name).items()):
                    if self.target != "ours":
                        pps = max(1, round(link.rate_gbps * 1e9 / self.topo.time_dilation / (8 * frame)))
                        cli.run(f"set_queue_rate {pps} {port}")
                        continue
                    cli.run(f"set_port_rate {port} {link.rate_gbps * 1e9:.0f}")
                    if link.delay_us:
                        cli.run(f"set_link {port} delay={link.delay_us}")
            finally:
                cli.close()

    def pids(self) -> list[int]:
        """Every process this fabric started (switches, NICs, host shells)."""
        out = []
        if self.net is None:
            return out
        for sw in self.net.switches:
            if getattr(sw, "process", None) is not None:
                out.append(sw.process.proc.pid)
        for h in self.net.hosts:
            if getattr(h, "nic_proc", None) is not None:
                out.append(h.nic_proc.pid)
            if h.shell is not None:
                out.append(h.shell.pid)
        return out

    def interfaces(self) -> list[str]:
        return [link.a + "-eth" + str(link.a_port) for link in self.topo.links] + \
               [link.b + "-eth" + str(link.b_port) for link in self.topo.links]

    def stop(self) -> None:
        self._stopping.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout=60)  # a restart under way finishes first: its process is stopped below
            self._supervisor = None
        net, self.net = self.net, None
        if net is None:
            return
        for h in net.hosts:
            try:
                h.stop_nic()
            except Exception:
                log.exception("%s: stopping the NIC failed", h.name)
        net.stop()  # switch processes by PID, links (interfaces) deleted, host shells ended
        for h in self.topo.hosts:
            self.mgmt_path(h.name).unlink(missing_ok=True)

    def cli(self) -> None:
        """The Mininet CLI on this fabric (its command output needs Mininet's "output" log level)."""
        from mininet.cli import CLI  # optional dependency, as in start()
        from mininet.log import setLogLevel

        setLogLevel("output")
        CLI(self.net)

    def switch_pid(self, name: str) -> int:
        """PID of a switch's process (0 when it is not running)."""
        node = self.net.get(name) if self.net else None
        return node.process.proc.pid if node is not None and node.process is not None else 0

    def nic_pid(self, host: str) -> int:
        """PID of a host's NIC process (0 when it is not running)."""
        node = self.net.get(host) if self.net else None
        return node.nic_proc.pid if node is not None and node.nic_proc is not None else 0
