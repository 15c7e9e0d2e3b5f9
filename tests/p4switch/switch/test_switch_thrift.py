"""Our switch's Thrift runtime server: BMv2's calls (as simple_switch_CLI and PTF make them)
change the device, errors come back as BMv2's exceptions and codes, and a client built only
from Apache Thrift's own library can call it."""

from __future__ import annotations

from typing import Any

import pytest
from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport

from p4rt.bmv2_runtime import Bmv2Error, Bmv2Runtime
from p4rt.runtime_cli import CliClient
from p4rt.thrift import ApplicationError
from p4switch.switch.thrift_server import ThriftServer

# Counts every frame per ingress port; remembers the last EtherType per port; I2E-clones
# EtherType 0x0801 to session 5; multicasts 0x0800 to group 1, else forwards to port 1.
STATEFUL_INGRESS = """
    register<bit<16>>(8) last_type;
    counter(8, CounterType.packets_and_bytes) rx;
    apply {
        rx.count((bit<32>) sm.ingress_port);
        last_type.write((bit<32>) sm.ingress_port, hdr.eth.type);
        if (hdr.eth.type == 0x0800) {
            sm.mcast_grp = 1;
        } else {
            sm.egress_spec = 1;
            if (hdr.eth.type == 0x0801) { clone(CloneType.I2E, 5); }
        }
    }"""


@pytest.fixture()
def switch(eth_program, make_switch):
    device, ports = make_switch(eth_program(STATEFUL_INGRESS), priority_queues=4)
    server = ThriftServer(device, port=0)
    client = Bmv2Runtime(server.port)
    yield device, ports, client, server
    client.close()
    server.close()


def send(device, port: int, ethertype: bytes, payload: bytes = b"data") -> None:
    device.receive(port, bytes(12) + ethertype + payload)
    device.poll()


def test_registers_read_write_and_reset_reach_the_program(switch) -> None:
    device, _, rt, _ = switch
    send(device, 3, b"\x86\xdd")
    assert rt.register_read("I.last_type", 3) == 0x86DD
    assert rt.register_read("last_type", 3) == 0x86DD  # a unique suffix names it, as on our CLI
    rt.register_write("I.last_type", 7, 0xBEEF)
    reg = device.program.registers["I.last_type"]
    assert reg.cells[7] == 0xBEEF
    assert rt.register_read_all("I.last_type") == [0, 0, 0, 0x86DD, 0, 0, 0, 0xBEEF]
    rt.call("standard", "bm_register_write_range", register_array_name="I.last_type", start_index=0,
            end_index=2, value=9)
    assert list(reg.cells[:4]) == [9, 9, 9, 0x86DD]
    rt.register_reset("I.last_type")
    assert list(reg.cells) == [0] * 8


@pytest.mark.parametrize("call, exception, code", [
    (lambda rt: rt.register_read("I.nope", 0), "InvalidRegisterOperation", "INVALID_REGISTER_NAME"),
    (lambda rt: rt.register_read("I.last_type", 8), "InvalidRegisterOperation", "INVALID_INDEX"),
    (lambda rt: rt.register_write("I.last_type", 0, 1 << 16), "InvalidRegisterOperation", "ERROR"),
    (lambda rt: rt.call("standard", "bm_register_write_range", register_array_name="I.last_type",
                        start_index=6, end_index=9, value=1), "InvalidRegisterOperation", "INVALID_INDEX"),
    (lambda rt: rt.counter_read("I.rx", -1), "InvalidCounterOperation", "INVALID_INDEX"),
    (lambda rt: rt.counter_reset("rx_nope"), "InvalidCounterOperation", "INVALID_COUNTER_NAME"),
    (lambda rt: rt.table_num_entries("I.nope"), "InvalidTableOperation", "INVALID_TABLE_NAME"),
    (lambda rt: rt.mirroring_delete(77), "InvalidMirroringOperation", "SESSION_NOT_FOUND"),
    (lambda rt: rt.mc_node_associate(4, 0), "InvalidMcOperation", "INVALID_L1_HANDLE"),  # BMv2 checks the node first
    (lambda rt: rt.mc_node_associate(4, rt.mc_node_create(1, [1])), "InvalidMcOperation", "INVALID_MGRP_HANDLE"),
    (lambda rt: rt.mc_node_destroy(12), "InvalidMcOperation", "INVALID_L1_HANDLE"),
])
def test_errors_come_back_as_bmv2s_exception_and_code_and_change_nothing(switch, call, exception, code) -> None:
    device, _, rt, _ = switch
    with pytest.raises(Bmv2Error) as e:
        call(rt)
    assert (e.value.exception, e.value.code_name) == (exception, code)
    assert e.value.message  # our reason rides along as field 100
    assert list(device.program.registers["I.last_type"].cells) == [0] * 8
    assert rt.register_read("I.last_type", 0) == 0  # the connection is still usable


