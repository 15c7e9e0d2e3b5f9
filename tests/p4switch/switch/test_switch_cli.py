"""Runtime CLI: simple_switch_CLI's command words over our switch's Thrift server, and the
p4switch-cli tool."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from lab.basic_program import routed, udp_frame
from p4rt.runtime_cli import CommandError


@pytest.fixture()
def cli(make_switch, cli_to):
    device, _ = make_switch(None, {1: "veth-a", 2: "veth-b"}, priority_queues=4, cpu_port=255)
    client, server = cli_to(device)
    return device, client, server


def test_queue_words_change_the_traffic_manager(cli) -> None:
    device, client, _ = cli
    assert client.run("set_queue_rate 1000") == ""
    client.run("set_queue_rate 50 2 3")
    client.run("set_queue_depth 16 1")
    client.run("set_queue_depth 8 2 0")
    tm = device.tm
    assert [q.rate_pps for q in tm.port(1).queues] == [1000, 1000, 1000, 1000]
    assert [q.rate_pps for q in tm.port(2).queues] == [1000, 1000, 1000, 50]
    assert [q.capacity for q in tm.port(1).queues] == [16] * 4
    assert [q.capacity for q in tm.port(2).queues] == [8, 64, 64, 64]
    assert tm.port(7).queues[0].rate_pps == 1000  # the all-ports setting also covers later ports
    stats = client.run("queue_stats 2")
    assert "2 3 0 64 50 0 0 0 0 0" in stats.splitlines()


def test_link_port_rate_and_pfc_words(cli) -> None:
    device, client, _ = cli
    client.run("set_link 1 rate=1e9 delay=5 loss=0.25")
    assert device.tm.port(1).rate_bps == 1e9
    assert device.links[1].delay_ns == 5000 and device.links[1].loss == 0.25
    client.run("set_port_rate 2 25000000000")
    assert device.tm.port(2).rate_bps == 25e9
    client.run("pfc_watchdog 1 3 detect=100 restore=400 action=forward")
    wd = device.tm.port(1).pfc.classes[3].watchdog
    assert wd is not None and (wd.detection_ns, wd.restoration_ns, wd.action) == (100_000_000, 400_000_000, "forward")
    lines = client.run("pfc_stats 1").splitlines()
    assert lines[0].startswith("port class frames_rx paused_us")
    assert "1 3 0 0.000 0 0 0 0 forward/100ms/400ms" in lines
    assert "1 2 0 0.000 0 0 0 0 off" in lines
    client.run("pfc_watchdog all")
    assert all(c.watchdog is not None and c.watchdog.action == "drop" for c in device.tm.port(2).pfc.classes)
    client.run("pfc_watchdog 2 off")
    assert all(c.watchdog is None for c in device.tm.port(2).pfc.classes)


def test_show_ports_lists_interfaces_and_cpu_port(cli) -> None:
    _, client, _ = cli
    out = client.run("show_ports")
    assert "veth-a" in out and "veth-b" in out and "(cpu port)" in out


@pytest.mark.parametrize("line, message", [
    ("frobnicate 1", "unknown command 'frobnicate'"),
    ("set_queue_rate", "usage: set_queue_rate"),
    ("set_queue_rate fast", "invalid rate: 'fast'"),
    ("set_queue_rate 10 1 9", "priority 9 out of range"),
    ("set_link 1 jitter=3", "expected one of delay=, loss=, rate="),
    ("set_link 1 loss=2", "probability"),
    ("pfc_watchdog 1 action=explode", "watchdog action"),
    ("register_read MyIngress.r 0", "no P4 program loaded"),
    ("mc_node_associate 1 0", "INVALID_L1_HANDLE: no multicast node with handle 0"),
])
def test_bad_commands_get_clear_errors_and_change_nothing(cli, line: str, message: str) -> None:
    device, client, _ = cli
    ok, text = client.call(line)
    assert not ok and message in text
    assert all(q.rate_pps is None for q in device.tm.port(1).queues)
    with pytest.raises(CommandError):
        client.run(line)


def test_p4switch_cli_reads_commands_from_a_pipe(cli) -> None:
    device, _, server = cli
    tool = Path(sys.executable).parent / "p4switch-cli"
    res = subprocess.run([str(tool), "--thrift-port", str(server.port)], input="set_queue_rate 123 1\nqueue_stats 1\n",
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    assert device.tm.port(1).queues[0].rate_pps == 123
    assert "1 0 0 64 123 " in res.stdout
    res = subprocess.run([str(tool), "--thrift-port", str(server.port)], input="set_queue_depth -3\n",
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 1 and "must not be negative" in res.stderr


def test_p4switch_cli_reports_an_unreachable_switch() -> None:
    tool = Path(sys.executable).parent / "p4switch-cli"
    res = subprocess.run([str(tool), "--thrift-port", "1", "show_ports"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 1 and "Could not connect" in res.stderr


def test_junk_on_the_runtime_port_closes_that_connection_and_the_server_keeps_serving(cli) -> None:

    _, client, server = cli
    with socket.create_connection(("127.0.0.1", server.port)) as raw:
        raw.sendall(b"\xff\xfe\xfd\n" + b"x" * 70000 + b"\nshow_ports\n")  # not a Thrift message
        raw.settimeout(30)
        assert raw.recv(65536) == b""  # closed without a reply, as Thrift servers do
    assert "veth-a" in client.run("show_ports")


def test_table_words_program_the_switch_like_simple_switch_cli(basic_program, make_switch, cli_to) -> None:
    basic_program.tables["BasicIngress.ipv4_lpm"].clear()
    device, ports = make_switch(basic_program, cpu_port=255)
    client, _ = cli_to(device)
    out = client.run("table_add ipv4_lpm ipv4_forward 10.0.3.0/24 => 00:00:00:00:03:03 3")
    handle = int(out.rsplit(" ", 1)[1])
    frame = bytes(udp_frame("10.0.3.1"))
    device.receive(1, frame)
    device.poll()
    assert ports[3].sent == [bytes(routed(frame, "00:00:00:00:03:03"))]
    assert "LPM       a000300/24" in client.run("table_dump BasicIngress.ipv4_lpm")
    ok, text = client.call("table_add ipv4_lpm ipv4_forward 10.0.3.0/24 => 1")
    assert not ok and "takes 2 parameter(s)" in text
    ok, text = client.call("table_add ipv4_lpm no_such_action 10.0.3.0/24 =>")
    assert not ok and "unknown" in text
    client.run(f"table_delete ipv4_lpm {handle}")
    client.run("table_set_default BasicIngress.ipv4_lpm ipv4_forward 0x000000000202 2")
    device.receive(1, frame)
    device.poll()
    assert ports[2].sent == [bytes(routed(frame, "00:00:00:00:02:02"))]  # now the default action
    assert "Dumping entry" not in client.run("table_dump ipv4_lpm")


REPLICATION_INGRESS = """
    apply {
        if (hdr.eth.type == 0x0800) {
            sm.mcast_grp = 1;
        } else {
            sm.egress_spec = 1;
            clone(CloneType.I2E, 5);
        }
    }"""
# Egress shows the replica: src MAC = egress_rid, dst MAC = instance_type.
REPLICATION_EGRESS = "apply { hdr.eth.src = (bit<48>) sm.egress_rid; hdr.eth.dst = (bit<48>) sm.instance_type; }"


def test_multicast_and_mirroring_words_drive_replication(eth_program, make_switch, cli_to) -> None:
    device, ports = make_switch(eth_program(REPLICATION_INGRESS, REPLICATION_EGRESS))
    client, _ = cli_to(device)
    client.run("mc_mgrp_create 1")
    assert client.run("mc_node_create 7 2 3").endswith("handle 0")
    client.run("mc_node_associate 1 0")
    client.run("mirroring_add 5 3")
    assert "(rid=7) port 3" in client.run("mc_dump")
    device.receive(1, bytes(12) + b"\x08\x00" + b"payload")
    device.poll()
    # one copy per replica, each with its rid; instance type 5 = replication
    assert ports[2].sent == ports[3].sent == [bytes(5) + b"\x05" + bytes(5) + b"\x07" + b"\x08\x00payload"]
    device.receive(1, bytes(12) + b"\x08\x01" + b"mirror me")
    device.poll()
    assert ports[1].sent == [bytes(12) + b"\x08\x01mirror me"]  # the original, instance type 0
    assert ports[3].sent[1] == bytes(5) + b"\x01" + bytes(6) + b"\x08\x01mirror me"  # the I2E clone
    client.run("mc_node_dissociate 1 0")
    client.run("mirroring_delete 5")
    device.receive(1, bytes(12) + b"\x08\x00" + b"payload")
    device.poll()
    assert len(ports[2].sent) == 1 and len(ports[3].sent) == 2  # the group is empty now
    device.set_program(eth_program(REPLICATION_INGRESS, REPLICATION_EGRESS))
    ok, text = client.call("mc_node_associate 1 0")  # handles belonged to the old pipeline
    assert not ok and "no multicast node with handle 0" in text


ACL_INGRESS = """
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table acl { key = { hdr.eth.type: ternary; } actions = { fwd; drop; } default_action = drop(); }
    apply { acl.apply(); }"""


def test_table_add_on_a_ternary_table_takes_a_priority(eth_program, make_switch, cli_to) -> None:
    device, ports = make_switch(eth_program(ACL_INGRESS))
    client, _ = cli_to(device)
    ok, text = client.call("table_add acl fwd 0x0800&&&0xffff => 2")
    assert not ok and "needs a priority" in text
    # BMv2 runtime-CLI order: the smaller priority number wins
    client.run("table_add acl fwd 0x0800&&&0xffff => 2 5")
    client.run("table_add acl fwd 0&&&0 => 3 10")
    for ethertype in (b"\x08\x00", b"\x86\xdd"):
        device.receive(1, bytes(12) + ethertype + b"data")
    device.poll()
    assert ports[2].sent == [bytes(12) + b"\x08\x00data"]  # priority 5 beats 10
    assert ports[3].sent == [bytes(12) + b"\x86\xdddata"]
    assert "TERNARY   800 &&& ffff" in client.run("table_dump acl") and "Priority: 5" in client.run("table_dump acl")
