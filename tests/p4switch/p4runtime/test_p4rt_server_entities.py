"""Every entity kind written, read back, and seen working in the data plane."""

import time

import grpc
import pytest
from p4.v1 import p4data_pb2, p4runtime_pb2
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from p4switch.p4info import ids

INSERT, MODIFY, DELETE = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE
Entity = p4runtime_pb2.Entity


def _w(client, kind, **entity):
    client.write(p4runtime_pb2.Update(type=kind, entity=Entity(**entity)))


def _frame(dst_mac="00:00:00:00:00:0a", ip_dst="10.1.1.1", ether_type=None):
    if ether_type is not None:
        return bytes(Ether(dst=dst_mac, src="00:00:00:00:00:77", type=ether_type) / (b"x" * 40))
    return bytes(Ether(dst=dst_mac, src="00:00:00:00:00:77") / IP(dst=ip_dst) / UDP() / b"payload")


def _l2(mac, action, param_id, value):
    e = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.l2"))
    e.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
    e.action.action.action_id = ids.hashed_id(ids.ACTION, action)
    e.action.action.params.add(param_id=param_id, value=value)
    return e


def test_multicast_group_replicates_and_reads_back(controller, switch, rt):
    group = p4runtime_pb2.PacketReplicationEngineEntry()
    group.multicast_group_entry.multicast_group_id = 7
    for port in (2, 3):
        group.multicast_group_entry.replicas.add(egress_port=port, instance=1)
    _w(controller, INSERT, packet_replication_engine_entry=group)
    with pytest.raises(grpc.RpcError) as info:
        _w(controller, INSERT, packet_replication_engine_entry=group)
    assert rt.batch_errors(info.value)[0][0] == grpc.StatusCode.ALREADY_EXISTS
    _w(controller, INSERT, table_entry=_l2(0x0A, "MyIngress.flood", 1, b"\x07"))
    frame = _frame()
    switch.device.receive(1, frame)
    assert switch.ports[2].get() == frame and switch.ports[3].get() == frame

    read = controller.read(Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry()))
    assert len(read) == 1
    got = read[0].packet_replication_engine_entry.multicast_group_entry
    assert got.multicast_group_id == 7 and [(r.egress_port, r.instance) for r in got.replicas] == [(2, 1), (3, 1)]

    del group.multicast_group_entry.replicas[1]
    _w(controller, MODIFY, packet_replication_engine_entry=group)
    switch.device.receive(1, frame)
    assert switch.ports[2].get() == frame
    _w(controller, DELETE, packet_replication_engine_entry=group)
    assert controller.read(Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry())) == []


def test_clone_session_round_trip(controller, rt):
    entry = p4runtime_pb2.PacketReplicationEngineEntry()
    cs = entry.clone_session_entry
    cs.session_id, cs.class_of_service, cs.packet_length_bytes = 5, 3, 128
    cs.replicas.add(egress_port=4, instance=0)
    _w(controller, INSERT, packet_replication_engine_entry=entry)
    query = p4runtime_pb2.PacketReplicationEngineEntry()
    query.clone_session_entry.session_id = 5
    read = controller.read(Entity(packet_replication_engine_entry=query))
    assert read[0].packet_replication_engine_entry == entry
    missing = p4runtime_pb2.PacketReplicationEngineEntry()
    missing.clone_session_entry.session_id = 6
    with pytest.raises(grpc.RpcError) as info:
        _w(controller, DELETE, packet_replication_engine_entry=missing)
    assert rt.batch_errors(info.value)[0][0] == grpc.StatusCode.NOT_FOUND