def test_counters_read_and_reset(switch) -> None:
    device, _, rt, _ = switch
    for _ in range(3):
        send(device, 2, b"\x86\xdd", b"x" * 46)
    assert rt.counter_read("I.rx", 2) == (3, 3 * 60)
    rt.call("standard", "bm_counter_write", counter_name="I.rx", index=4, value={"packets": 5, "bytes": 6})
    assert rt.counter_read("I.rx", 4) == (5, 6)
    rt.counter_reset("I.rx")
    assert rt.counter_read("I.rx", 2) == (0, 0) == rt.counter_read("I.rx", 4)


def test_queue_rates_and_depths_change_the_traffic_manager(switch) -> None:
    device, _, rt, _ = switch
    tm = device.tm
    rt.set_queue_rate(1000)
    rt.set_queue_rate(50, 2)
    rt.set_queue_rate(7, 3, 1)
    rt.set_queue_depth(16)
    rt.set_queue_depth(8, 2)
    rt.set_queue_depth(3, 3, 0)
    assert [q.rate_pps for q in tm.port(1).queues] == [1000] * 4
    assert [q.rate_pps for q in tm.port(2).queues] == [50] * 4
    assert [q.rate_pps for q in tm.port(3).queues] == [1000, 7, 1000, 1000]
    assert [q.capacity for q in tm.port(1).queues] == [16] * 4
    assert [q.capacity for q in tm.port(2).queues] == [8] * 4
    assert [q.capacity for q in tm.port(3).queues] == [3, 16, 16, 16]
    assert tm.port(9).queues[0].rate_pps == 1000  # the all-ports settings cover later ports too
    with pytest.raises(ApplicationError, match="priority 4 out of range"):
        rt.set_queue_rate(1, 2, 4)
    with pytest.raises(ApplicationError, match="must not be negative"):
        rt.set_queue_depth(-1, 2)
    assert [q.capacity for q in tm.port(2).queues] == [8] * 4


def test_mirroring_and_multicast_calls_drive_replication(switch) -> None:
    device, ports, rt, _ = switch
    rt.mirroring_add(5, 3)
    assert rt.mirroring_get(5) == {"port": 3}
    assert rt.mc_mgrp_create(1) == 1  # BMv2: the group handle is the group id
    node = rt.mc_node_create(7, [2, 3])
    rt.mc_node_associate(1, node)
    assert sorted((r.port, r.instance) for r in device.program.pre.mc_groups[1]) == [(2, 7), (3, 7)]
    send(device, 1, b"\x08\x00")
    assert len(ports[2].sent) == len(ports[3].sent) == 1
    send(device, 2, b"\x08\x01")
    assert ports[1].sent == [bytes(12) + b"\x08\x01data"] and ports[3].sent[1] == ports[1].sent[0]  # the clone
    rt.mirroring_delete(5)
    rt.mc_node_dissociate(1, node)
    rt.mc_mgrp_destroy(99)  # an unknown group: no error, as on BMv2
    assert device.program.pre.clone_sessions == {} and device.program.pre.mc_groups[1] == []
    with pytest.raises(ApplicationError, match="multicast group"):
        rt.call("simple_switch", "mirroring_session_add", mirror_id=6, config={"mgid": 1})


