"""The P4Runtime session against a real switch process (``p4switch --no-p4``): arbitration,
error reporting, and reconnection when the switch restarts."""

from __future__ import annotations

import threading
import time

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from controller.switch_conn import P4RuntimeError, SwitchConnection
from topo.builder import leaf_spine


@pytest.fixture
def one_switch(switches):
    topo = leaf_spine(1, 1, 1)
    sw = switches(topo)
    spine = topo.switch("spine1")
    return sw, spine, f"127.0.0.1:{spine.grpc_port}"


def test_primary_and_backup(one_switch):
    _, spine, addr = one_switch
    primary = SwitchConnection("spine1", addr, spine.device_id, election_id=5)
    primary.connect(10)
    try:
        assert primary.is_primary.is_set()
        backup = SwitchConnection("spine1", addr, spine.device_id, election_id=2)
        with pytest.raises(ConnectionError, match="not primary"):
            backup.connect(10)
    finally:
        primary.close()


def test_errors_carry_the_status(one_switch):
    _, spine, addr = one_switch
    conn = SwitchConnection("spine1", addr, spine.device_id)
    conn.connect(10)
    try:
        with pytest.raises(P4RuntimeError) as err:
            conn.get_pipeline()
        assert err.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert str(err.value).startswith("spine1: GetForwardingPipelineConfig failed: FAILED_PRECONDITION")
        u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
        u.entity.table_entry.table_id = 1
        with pytest.raises(P4RuntimeError) as err:
            conn.write([u])
        assert err.value.code != grpc.StatusCode.OK
    finally:
        conn.close()


def test_reconnects_after_restart(one_switch):
    sw, spine, addr = one_switch
    restored = threading.Event()
    conn = SwitchConnection("spine1", addr, spine.device_id, on_reconnect=lambda c: restored.set())
    conn.connect(10)
    try:
        sw.stop("spine1")
        deadline = time.monotonic() + 10
        while conn.is_primary.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not conn.is_primary.is_set()  # the break was noticed
        sw.start("spine1")
        assert restored.wait(30)
        assert conn.reconnects == 1 and conn.is_primary.is_set()
    finally:
        conn.close()


def test_primary_returns_when_a_higher_client_leaves(one_switch):
    """What happens around every `fabricctl set`: the CLI (higher election id) takes primary,
    the controller becomes backup, and gets primary back when the CLI disconnects."""
    _, spine, addr = one_switch
    controller = SwitchConnection("spine1", addr, spine.device_id, election_id=1)
    controller.connect(10)
    try:
        cli = SwitchConnection("spine1", addr, spine.device_id, election_id=10)
        cli.connect(10)
        deadline = time.monotonic() + 10
        while controller.is_primary.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not controller.is_primary.is_set()
        cli.close()
        assert controller.wait_primary(10)
        assert controller.reconnects == 0  # same stream: no pipeline re-push
    finally:
        controller.close()
