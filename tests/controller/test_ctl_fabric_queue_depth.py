"""The topology's ``queue_depth_pkts`` and link rates reach the running switch processes.

``FabricNet`` configures every switch through its runtime CLI once Mininet has started it; here
the same step runs against real p4switch processes without Mininet (the ``switches`` fixture),
and each switch's own ``queue_stats`` shows the queue capacity and port rate it now applies.
"""

from __future__ import annotations

from p4rt.runtime_cli import CliClient
from topo.builder import leaf_spine
from topo.fabric import PRIORITY_QUEUES, FabricNet


def queue_stats(thrift_port: int, port: int) -> list[list[str]]:
    cli = CliClient(thrift_port)
    try:
        return [line.split() for line in cli.run(f"queue_stats {port}").splitlines()[1:]]
    finally:
        cli.close()


def test_every_switch_queue_gets_the_topology_depth_and_link_rate(switches, tmp_path):
    topo = leaf_spine(1, 1, 1, rate_gbps=25)
    topo.queue_depth_pkts = 300
    running = switches(topo)
    fab = FabricNet(topo, tmp_path)
    fab.thrift_ports = {name: proc.thrift_port for name, proc in running.procs.items()}
    fab._set_port_rates()
    for s in topo.switches:
        for port in topo.ports_of(s.name):
            rows = queue_stats(running.procs[s.name].thrift_port, port)
            queues = [row for row in rows if len(row) == 10]
            assert [(int(r[1]), int(r[3])) for r in queues] == [(pr, 300) for pr in range(PRIORITY_QUEUES)]
            assert f"port_rate_bps={25e9:g}" in rows[PRIORITY_QUEUES]
