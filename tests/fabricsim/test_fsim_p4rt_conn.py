"""The in-process P4Runtime session answers as the gRPC server does: the same statuses, the
same per-update errors, packet-out and packet-in through the switch's stream."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2

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