def test_counter_and_register_reflect_traffic(controller, switch, rt):
    _w(controller, INSERT, table_entry=_l2(0x0A, "MyIngress.l2_forward", 1, b"\x02"))
    frame = _frame()
    for _ in range(3):
        switch.device.receive(1, frame)
        switch.ports[2].get()
    counter_id = ids.hashed_id(ids.COUNTER, "MyIngress.port_packets")
    query = p4runtime_pb2.CounterEntry(counter_id=counter_id)
    query.index.index = 1
    got = controller.read(Entity(counter_entry=query))[0].counter_entry
    assert got.data.packet_count == 3
    reg_query = p4runtime_pb2.RegisterEntry(register_id=ids.hashed_id(ids.REGISTER, "MyIngress.last_length"))
    reg_query.index.index = 1
    reg = controller.read(Entity(register_entry=reg_query))[0].register_entry
    assert int.from_bytes(reg.data.bitstring, "big") == len(frame)
    # writes: zero the counter, set a register cell
    _w(controller, MODIFY, counter_entry=p4runtime_pb2.CounterEntry(counter_id=counter_id, index=query.index))
    assert controller.read(Entity(counter_entry=query))[0].counter_entry.data.packet_count == 0
    reg_write = p4runtime_pb2.RegisterEntry(register_id=reg_query.register_id, index=reg_query.index,
                                            data=p4data_pb2.P4Data(bitstring=b"\x12\x34"))
    _w(controller, MODIFY, register_entry=reg_write)
    assert controller.read(Entity(register_entry=reg_query))[0].register_entry.data.bitstring == b"\x12\x34"
    all_cells = controller.read(Entity(register_entry=p4runtime_pb2.RegisterEntry(register_id=reg_query.register_id)))
    assert len(all_cells) == 16
    with pytest.raises(grpc.RpcError) as info:
        _w(controller, INSERT, register_entry=reg_write)
    assert rt.batch_errors(info.value)[0][0] == grpc.StatusCode.INVALID_ARGUMENT


def _cell(kind: str, obj_id: int, index: int | None) -> p4runtime_pb2.Entity:
    entity = Entity()
    msg = getattr(entity, f"{kind}_entry")
    setattr(msg, f"{kind}_id", obj_id)
    if index is not None:
        msg.index.index = index
    return entity


def test_one_read_of_many_cells_gives_each_cell_in_the_order_asked(controller, switch):
    """A poller asks for the cells it watches in one Read (the switch reads a run of cells of
    one object at once): the answer is each cell in the order asked, runs broken by other
    objects and wildcards included, as if each had been read alone."""
    _w(controller, INSERT, table_entry=_l2(0x0A, "MyIngress.l2_forward", 1, b"\x02"))
    for port, count in ((1, 3), (3, 1)):
        for _ in range(count):
            switch.device.receive(port, _frame())
            switch.ports[2].get()
    counter = ids.hashed_id(ids.COUNTER, "MyIngress.port_packets")
    register = ids.hashed_id(ids.REGISTER, "MyIngress.last_length")
    for index, value in ((2, b"\x07"), (9, b"\x01\x00")):
        _w(controller, MODIFY, register_entry=p4runtime_pb2.RegisterEntry(
            register_id=register, index=p4runtime_pb2.Index(index=index), data=p4data_pb2.P4Data(bitstring=value)))
    asked = [_cell("counter", counter, 3), _cell("counter", counter, 1), _cell("counter", counter, 0),
             _cell("register", register, 9), _cell("register", register, 2), _cell("counter", counter, 1),
             _cell("register", register, None), _cell("counter", counter, 3)]
    together = controller.read(*asked)
    alone = [e for entity in asked for e in controller.read(entity)]
    assert [e.SerializeToString() for e in together] == [e.SerializeToString() for e in alone]
    assert len(together) == 6 + 16 + 1
    assert [e.counter_entry.data.packet_count for e in together[:3]] == [1, 3, 0]
    assert [e.register_entry.data.bitstring for e in together[3:5]] == [b"\x01\x00", b"\x07"]
    # a cell past the end inside a run fails the whole Read with the status the spec names
    with pytest.raises(grpc.RpcError) as info:
        controller.read(_cell("counter", counter, 1), _cell("counter", counter, 512), _cell("counter", counter, 2))
    assert info.value.code() == grpc.StatusCode.OUT_OF_RANGE


def _route(prefix: bytes, plen: int, port: int):
    e = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.routes"))
    m = e.match.add(field_id=1).lpm
    m.value, m.prefix_len = prefix, plen
    a = e.action.action
    a.action_id = ids.hashed_id(ids.ACTION, "MyIngress.forward")
    a.params.add(param_id=1, value=b"\x00\x00\x00\x00\x00\x02")
    a.params.add(param_id=2, value=bytes([port]))
    return e


