"""Table entry idle timeout over P4Runtime: hits recorded by the data plane, one
IdleTimeoutNotification per idle period on the primary's stream, time_since_last_hit on Read,
and INVALID_ARGUMENT for tables without ``support_timeout``.

The switch runs on a manual fabric clock, so "idle for 5 ms" is one ``clock.advance`` rather
than a sleep; the test runs the server's periodic scan itself (``service.tick()``) and then
re-sends its arbitration update: the answer comes on the same stream after anything the scan
queued, so "no notification" is observed without waiting.
"""

from pathlib import Path

import grpc
import p4runtime_sh.shell as sh
import pytest
from p4.v1 import p4runtime_pb2
from scapy.layers.l2 import Ether

from netbase.clock import ManualClock
from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info, p4info_to_text
from p4switch.p4info.device_config import encode
from p4switch.p4runtime import P4RuntimeServer
from p4switch.switch.device import Device

PROGRAM = Path(__file__).parent / "programs" / "p4rt_idle.p4"
DEVICE_ID = 1
MS = 1_000_000
TTL = 5 * MS
HOST_MAC = "00:00:00:00:00:02"

Update = p4runtime_pb2.Update


class Port:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send(self, frame: bytes) -> bool:
        self.frames.append(bytes(frame))
        return True


class Rig:
    """A switch on a manual clock with the P4Runtime server and a primary raw-gRPC client."""

    def __init__(self, rt, config: p4runtime_pb2.ForwardingPipelineConfig) -> None:
        self.clock = ManualClock()
        self.device = Device(device_id=DEVICE_ID, clock=self.clock)
        self.ports = {p: Port() for p in (1, 2, 3)}
        for p, io in self.ports.items():
            self.device.add_port(p, io)
        self.server = P4RuntimeServer(self.device, "127.0.0.1:0").start()
        self.address = f"127.0.0.1:{self.server.port}"
        self.client = rt.Client(self.address, election_id=10, device_id=DEVICE_ID)
        assert self.client.arbitrate().arbitration.status.code == 0
        self.client.set_pipeline(config)
        self.p4info = config.p4info

    def close(self) -> None:
        self.client.close()
        self.server.stop(grace=None)

    def ids(self, name: str) -> int:
        for kind in (self.p4info.tables, self.p4info.actions):
            for obj in kind:
                if obj.preamble.name == name:
                    return obj.preamble.id
        raise KeyError(name)

    def send(self, dst: str, port: int = 1, ether_type: int = 0x88B5) -> None:
        """One frame into ``port``, run through the switch at the current fabric time."""
        self.device.receive(port, bytes(Ether(dst=dst, type=ether_type) / b"payload"))
        self.device.poll()

    def notifications(self) -> list[p4runtime_pb2.IdleTimeoutNotification]:
        """Run the server's scan now and return every idle notification it has sent so far."""
        self.server.service.tick()
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = DEVICE_ID
        req.arbitration.election_id.low = self.client.election_id
        self.client.send(req)
        got = []
        while True:
            msg = self.client.responses.get(timeout=5)
            assert msg is not None, "the stream closed"
            kind = msg.WhichOneof("update")
            if kind == "arbitration":
                return got
            if kind == "idle_timeout_notification":
                got.append(msg.idle_timeout_notification)

    def host_entry(self, mac: str, port: int = 2, ttl: int = TTL, metadata: bytes = b"") -> p4runtime_pb2.TableEntry:
        te = p4runtime_pb2.TableEntry(table_id=self.ids("MyIngress.hosts"), idle_timeout_ns=ttl, metadata=metadata)
        te.match.add(field_id=1).exact.value = bytes.fromhex(mac.replace(":", ""))
        te.action.action.action_id = self.ids("MyIngress.forward")
        te.action.action.params.add(param_id=1, value=bytes([port]))
        return te

    def write(self, kind: int, **entity) -> None:
        req = self.client._stamp(p4runtime_pb2.WriteRequest())
        req.updates.add(type=kind, entity=p4runtime_pb2.Entity(**entity))
        self.client.stub.Write(req)

    def since_last_hit(self, te: p4runtime_pb2.TableEntry) -> int:
        query = p4runtime_pb2.TableEntry(table_id=te.table_id, priority=te.priority)
        query.match.extend(te.match)
        query.time_since_last_hit.SetInParent()
        (found,) = self.client.read(p4runtime_pb2.Entity(table_entry=query))
        assert found.table_entry.HasField("time_since_last_hit")
        return found.table_entry.time_since_last_hit.elapsed_ns


