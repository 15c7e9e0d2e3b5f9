"""Frames the kernel lost on packet sockets reach the report: the NICs' ``rx_kernel_drops`` and
``tx_kernel_drops`` counters and the switches' (read from each switch's runtime CLI) add up to
the "kernel socket drops" row."""

from __future__ import annotations

from types import SimpleNamespace

from controller.report import comparison_table
from controller.state import SwitchInfo
from controller.telemetry import Telemetry
from controller.workloads import build_result, read_switch_kernel_drops
from p4switch.switch.device import Device
from p4switch.switch.thrift_server import ThriftServer
from topo.builder import leaf_spine


class SocketPort:
    """Stands in for a packet-socket port whose kernel lost ``drops`` received frames and
    refused to send one."""

    def __init__(self, drops: int) -> None:
        self.drops = drops

    def kernel_drops(self) -> dict[str, int]:
        return {"rx_buffer_full": self.drops - 1, "rx_not_delivered": 1, "tx_too_big": 1}

    def send(self, frame: bytes) -> bool:
        return True


def test_switch_kernel_drops_are_summed_from_every_switch_cli() -> None:
    servers = []
    try:
        switches = {}
        for name, drops in (("leaf1", (3, 4)), ("spine1", (5,))):
            device = Device(device_id=len(switches) + 1)
            for port, n in enumerate(drops, start=1):
                device.add_port(port, SocketPort(n), f"{name}-eth{port}")
            servers.append(ThriftServer(device, port=0))
            switches[name] = SwitchInfo("127.0.0.1:1", device.device_id, thrift_port=servers[-1].port)
        assert read_switch_kernel_drops(SimpleNamespace(target="ours", switches=switches)) == 12 + 3  # rx + tx
        assert read_switch_kernel_drops(SimpleNamespace(target="bmv2", switches=switches)) == 0  # no such CLI
    finally:
        for server in servers:
            server.close()


def test_kernel_socket_drops_row_adds_nics_and_switches() -> None:
    def nic(drops: int) -> dict:
        return {"messages": [{"src": "10.1.1.2", "dst": "10.2.1.2", "size": 4096, "start_ns": 0,
                              "end_ns": 9000, "fct_ns": 9000, "ideal_ns": 3000}],
                "summary": {"counters": {"rx_kernel_drops": drops, "tx_kernel_drops": 1}}}

    tel = Telemetry(SimpleNamespace(topo=leaf_spine()))
    stats = {"h1_1": nic(2), "h2_1": nic(1)}
    r = build_result("all-reduce", "baseline", {"h1_1": {"size": 4096}}, stats, tel, [], switch_kernel_drops=4)
    assert r.kernel_drops == 9
    row = next(line for line in comparison_table([r]).splitlines() if line.startswith("kernel socket drops"))
    assert row.split()[-1] == "9"