def test_direct_counter_and_default_entry(controller, switch, rt):
    route = _route(bytes([10, 1, 0, 0]), 16, 3)
    _w(controller, INSERT, table_entry=route)
    frame = _frame(ip_dst="10.1.2.3")
    switch.device.receive(1, frame)
    switch.ports[3].get()
    query = p4runtime_pb2.TableEntry(table_id=route.table_id)
    query.counter_data.SetInParent()
    got = controller.read(Entity(table_entry=query))[0].table_entry
    assert got.counter_data.packet_count == 1 and got.counter_data.byte_count == len(frame)
    direct = controller.read(Entity(direct_counter_entry=p4runtime_pb2.DirectCounterEntry(table_entry=route)))
    assert direct[0].direct_counter_entry.data.packet_count == 1
    reset = p4runtime_pb2.DirectCounterEntry(table_entry=route)
    _w(controller, MODIFY, direct_counter_entry=reset)
    direct = controller.read(Entity(direct_counter_entry=p4runtime_pb2.DirectCounterEntry(table_entry=route)))
    assert direct[0].direct_counter_entry.data.packet_count == 0

    # the default entry: drop until changed to forward to port 4
    default = p4runtime_pb2.TableEntry(table_id=route.table_id, is_default_action=True)
    read_default = controller.read(Entity(table_entry=default))[0].table_entry
    assert read_default.action.action.action_id == ids.hashed_id(ids.ACTION, "MyIngress.drop")
    default.action.CopyFrom(_route(b"\x00", 1, 4).action)
    _w(controller, MODIFY, table_entry=default)
    switch.device.receive(1, _frame(ip_dst="192.168.0.1"))
    assert Ether(switch.ports[4].get())[IP].dst == "192.168.0.1"
    with pytest.raises(grpc.RpcError) as info:
        _w(controller, INSERT, table_entry=default)
    assert rt.batch_errors(info.value)[0][0] == grpc.StatusCode.INVALID_ARGUMENT


def test_action_selector_members_and_groups(controller, switch, rt):
    profile = ids.hashed_id(ids.ACTION_PROFILE, "MyIngress.ecmp_selector")
    set_port = ids.hashed_id(ids.ACTION, "MyIngress.set_port")
    for member, port in ((1, 2), (2, 3)):
        m = p4runtime_pb2.ActionProfileMember(action_profile_id=profile, member_id=member)
        m.action.action_id = set_port
        m.action.params.add(param_id=1, value=bytes([port]))
        _w(controller, INSERT, action_profile_member=m)
    group = p4runtime_pb2.ActionProfileGroup(action_profile_id=profile, group_id=1, max_size=4)
    group.members.add(member_id=1, weight=1)
    group.members.add(member_id=2, weight=1)
    _w(controller, INSERT, action_profile_group=group)
    entry = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.ecmp"))
    entry.match.add(field_id=1).exact.value = bytes([10, 9, 9, 9])
    entry.action.action_profile_group_id = 1
    _w(controller, INSERT, table_entry=entry)
    frame = _frame(ip_dst="10.9.9.9")
    switch.device.receive(1, frame)
    deadline = time.monotonic() + 5
    while all(switch.ports[p].frames.empty() for p in (2, 3)) and time.monotonic() < deadline:
        time.sleep(0.005)
    # the selector picked exactly one member (port 2 or 3) for the flow
    assert sorted(switch.ports[p].frames.qsize() for p in (2, 3)) == [0, 1]

    members = controller.read(Entity(action_profile_member=p4runtime_pb2.ActionProfileMember(action_profile_id=profile)))
    assert [m.action_profile_member.member_id for m in members] == [1, 2]
    groups = controller.read(Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup()))
    assert groups[0].action_profile_group == group
    with pytest.raises(grpc.RpcError) as info:  # a member in use by a group cannot go
        _w(controller, DELETE, action_profile_member=p4runtime_pb2.ActionProfileMember(action_profile_id=profile, member_id=1))
    code, message = rt.batch_errors(info.value)[0]
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "in group 1" in message


def test_meter_config_round_trip(controller):
    meter_id = ids.hashed_id(ids.METER, "MyIngress.policer")
    entry = p4runtime_pb2.MeterEntry(meter_id=meter_id, config=p4runtime_pb2.MeterConfig(cir=100, cburst=10, pir=200, pburst=20))
    entry.index.index = 3
    _w(controller, MODIFY, meter_entry=entry)
    query = p4runtime_pb2.MeterEntry(meter_id=meter_id)
    query.index.index = 3
    assert controller.read(Entity(meter_entry=query))[0].meter_entry == entry
    query.index.index = 99
    with pytest.raises(grpc.RpcError) as info:
        controller.read(Entity(meter_entry=query))
    assert info.value.code() == grpc.StatusCode.OUT_OF_RANGE


