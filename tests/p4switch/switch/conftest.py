"""Fixtures of the switch tests: basic.p4 compiled once, and factories for a device with
in-memory ports running a small program, and for a runtime CLI connected to a device.

Test modules run with ``--import-mode=importlib`` and cannot import from this file, so what
they share is offered as fixtures."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lab.basic_program import BASIC_P4, FORWARD, TABLE
from netbase.clock import ManualClock
from p4rt.entries import ActionCall, Lpm, TableEntry
from p4rt.runtime_cli import CliClient
from p4switch.exec import LoadedProgram
from p4switch.frontend import compile_file
from p4switch.switch.device import Device
from p4switch.switch.thrift_server import ThriftServer
from tests.ports import MemoryPort

# An Ethernet-only v1model program; the tests fill in the ingress and egress controls.
ETH_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { ethernet_t eth; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
%(ingress)s
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
%(egress)s
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture(scope="session")
def basic_checked():
    return compile_file(str(BASIC_P4))


@pytest.fixture()
def basic_program(basic_checked):
    """A fresh LoadedProgram of basic.p4 with a route 10.0.2.0/24 -> port 2 (MAC ...02:02)."""
    prog = LoadedProgram.from_checked(basic_checked)
    prog.tables[TABLE].insert(TableEntry({"hdr.ipv4.dstAddr": Lpm(0x0A000200, 24)},
                                         ActionCall(FORWARD, {"dstAddr": 0x000000000202, "port": 2})))
    return prog


@pytest.fixture()
def eth_program(tmp_path: Path) -> Callable[..., Any]:
    """``eth_program(ingress, egress="apply { }")``: ETH_PROGRAM with those control bodies, loaded."""
    def load(ingress: str, egress: str = "apply { }") -> Any:
        path = tmp_path / "eth_program.p4"
        path.write_text(ETH_PROGRAM % {"ingress": ingress, "egress": egress})
        return LoadedProgram.from_file(path)

    return load


@pytest.fixture()
def make_switch() -> Iterator[Callable[..., tuple[Device, dict[int, MemoryPort]]]]:
    """``make_switch(program, ports=(1, 2, 3), port_class=MemoryPort, **device_options)``: a
    Device under a manual clock with in-memory ports (named ``p<N>``, or as given in a {port: name}
    dict; ``port_class`` BatchMemoryPort for ports that take a poll's frames at once) and
    ``program`` installed (None: none); returns (device, {port: MemoryPort}). Devices are closed
    after the test."""
    made: list[Device] = []

    def make(program: Any, ports: Iterable[int] | dict[int, str] = (1, 2, 3), port_class: type[MemoryPort] = MemoryPort,
             **options: Any) -> tuple[Device, dict[int, MemoryPort]]:
        options.setdefault("clock", ManualClock())
        device = Device(**options)
        made.append(device)
        names = ports if isinstance(ports, dict) else {p: f"p{p}" for p in ports}
        ios = {p: port_class() for p in names}
        for p, io in ios.items():
            device.add_port(p, io, names[p])
        if program is not None:
            device.set_program(program)
        return device, ios

    yield make
    for device in made:
        device.close()


@pytest.fixture()
def cli_to() -> Iterator[Callable[[Device], tuple[CliClient, ThriftServer]]]:
    """``cli_to(device)``: our Thrift runtime server on ``device`` and a runtime-CLI client
    connected to it; both are closed after the test."""
    opened: list[CliClient | ThriftServer] = []

    def connect(device: Device) -> tuple[CliClient, ThriftServer]:
        server = ThriftServer(device, port=0)
        opened.append(server)
        client = CliClient(server.port)
        opened.append(client)
        return client, server

    yield connect
    for resource in reversed(opened):
        resource.close()
