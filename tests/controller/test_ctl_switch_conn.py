"""The P4Runtime session against a real switch process (``p4switch --no-p4``): arbitration,
error reporting, digests and their acks, reconnection when the switch restarts, and the
controller's restore of a restarted switch being retried until it succeeds."""

from __future__ import annotations

import queue
import threading
import time

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from controller import cli
from controller.controller import FabricController
from controller.pipeline import compile_fabric
from controller.profiles import settings_for
from p4rt.errors import P4RuntimeError
from p4rt.switch_conn import SwitchConnection
from topo.builder import leaf_spine

pytestmark = pytest.mark.net  # switch processes


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


# A program whose only job is to send a digest for every packet: the source MAC and the
# port it came in on (the CPU port for a packet-out).
DIGEST_P4 = r"""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
struct headers_t { ethernet_t eth; }
struct meta_t { }
struct learn_t { bit<48> srcAddr; bit<9> port; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        digest<learn_t>(1, {hdr.eth.srcAddr, sm.ingress_port});
        mark_to_drop(sm);
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def test_digests_are_delivered_and_acked(one_switch, tmp_path):
    """on_digest gets the DigestList with the program's field values, and the client acks it:
    the switch holds back identical data while a list is unacknowledged (ack timeout 60 s
    here), so a second identical digest arrives only because the first list was acked."""
    _, spine, addr = one_switch
    src = tmp_path / "learn.p4"
    src.write_text(DIGEST_P4)
    pipe = compile_fabric("ours", tmp_path / "build", program=src)
    [info] = pipe.p4info.digests
    lists: queue.Queue[p4runtime_pb2.DigestList] = queue.Queue()
    conn = SwitchConnection("spine1", addr, spine.device_id, on_digest=lists.put)
    conn.connect(10)
    try:
        conn.set_pipeline(pipe.p4info, pipe.device_config, pipe.cookie)
        u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
        u.entity.digest_entry.digest_id = info.preamble.id
        u.entity.digest_entry.config.max_list_size = 1
        u.entity.digest_entry.config.max_timeout_ns = 0
        u.entity.digest_entry.config.ack_timeout_ns = 60_000_000_000
        conn.write([u])
        mac = bytes.fromhex("02aabbccddee")
        frame = bytes.fromhex("ffffffffffff") + mac + b"\x88\xb5" + b"x" * 46
        got = []
        for _ in range(2):
            conn.packet_out(frame, [])
            got.append(lists.get(timeout=10))
        for lst in got:
            assert lst.digest_id == info.preamble.id
            [data] = lst.data
            src_mac, port = (m.bitstring for m in data.struct.members)
            assert int.from_bytes(src_mac, "big") == int.from_bytes(mac, "big")
            assert int.from_bytes(port, "big") == spine.cpu_port
        assert got[1].list_id == got[0].list_id + 1
    finally:
        conn.close()


def test_failed_restore_is_retried(one_switch, fabric_pipeline):
    """A switch restarts while an operator's `fabricctl` session (higher election id) holds
    primary: the controller's first restore is refused by the switch (PERMISSION_DENIED). It
    must not leave the switch empty: once the operator's session leaves and the controller is
    primary again, the restore is retried until the switch has its pipeline and every entry back."""
    sw, spine, addr = one_switch
    ctl = FabricController(sw.topo, fabric_pipeline, settings_for("baseline"), profile="baseline")
    ctl.start()
    cli = SwitchConnection("spine1", addr, spine.device_id, election_id=10)
    calls = []

    def settings_source():
        """The state file read at each restore attempt; the operator's session takes primary
        just before the first attempt's pipeline push and leaves a moment later."""
        calls.append(1)
        if len(calls) == 1:
            cli.connect(10)
            threading.Timer(1.0, cli.close).start()
        return settings_for("baseline"), "baseline"

    try:
        before = ctl.read_intent("spine1")
        assert before.size() > 0
        ctl.settings_source = settings_source
        sw.stop("spine1")
        sw.start("spine1")
        deadline = time.monotonic() + 60
        while ctl.restores < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ctl.restore_failures >= 1 and ctl.restores == 1
        assert ctl.conns["spine1"].get_pipeline().cookie.cookie == fabric_pipeline.cookie
        assert ctl.read_intent("spine1") == before
    finally:
        cli.close()
        ctl.close()