def test_digest_lists_with_ack(controller, switch):
    digest_id = ids.hashed_id(ids.DIGEST, "learn_t")
    frame = _frame(ether_type=0x9000)
    switch.device.receive(1, frame)  # not configured yet: no digest
    entry = p4runtime_pb2.DigestEntry(digest_id=digest_id)
    entry.config.max_list_size = 1
    entry.config.ack_timeout_ns = 10**12
    _w(controller, INSERT, digest_entry=entry)
    switch.device.receive(2, frame)
    digest = controller.next("digest").digest
    assert digest.digest_id == digest_id
    members = digest.data[0].struct.members
    assert members[0].bitstring == b"\x77" and members[1].bitstring == b"\x02"  # canonical form
    switch.device.receive(2, frame)  # same data while unacknowledged: held back
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = digest_id, digest.list_id
    controller.send(ack)
    switch.device.receive(3, frame)
    again = controller.next("digest").digest
    assert again.list_id == digest.list_id + 1 and again.data[0].struct.members[1].bitstring == b"\x03"
    assert controller.read(Entity(digest_entry=p4runtime_pb2.DigestEntry()))[0].digest_entry == entry


def test_direct_meter_in_entry_and_as_direct_meter_entry(controller, rt):
    entry = _l2(0x0B, "MyIngress.l2_forward", 1, b"\x01")
    entry.meter_config.CopyFrom(p4runtime_pb2.MeterConfig(cir=1000, cburst=100, pir=2000, pburst=200))
    _w(controller, INSERT, table_entry=entry)
    query = p4runtime_pb2.TableEntry(table_id=entry.table_id)
    query.meter_config.SetInParent()
    got = controller.read(Entity(table_entry=query))[0].table_entry
    assert got.meter_config == entry.meter_config

    key = _l2(0x0B, "MyIngress.l2_forward", 1, b"\x01")
    key.ClearField("action")
    update = p4runtime_pb2.DirectMeterEntry(table_entry=key, config=p4runtime_pb2.MeterConfig(cir=5, cburst=5, pir=9, pburst=9))
    _w(controller, MODIFY, direct_meter_entry=update)
    read = controller.read(Entity(direct_meter_entry=p4runtime_pb2.DirectMeterEntry(table_entry=key)))
    assert read[0].direct_meter_entry.config == update.config
    bad = p4runtime_pb2.DirectMeterEntry(table_entry=key, config=p4runtime_pb2.MeterConfig(cir=10, pir=5))
    with pytest.raises(grpc.RpcError) as info:
        _w(controller, MODIFY, direct_meter_entry=bad)
    assert rt.batch_errors(info.value)[0][0] == grpc.StatusCode.INVALID_ARGUMENT
    missing = _l2(0x0C, "MyIngress.l2_forward", 1, b"\x01")
    missing.ClearField("action")
    with pytest.raises(grpc.RpcError) as info:
        _w(controller, MODIFY, direct_meter_entry=p4runtime_pb2.DirectMeterEntry(table_entry=missing, config=update.config))
    assert rt.batch_errors(info.value)[0][0] == grpc.StatusCode.NOT_FOUND


def test_parser_value_set_steers_custom_ethertypes(controller, switch, rt):
    vs_id = ids.hashed_id(ids.VALUE_SET, "MyParser.custom_ethertypes")
    entry = p4runtime_pb2.ValueSetEntry(value_set_id=vs_id)
    entry.members.add().match.add(field_id=1).exact.value = b"\x88\xb6"
    _w(controller, MODIFY, value_set_entry=entry)
    frame = _frame(ether_type=0x88B6)
    switch.device.receive(1, frame)
    assert switch.ports[4].get() == frame
    assert controller.read(Entity(value_set_entry=p4runtime_pb2.ValueSetEntry()))[0].value_set_entry == entry
    too_many = p4runtime_pb2.ValueSetEntry(value_set_id=vs_id)
    for etype in range(5):
        too_many.members.add().match.add(field_id=1).exact.value = bytes([0x90, etype])
    with pytest.raises(grpc.RpcError) as info:
        _w(controller, MODIFY, value_set_entry=too_many)
    assert rt.batch_errors(info.value)[0][0] == grpc.StatusCode.RESOURCE_EXHAUSTED
    with pytest.raises(grpc.RpcError) as info:
        _w(controller, INSERT, value_set_entry=entry)
    assert rt.batch_errors(info.value)[0][0] == grpc.StatusCode.INVALID_ARGUMENT