@pytest.fixture(scope="module")
def compiled():
    checked = compile_file(str(PROGRAM))
    p4info = generate_p4info(checked)
    return p4info, encode(PROGRAM.name, checked.source_text)


@pytest.fixture
def rig(rt, compiled):
    p4info, device_config = compiled
    r = Rig(rt, p4runtime_pb2.ForwardingPipelineConfig(p4info=p4info, p4_device_config=device_config))
    try:
        yield r
    finally:
        r.close()


def test_entry_is_reported_once_only_after_it_stops_being_hit(rig):
    entry = rig.host_entry(HOST_MAC, metadata=b"cookie-7")
    rig.write(Update.INSERT, table_entry=entry)

    # hit every 3 ms for 12 ms: more than the 5 ms TTL in total, never idle that long
    for _ in range(4):
        rig.clock.advance(3 * MS)
        rig.send(HOST_MAC)
        assert rig.ports[2].frames.pop() is not None  # the entry forwards
        assert rig.notifications() == []

    # time since the last hit grows with the clock, the entry is still quiet before its TTL
    rig.clock.advance(1 * MS)
    assert rig.since_last_hit(entry) == 1 * MS
    rig.clock.advance(3 * MS)
    assert rig.since_last_hit(entry) == 4 * MS
    assert rig.notifications() == []

    # idle for the whole TTL: exactly one notification, carrying the entry's key and cookie
    rig.clock.advance(1 * MS)
    (note,) = rig.notifications()
    assert note.timestamp == rig.clock.now_ns()
    (reported,) = note.table_entry
    assert reported.table_id == entry.table_id
    assert [(m.field_id, m.exact.value) for m in reported.match] == [(1, b"\x02")]  # canonical bytestring
    assert reported.priority == 0
    assert reported.metadata == b"cookie-7"
    assert reported.idle_timeout_ns == TTL
    rig.clock.advance(2 * MS)
    assert rig.notifications() == []  # not again within the next TTL

    # hit again: the idle period starts over, reported once it has idled a full TTL again
    rig.send(HOST_MAC)
    assert rig.since_last_hit(entry) == 0
    rig.clock.advance(TTL - 1000)
    assert rig.notifications() == []
    rig.clock.advance(1000)
    (note,) = rig.notifications()
    assert len(note.table_entry) == 1


def test_expired_entries_are_batched_and_repeat_each_ttl_while_idle(rig):
    host = rig.host_entry(HOST_MAC, ttl=2 * MS)
    acl = p4runtime_pb2.TableEntry(table_id=rig.ids("MyIngress.acl"), priority=7, idle_timeout_ns=2 * MS)
    tern = acl.match.add(field_id=1).ternary
    tern.value, tern.mask = b"\x88\xb5", b"\xff\xff"
    acl.action.action.action_id = rig.ids("NoAction")
    never = rig.host_entry("00:00:00:00:00:03", ttl=0)  # no TTL: never reported
    for te in (host, acl, never):
        rig.write(Update.INSERT, table_entry=te)

    rig.clock.advance(2 * MS)
    (note,) = rig.notifications()
    got = {(t.table_id, t.priority): t for t in note.table_entry}
    assert set(got) == {(host.table_id, 0), (acl.table_id, 7)}
    assert got[(acl.table_id, 7)].match[0].ternary.value == b"\x88\xb5"

    # the acl entry is hit, the host entry stays idle: only the host comes again after a TTL
    rig.clock.advance(1 * MS)
    rig.send("00:00:00:00:00:09", ether_type=0x88B5)
    assert rig.notifications() == []
    rig.clock.advance(1 * MS)
    (note,) = rig.notifications()
    assert [t.table_id for t in note.table_entry] == [host.table_id]
    # the entry without TTL still answers time_since_last_hit (never hit: since insertion)
    assert rig.since_last_hit(never) == 4 * MS

    # a deleted entry is never reported
    rig.write(Update.DELETE, table_entry=host)
    rig.clock.advance(10 * MS)
    (note,) = rig.notifications()
    assert [t.table_id for t in note.table_entry] == [acl.table_id]


