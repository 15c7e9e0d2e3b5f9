"""Registers on a switch whose P4Runtime server cannot read them (BMv2 answers UNIMPLEMENTED):
the controller reads them over the switch's Thrift runtime port instead, as
simple_switch_CLI's ``register_read`` does."""

from __future__ import annotations

from types import SimpleNamespace

import grpc
import pytest

from controller.controller import FabricController
from controller.fabric_rules import figure_sources
from lab.basic_program import BASIC_P4
from p4rt.errors import P4RuntimeError
from p4rt.switch_conn import call_error
from p4switch.exec import LoadedProgram
from p4switch.switch.device import Device
from p4switch.switch.thrift_server import ThriftServer

REGISTER = "BasicEgress.enq_qdepth_seen"


class NoRegisterReads:
    """A P4Runtime session like BMv2's: reading a register entity is UNIMPLEMENTED."""

    def __init__(self, code: grpc.StatusCode = grpc.StatusCode.UNIMPLEMENTED) -> None:
        self.code = code

    def read_encoded(self, entities):
        raise call_error("leaf1", "Read", self.code, "Register reads are not supported yet")


@pytest.fixture()
def bmv2_like():
    device = Device(device_id=1)
    device.set_program(LoadedProgram.from_file(BASIC_P4))
    server = ThriftServer(device, port=0)
    ctl = FabricController.__new__(FabricController)  # only what a register read uses
    ctl.p4 = SimpleNamespace(cell_reads=lambda kind, name, indices: b"")
    ctl.conns, ctl.thrift_ports, ctl.read_via = {"leaf1": NoRegisterReads()}, {"leaf1": server.port}, {}
    yield device, ctl
    server.close()
    device.close()


def test_register_reads_fall_back_to_thrift_where_p4runtime_has_none(bmv2_like) -> None:
    device, ctl = bmv2_like
    cells = device.program.registers[REGISTER].cells
    cells[2], cells[5] = 17, (1 << 19) - 1
    everything = ctl.read_register("leaf1", REGISTER)
    assert everything == dict(enumerate(cells)) and everything[5] == (1 << 19) - 1
    assert ctl.read_register("leaf1", REGISTER, [2, 5]) == {2: 17, 5: (1 << 19) - 1}
    # and the run's report says where its register figures came from
    sources = figure_sources(ctl.read_via)
    assert sources["busiest link util"] == ("register port_tx_bytes, Thrift register_read "
                                            "(BMv2's P4Runtime reads no registers)")
    assert sources["ECN marks"] == "counter ecn_marks, not read"  # no counter read yet


def test_other_p4runtime_errors_and_switches_without_a_thrift_port_still_fail(bmv2_like) -> None:
    _, ctl = bmv2_like
    ctl.conns["leaf1"] = NoRegisterReads(grpc.StatusCode.NOT_FOUND)
    with pytest.raises(P4RuntimeError, match="NOT_FOUND"):
        ctl.read_register("leaf1", REGISTER)
    ctl.conns["leaf1"], ctl.thrift_ports = NoRegisterReads(), {}
    with pytest.raises(P4RuntimeError, match="UNIMPLEMENTED"):
        ctl.read_register("leaf1", REGISTER)