def test_digest_list_flushed_by_timeout(controller, switch):
    entry = p4runtime_pb2.DigestEntry(digest_id=ids.hashed_id(ids.DIGEST, "learn_t"))
    entry.config.max_list_size = 100
    entry.config.max_timeout_ns = 1000  # 1 us of fabric time: due at the server's next tick
    _w(controller, INSERT, digest_entry=entry)
    for port in (1, 2):
        switch.device.receive(port, _frame(ether_type=0x9000))
    # far below max_list_size: only the timeout sends them (in one list, or two if a tick
    # fell between the packets)
    ports = []
    while len(ports) < 2:
        ports += [d.struct.members[1].bitstring for d in controller.next("digest").digest.data]
    assert ports == [b"\x01", b"\x02"]


def _action_set(*port_weights):
    action_set = p4runtime_pb2.ActionProfileActionSet()
    for port, weight in port_weights:
        item = action_set.action_profile_actions.add(weight=weight)
        item.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.set_port")
        item.action.params.add(param_id=1, value=bytes([port]))
    return action_set


def test_one_shot_action_sets(controller, switch, rt):
    entry = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.ecmp"))
    entry.match.add(field_id=1).exact.value = bytes([10, 7, 7, 7])
    entry.action.action_profile_action_set.CopyFrom(_action_set((2, 1), (3, 2)))
    _w(controller, INSERT, table_entry=entry)
    switch.device.receive(1, _frame(ip_dst="10.7.7.7"))
    deadline = time.monotonic() + 5
    while all(switch.ports[p].frames.empty() for p in (2, 3)) and time.monotonic() < deadline:
        time.sleep(0.005)
    assert sorted(switch.ports[p].frames.qsize() for p in (2, 3)) == [0, 1]

    read = controller.read(Entity(table_entry=p4runtime_pb2.TableEntry(table_id=entry.table_id)))
    assert read[0].table_entry.action == entry.action  # the set comes back as written
    # the server's own members and groups stay out of sight
    assert controller.read(Entity(action_profile_member=p4runtime_pb2.ActionProfileMember())) == []
    assert controller.read(Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup())) == []

    entry.action.action_profile_action_set.CopyFrom(_action_set((4, 1)))
    _w(controller, MODIFY, table_entry=entry)
    profile = switch.device.program.action_profiles["MyIngress.ecmp_selector"]
    assert len(profile.members) == 1 and len(profile.groups) == 1
    bad = p4runtime_pb2.TableEntry()
    bad.CopyFrom(entry)
    bad.action.action_profile_action_set.CopyFrom(_action_set((1, 0)))
    with pytest.raises(grpc.RpcError) as info:
        _w(controller, MODIFY, table_entry=bad)
    assert rt.batch_errors(info.value)[0][0] == grpc.StatusCode.INVALID_ARGUMENT
    assert len(profile.members) == 1 and len(profile.groups) == 1  # nothing half-made left behind
    _w(controller, DELETE, table_entry=entry)
    assert profile.members == {} and profile.groups == {}


def test_table_entry_metadata_is_given_back_on_read(controller):
    entry = _l2(0x0D, "MyIngress.l2_forward", 1, b"\x02")
    entry.metadata = b"\x00cookie-1"
    _w(controller, INSERT, table_entry=entry)
    table = p4runtime_pb2.TableEntry(table_id=entry.table_id)
    assert [e.table_entry.metadata for e in controller.read(Entity(table_entry=table))] == [b"\x00cookie-1"]
    entry.metadata = b"cookie-2"
    _w(controller, MODIFY, table_entry=entry)
    assert [e.table_entry.metadata for e in controller.read(Entity(table_entry=table))] == [b"cookie-2"]


def test_multicast_group_metadata_is_given_back_on_read(controller):
    group = p4runtime_pb2.PacketReplicationEngineEntry()
    group.multicast_group_entry.multicast_group_id = 9
    group.multicast_group_entry.replicas.add(egress_port=2, instance=1)
    group.multicast_group_entry.metadata = b"rack-7"
    _w(controller, INSERT, packet_replication_engine_entry=group)
    read = controller.read(Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry()))
    assert read[0].packet_replication_engine_entry.multicast_group_entry.metadata == b"rack-7"