def _write_error(rig, rt, kind: int, te: p4runtime_pb2.TableEntry) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as err:
        rig.write(kind, table_entry=te)
    ((code, _message),) = rt.batch_errors(err.value)
    return code


def test_idle_fields_rejected_where_the_spec_forbids_them(rig, rt):
    ports = p4runtime_pb2.TableEntry(table_id=rig.ids("MyIngress.ports"), idle_timeout_ns=TTL)
    ports.match.add(field_id=1).exact.value = b"\x01"
    ports.action.action.action_id = rig.ids("NoAction")
    assert _write_error(rig, rt, Update.INSERT, ports) == grpc.StatusCode.INVALID_ARGUMENT
    ports_query = p4runtime_pb2.TableEntry(table_id=ports.table_id)
    assert rig.client.read(p4runtime_pb2.Entity(table_entry=ports_query)) == []  # nothing was inserted

    ports_query.time_since_last_hit.SetInParent()
    with pytest.raises(grpc.RpcError) as err:
        rig.client.read(p4runtime_pb2.Entity(table_entry=ports_query))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT

    # time_since_last_hit is read-only; default entries have no idle timeout
    host = rig.host_entry(HOST_MAC)
    host.time_since_last_hit.elapsed_ns = 1
    assert _write_error(rig, rt, Update.INSERT, host) == grpc.StatusCode.INVALID_ARGUMENT
    default = p4runtime_pb2.TableEntry(table_id=host.table_id, is_default_action=True, idle_timeout_ns=TTL)
    default.action.action.action_id = rig.ids("MyIngress.drop")
    assert _write_error(rig, rt, Update.MODIFY, default) == grpc.StatusCode.INVALID_ARGUMENT


def test_p4runtime_shell_sets_ttl_reads_time_since_last_hit_and_gets_the_notification(rig, compiled, tmp_path):
    p4info, device_config = compiled
    rig.client.close()  # the shell becomes the primary
    p4info_path = tmp_path / "p4rt_idle.p4info.txtpb"
    p4info_path.write_text(p4info_to_text(p4info))
    bin_path = tmp_path / "p4rt_idle.json"
    bin_path.write_bytes(device_config)
    sh.setup(device_id=DEVICE_ID, grpc_addr=rig.address, election_id=(0, 20),
             config=sh.FwdPipeConfig(str(p4info_path), str(bin_path)), verbose=False)
    try:
        te = sh.TableEntry("MyIngress.hosts")(action="MyIngress.forward")
        te.match["hdr.ethernet.dstAddr"] = HOST_MAC
        te.action["port"] = "3"
        te.idle_timeout_ns = TTL
        te.insert()

        rig.clock.advance(2 * MS)
        rig.send(HOST_MAC)
        assert rig.ports[3].frames  # forwarded by the shell's entry
        rig.clock.advance(3 * MS)
        query = sh.TableEntry("MyIngress.hosts")
        query.time_since_last_hit  # asking for it puts an empty time_since_last_hit in the request
        (read,) = list(query.read())
        assert read.idle_timeout_ns == TTL
        assert read.time_since_last_hit.elapsed_ns == 3 * MS

        rig.clock.advance(2 * MS)
        rig.server.service.tick()
        msg = sh.client.get_stream_packet("idle_timeout_notification", timeout=5)
        assert msg is not None
        (reported,) = msg.idle_timeout_notification.table_entry
        assert reported.match[0].exact.value == b"\x02"
        assert reported.idle_timeout_ns == TTL
    finally:
        sh.teardown()


def test_reconcile_keeps_the_idle_timer_of_carried_over_entries(rig):
    entry = rig.host_entry(HOST_MAC)
    rig.write(Update.INSERT, table_entry=entry)
    rig.clock.advance(3 * MS)
    rig.send(HOST_MAC)
    rig.clock.advance(1 * MS)
    config = rig.client.stub.GetForwardingPipelineConfig(
        p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=DEVICE_ID)).config
    rig.client.set_pipeline(config, p4runtime_pb2.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT)

    assert rig.since_last_hit(entry) == 1 * MS  # counted from the hit before the new pipeline
    rig.clock.advance(3 * MS)
    assert rig.notifications() == []
    rig.clock.advance(1 * MS)
    (note,) = rig.notifications()
    assert note.table_entry[0].idle_timeout_ns == TTL