def test_table_entry_count_clear_ports_and_time(eth_program, make_switch) -> None:
    device, _ = make_switch(eth_program("""
        action fwd(bit<9> port) { sm.egress_spec = port; }
        table t { key = { hdr.eth.type: exact; } actions = { fwd; } }
        apply { t.apply(); }"""), {1: "veth-x"}, cpu_port=255)
    server = ThriftServer(device, port=0)
    try:
        with Bmv2Runtime(server.port) as rt:
            rt.run_command("table_add t fwd 0x0800 => 1")
            rt.run_command("table_add t fwd 0x0806 => 1")
            assert rt.table_num_entries("I.t") == 2
            rt.table_clear("t")
            assert rt.table_num_entries("t") == 0 and device.program.tables["I.t"].entries() == []
            ports = rt.show_ports()
            assert [(p["port_num"], p["iface_name"]) for p in ports] == [(1, "veth-x"), (255, "(cpu port)")]
            assert set(ports[0]["extra"]) == {"rx", "rx_errors", "rx_kernel_drops", "tx", "tx_kernel_drops"}
            device.clock.advance(2_500_000)
            assert rt.time_elapsed_us() == device.clock.now_ns() // 1000
            with pytest.raises(Bmv2Error) as e:
                rt.run_command("table_add t fwd 0x0800 => 1 2 3")
            assert e.value.exception == "InvalidCommand" and "takes 1 parameter" in e.value.message
    finally:
        server.close()


def lib_client(port: int, service: str) -> tuple[TTransport.TBufferedTransport, Any]:
    sock = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
    sock.open()
    return sock, TMultiplexedProtocol.TMultiplexedProtocol(TBinaryProtocol.TBinaryProtocol(sock), service)


def lib_call(proto, name: str, args: list[tuple[int, int, Any]]) -> None:
    """A call written field by field with the library's protocol (no generated code)."""
    writers = {TType.I32: proto.writeI32, TType.I64: proto.writeI64, TType.STRING: proto.writeString}
    proto.writeMessageBegin(name, TMessageType.CALL, 1)
    proto.writeStructBegin(f"{name}_args")
    for fid, ftype, value in args:
        proto.writeFieldBegin("", ftype, fid)
        writers[ftype](value)
        proto.writeFieldEnd()
    proto.writeFieldStop()
    proto.writeStructEnd()
    proto.writeMessageEnd()
    proto.trans.flush()


def lib_result(proto) -> tuple[int, dict[int, Any]]:
    """(message type, {field id: value}) of the reply; a struct field as {id: i32 value}."""
    _, mtype, _ = proto.readMessageBegin()
    if mtype == TMessageType.EXCEPTION:
        x = TApplicationException()
        x.read(proto)
        return mtype, {"type": x.type, "message": x.message}
    out: dict[int, Any] = {}
    proto.readStructBegin()
    while True:
        _, ftype, fid = proto.readFieldBegin()
        if ftype == TType.STOP:
            break
        if ftype == TType.I64:
            out[fid] = proto.readI64()
        elif ftype == TType.STRUCT:
            inner = {}
            proto.readStructBegin()
            while True:
                _, itype, iid = proto.readFieldBegin()
                if itype == TType.STOP:
                    break
                inner[iid] = proto.readI32() if itype == TType.I32 else proto.readString()
            out[fid] = inner
        else:
            proto.skip(ftype)
    return mtype, out


def test_a_client_made_of_apache_thrifts_library_calls_our_server(switch) -> None:
    device, _, _, server = switch
    device.program.registers["I.last_type"].cells[2] = 0x88CC
    trans, proto = lib_client(server.port, "standard")
    try:
        lib_call(proto, "bm_register_read", [(1, TType.I32, 0), (2, TType.STRING, "I.last_type"),
                                             (3, TType.I32, 2)])
        assert lib_result(proto) == (TMessageType.REPLY, {0: 0x88CC})
        lib_call(proto, "bm_register_read", [(1, TType.I32, 0), (2, TType.STRING, "nope"), (3, TType.I32, 0)])
        mtype, fields = lib_result(proto)
        assert mtype == TMessageType.REPLY and fields[1][1] == 1  # ouch: InvalidRegisterOperation INVALID_REGISTER_NAME
        assert "'nope' is unknown" in fields[1][100]  # our reason, in a field BMv2's IDL does not have
        lib_call(proto, "bm_frobnicate", [])
        mtype, x = lib_result(proto)
        assert mtype == TMessageType.EXCEPTION and x["type"] == TApplicationException.UNKNOWN_METHOD
    finally:
        trans.close()
    trans, proto = lib_client(server.port, "simple_switch")
    try:
        lib_call(proto, "set_egress_queue_rate", [(1, TType.I32, 2), (2, TType.I64, 321)])
        assert lib_result(proto) == (TMessageType.REPLY, {})  # i32 0 (skipped by lib_result)
        assert device.tm.port(2).queues[0].rate_pps == 321
    finally:
        trans.close()


