"""The in-process P4Runtime session answers as the gRPC server does: the same statuses, the
same per-update errors, packet-out and packet-in through the switch's stream."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2

import fabricsim.fabric as fabric_module
from fabricsim.fabric import P4Fabric
from p4rt.switch_conn import P4RuntimeError
from topo.builder import leaf_spine


def _conn(fabric: P4Fabric, election_id: int = 1):
    s = fabric.topo.switch("leaf1")
    conn = fabric.connection(s.name, "in-process", s.device_id, election_id)
    conn.connect()
    return conn


def test_requests_before_a_pipeline_fail_with_failed_precondition() -> None:
    fabric = P4Fabric(leaf_spine(1, 1, 1))
    conn = _conn(fabric)
    with pytest.raises(P4RuntimeError) as e:
        conn.read([p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry())])
    assert e.value.code == grpc.StatusCode.FAILED_PRECONDITION


def test_only_the_primary_writes_and_a_bad_update_names_its_status(fabric_pipeline) -> None:
    fabric = P4Fabric(leaf_spine(1, 1, 1))
    primary = _conn(fabric, election_id=5)
    primary.set_pipeline(fabric_pipeline.p4info, fabric_pipeline.device_config, cookie=7)
    assert primary.get_pipeline().cookie.cookie == 7
    with pytest.raises(ConnectionError, match="not primary"):
        _conn(fabric, election_id=2)  # as the gRPC session: a backup is refused at connect
    s = fabric.topo.switch("leaf1")
    backup = fabric.connection(s.name, "in-process", s.device_id, 2)
    update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
    update.entity.table_entry.table_id = 12345  # no such table
    with pytest.raises(P4RuntimeError) as e:
        backup.write([update])
    assert e.value.code == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(P4RuntimeError) as e:
        primary.write([update])
    assert e.value.code == grpc.StatusCode.UNKNOWN and e.value.details == ["update #0: INVALID_ARGUMENT: unknown table id 12345"]
    primary.close()
    assert not primary.is_primary.is_set()


def test_switches_given_one_program_check_its_source_once_and_keep_their_own_tables(fabric_pipeline,
                                                                                      monkeypatch) -> None:
    """SetForwardingPipelineConfig takes the front end from the device's check_config hook,
    which the simulated fabric shares between its switches: fabric.p4 is parsed and checked
    once for all of them (it was once per switch, about a second each), and each switch still
    runs its own tables."""
    checked: list[bytes] = []
    front_end = fabric_module.check_device_config

    def counting(device_config: bytes):
        checked.append(device_config)
        return front_end(device_config)

    monkeypatch.setattr(fabric_module, "check_device_config", counting)
    fabric_module._checked_once.cache_clear()
    fabric = P4Fabric(leaf_spine(1, 2, 1))
    conns = {}
    for name in ("leaf1", "leaf2", "spine1"):
        s = fabric.topo.switch(name)
        conns[name] = fabric.connection(name, "in-process", s.device_id, 1)
        conns[name].connect()
        conns[name].set_pipeline(fabric_pipeline.p4info, fabric_pipeline.device_config, cookie=1)
    assert checked == [fabric_pipeline.device_config]
    programs = [fabric.switches[n].device.program for n in conns]
    assert len({id(p) for p in programs}) == 3
    route = "FabricIngress.routing.routing_v4"
    assert len({id(p.tables[route]) for p in programs}) == 3
