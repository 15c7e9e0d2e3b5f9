"""SetForwardingPipelineConfig actions and GetForwardingPipelineConfig response types."""

import socket
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4switch.exec import LoadedProgram
from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info, ids
from p4switch.p4info.device_config import decode, encode
from p4switch.p4runtime import P4RuntimeServer, serve
from p4switch.switch.device import Device

Set = p4runtime_pb2.SetForwardingPipelineConfigRequest
Get = p4runtime_pb2.GetForwardingPipelineConfigRequest
INSERT = p4runtime_pb2.Update.INSERT


def _get(client, response_type):
    return client.stub.GetForwardingPipelineConfig(Get(device_id=1, response_type=response_type)).config


def _l2(mac):
    e = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.l2"))
    e.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
    e.action.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.drop")
    return e


def _entries(client):
    return client.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()))


def test_verify_checks_without_installing(switch, switch_program, rt):
    c = rt.Client(switch.address, election_id=1)
    try:
        c.arbitrate()
        c.set_pipeline(switch_program.config(), Set.VERIFY)
        assert switch.device.program is None
        bad = switch_program.config()
        bad.p4_device_config = encode("broken.p4", "header h_t { bit<8> f }")
        with pytest.raises(grpc.RpcError) as info:
            c.set_pipeline(bad, Set.VERIFY_AND_COMMIT)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "broken.p4:1:" in info.value.details()
        wrong = switch_program.config()
        wrong.p4_device_config = b'{"pipelines": []}'
        with pytest.raises(grpc.RpcError) as info:
            c.set_pipeline(wrong, Set.VERIFY)
        assert "BMv2 JSON" in info.value.details()
        with pytest.raises(grpc.RpcError) as info:
            c.set_pipeline(switch_program.config(), Set.UNSPECIFIED)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        c.close()


def test_get_response_types_and_cookie(switch, switch_program, rt):
    c = rt.Client(switch.address, election_id=1)
    try:
        c.arbitrate()
        config = switch_program.config()
        config.cookie.cookie = 0xC0FFEE
        c.set_pipeline(config)
        full = _get(c, Get.ALL)
        assert full.p4info == switch_program.p4info and full.p4_device_config == switch_program.device_config
        assert full.cookie.cookie == 0xC0FFEE
        cookie_only = _get(c, Get.COOKIE_ONLY)
        assert cookie_only.cookie.cookie == 0xC0FFEE and not cookie_only.HasField("p4info")
        assert cookie_only.p4_device_config == b""
        p4info_only = _get(c, Get.P4INFO_AND_COOKIE)
        assert p4info_only.HasField("p4info") and p4info_only.p4_device_config == b""
        dev_only = _get(c, Get.DEVICE_CONFIG_AND_COOKIE)
        assert not dev_only.HasField("p4info") and dev_only.p4_device_config == switch_program.device_config
    finally:
        c.close()


def _state(client):
    pre = client.read(p4runtime_pb2.Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry()))
    members = client.read(p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()))
    return len(_entries(client)), len(pre), len(members)


def test_commit_clears_and_reconcile_keeps_entries(controller, switch_program):
    group = p4runtime_pb2.PacketReplicationEngineEntry()
    group.multicast_group_entry.multicast_group_id = 3
    group.multicast_group_entry.replicas.add(egress_port=1, instance=0)
    member = p4runtime_pb2.ActionProfileMember(action_profile_id=ids.hashed_id(ids.ACTION_PROFILE, "MyIngress.ecmp_selector"),
                                               member_id=1)
    member.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.drop")
    controller.write(p4runtime_pb2.Update(type=INSERT, entity=p4runtime_pb2.Entity(table_entry=_l2(1))),
                     p4runtime_pb2.Update(type=INSERT, entity=p4runtime_pb2.Entity(packet_replication_engine_entry=group)),
                     p4runtime_pb2.Update(type=INSERT, entity=p4runtime_pb2.Entity(action_profile_member=member)))
    assert _state(controller) == (1, 1, 1)
    controller.set_pipeline(switch_program.config(), Set.RECONCILE_AND_COMMIT)
    assert [e.table_entry.match[0].exact.value for e in _entries(controller)] == [b"\x01"]
    assert _state(controller) == (1, 1, 1)
    controller.set_pipeline(switch_program.config(), Set.VERIFY_AND_COMMIT)
    assert _state(controller) == (0, 0, 0)


def test_verify_and_save_then_commit(controller, switch_program, switch):
    controller.write(p4runtime_pb2.Update(type=INSERT, entity=p4runtime_pb2.Entity(table_entry=_l2(1))))
    before = switch.device.program
    controller.set_pipeline(switch_program.config(), Set.VERIFY_AND_SAVE)
    assert switch.device.program is before and len(_entries(controller)) == 1
    controller.set_pipeline(None, Set.COMMIT)
    assert switch.device.program is not before and _entries(controller) == []
    with pytest.raises(grpc.RpcError) as info:  # the saved config was used up
        controller.set_pipeline(None, Set.COMMIT)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_commit_takes_no_config(controller, switch_program, switch):
    before = switch.device.program
    with pytest.raises(grpc.RpcError) as info:  # nothing saved, and a config given
        controller.set_pipeline(switch_program.config(), Set.COMMIT)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    controller.set_pipeline(switch_program.config(), Set.VERIFY_AND_SAVE)
    with pytest.raises(grpc.RpcError) as info:  # something saved, and still a config given
        controller.set_pipeline(switch_program.config(), Set.COMMIT)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert switch.device.program is before
    controller.set_pipeline(None, Set.COMMIT)  # the saved one is still there to commit
    assert switch.device.program is not before


def test_only_the_primary_sets_the_pipeline(controller, switch, switch_program, rt):
    backup = rt.Client(switch.address, election_id=2)
    try:
        backup.arbitrate()
        with pytest.raises(grpc.RpcError) as info:
            backup.set_pipeline(switch_program.config())
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    finally:
        backup.close()


def test_switch_started_with_a_program_serves_its_config(rt):
    """Like ``simple_switch_grpc prog.json``: the pipeline is there before any controller."""
    checked = compile_file(str(Path(__file__).parent / "programs" / "basic_l3.p4"))
    device = Device(device_id=1)
    device.set_program(LoadedProgram.from_checked(checked), generate_p4info(checked))
    server = P4RuntimeServer(device, "127.0.0.1:0").start()
    c = rt.Client(f"127.0.0.1:{server.port}", election_id=1)
    try:
        config = _get(c, Get.ALL)
        assert config.p4info.tables[0].preamble.name == "MyIngress.ipv4_lpm"
        cfg = decode(config.p4_device_config)
        assert cfg.name == "basic_l3.p4" and cfg.source == checked.source_text
        assert _entries(c) == []
    finally:
        c.close()
        server.stop(grace=None)


def test_serve_returns_a_running_grpc_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = serve(Device(device_id=3), f"127.0.0.1:{port}")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
            assert stub.Capabilities(p4runtime_pb2.CapabilitiesRequest()).p4runtime_api_version == "1.4.1"
            with pytest.raises(grpc.RpcError) as info:
                stub.GetForwardingPipelineConfig(Get(device_id=1))
            assert info.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        server.stop(None)