@pytest.mark.parametrize("service, method, kind, message, closed", [
    ("nope", "x", TApplicationException.PROTOCOL_ERROR,
     "TMultiplexedProcessor: Unknown service: nope. Did you forget to call registerProcessor()?", True),
    (None, "x", TApplicationException.PROTOCOL_ERROR,
     "TMultiplexedProcessor: Non-multiplexed client request dropped. Did you forget to call defaultProcessor()?", True),
    ("simple_switch", "get_time_since_epoch_us", TApplicationException.UNKNOWN_METHOD,
     "Invalid method name: 'get_time_since_epoch_us'", False),
])
def test_unknown_services_and_methods_are_answered_as_bmv2_does(switch, service, method, kind, message, closed) -> None:
    """What BMv2 (Thrift's C++ multiplexed processor) answers, seen on simple_switch_grpc 1.15:
    an unknown service or a call without one is a protocol error and the connection is closed;
    an unknown method of a known service keeps the connection."""
    device, _, rt, server = switch
    sock = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", server.port))
    sock.open()
    try:
        proto = TBinaryProtocol.TBinaryProtocol(sock)
        if service is not None:
            proto = TMultiplexedProtocol.TMultiplexedProtocol(proto, service)
        lib_call(proto, method, [(1, TType.I32, 0)])
        mtype, x = lib_result(proto)
        assert mtype == TMessageType.EXCEPTION and (x["type"], x["message"]) == (kind, message)
        lib_call(TMultiplexedProtocol.TMultiplexedProtocol(TBinaryProtocol.TBinaryProtocol(sock), "standard"),
                 "bm_register_read", [(1, TType.I32, 0), (2, TType.STRING, "I.last_type"), (3, TType.I32, 0)])
        if closed:
            with pytest.raises(TTransport.TTransportException):
                lib_result(proto)
        else:
            assert lib_result(proto) == (TMessageType.REPLY, {0: 0})
    finally:
        sock.close()
    assert rt.time_elapsed_us() >= 0  # the server still serves


def test_clients_carry_on_after_a_switch_without_our_service_hangs_up(switch) -> None:
    """BMv2 has no ``p4switch`` service and closes the connection on a call to it; the client
    reconnects, and p4switch-cli says what is missing."""
    device, _, _, server = switch
    server._server.api.handlers.pop("p4switch")  # this server now answers as BMv2 does
    with Bmv2Runtime(server.port) as rt:
        with pytest.raises(ApplicationError, match="Unknown service: p4switch"):
            rt.run_command("help")
        rt.set_queue_rate(77, 1)
    cli = CliClient(server.port)
    try:
        ok, text = cli.call("switch_stats")
        assert not ok and "has no p4switch service" in text
        cli.run("set_queue_depth 9 1")
    finally:
        cli.close()
    assert device.tm.port(1).queues[0].rate_pps == 77 and device.tm.port(1).queues[0].capacity == 9


def test_a_client_kept_across_a_switch_restart_reads_the_new_switch(eth_program, make_switch) -> None:
    """A switch restarted on the same runtime port (a drill's kill -9, the supervisor's new
    process): the client's call while it is gone fails, the next one, after the switch is
    back, reaches the new switch over a new connection and returns its live values."""
    old, _ = make_switch(eth_program(STATEFUL_INGRESS))
    server = ThriftServer(old, port=0)
    port = server.port
    cli = CliClient(port, timeout=5)
    try:
        send(old, 3, b"\x86\xdd")
        assert cli.run("register_read I.last_type 3").endswith("= 34525")
        server.close()  # the process died: its connections with it
        with pytest.raises(OSError):
            cli.run("register_read I.last_type 3")
        with pytest.raises(OSError):  # nothing listens yet: refused, and tried again next time
            cli.run("register_read I.last_type 3")
        new, _ = make_switch(eth_program(STATEFUL_INGRESS))
        server = ThriftServer(new, port=port)
        assert cli.run("register_read I.last_type 3").endswith("= 0")  # the new switch's state, not the old one's
        send(new, 3, b"\x08\x06")
        assert cli.run("register_read I.last_type 3").endswith("= 2054")
        cli.run("register_write I.last_type 5 7")
        assert new.program.registers["I.last_type"].cells[5] == 7
    finally:
        cli.close()
        server.close()