def test_resync_writes_what_a_switch_with_the_right_pipeline_lacks(one_switch, fabric_pipeline):
    """Two controllers restore a restarted switch (the fabric's, and an operator's `fabricctl`
    with a higher election id): one pushes the pipeline and loses primary before writing its
    entries. The other, primary now, finds the right pipeline: that proves nothing about the
    entries, so it reads back what the switch holds and writes the difference."""
    sw, spine, addr = one_switch
    ctl = FabricController(sw.topo, fabric_pipeline, settings_for("baseline"), profile="baseline")
    ctl.start()
    try:
        before = ctl.read_intent("spine1")
        assert before.size() > 0
        conn = ctl.conns["spine1"]
        conn.set_pipeline(fabric_pipeline.p4info, fabric_pipeline.device_config, fabric_pipeline.cookie)
        assert not ctl.read_intent("spine1").entries  # the same program, and none of its entries
        assert ctl.resync("spine1") >= len(before.entries)
        assert ctl.read_intent("spine1") == before
        assert ctl.resync("spine1") == 0  # in sync: nothing written, the pipeline left alone
    finally:
        ctl.close()


def _bad_routes(pipeline, n: int) -> list[p4runtime_pb2.Update]:
    """``n`` route inserts whose 7-byte IPv4 addresses every switch must refuse (INVALID_ARGUMENT)."""
    table = next(t for t in pipeline.p4info.tables if t.preamble.name.endswith("routing_v4"))
    updates = []
    for i in range(n):
        u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
        e = u.entity.table_entry
        e.table_id = table.preamble.id
        e.match.add(field_id=1).lpm.value, e.match[0].lpm.prefix_len = (0xFF << 48 | i).to_bytes(7, "big"), 32
        e.action.action.action_id = table.action_refs[0].id
        updates.append(u)
    return updates


def test_a_large_failed_batch_keeps_its_per_update_errors(one_switch, fabric_pipeline, monkeypatch, capsys):
    """Hundreds of per-update errors exceed gRPC's default 8 KiB metadata limit; the session's
    channel accepts them, and fabricctl shows the first few with their codes."""

    _, spine, addr = one_switch
    conn = SwitchConnection("spine1", addr, spine.device_id)
    conn.connect(10)
    try:
        conn.set_pipeline(fabric_pipeline.p4info, fabric_pipeline.device_config)
        with pytest.raises(P4RuntimeError) as err:
            conn.write(_bad_routes(fabric_pipeline, 1000))
    finally:
        conn.close()
    e = err.value
    assert e.code == grpc.StatusCode.UNKNOWN  # the batch status, not RESOURCE_EXHAUSTED
    assert len(e.details) == 256  # the first WriteRequest (BATCH updates) failed, each update named
    assert e.details[0].startswith("update #0: OUT_OF_RANGE: ")  # P4Runtime 1.4 section 8.3: value too wide

    def failing(args, state_path):
        raise e

    monkeypatch.setitem(cli.COMMANDS, "status", failing)
    assert cli.main(["status"]) == cli.EXIT_FAIL
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "fabricctl: spine1: Write failed: UNKNOWN: 256 of 256 updates failed"
    assert lines[1].startswith("  update #0: OUT_OF_RANGE: ")
    assert lines[cli.SHOWN_UPDATE_ERRORS].startswith(f"  update #{cli.SHOWN_UPDATE_ERRORS - 1}: OUT_OF_RANGE")
    assert lines[-1] == f"  ... and {256 - cli.SHOWN_UPDATE_ERRORS} more failed updates"
