"""The p4switch process end to end: real veths, P4Runtime, the runtime CLI, pcap files,
robustness against junk frames, and a clean SIGTERM shutdown."""

from __future__ import annotations

import random
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether

from lab.basic_program import BASIC_P4, CPU_PORT, FORWARD, TABLE, routed, udp_frame
from lab.p4rt_client import P4RuntimeClient
from lab.targets import compile_program, free_tcp_port, start_switch, switch_command
from lab.veth import VethPairs
from netbase.packet_socket import PacketSocketPort
from p4rt.runtime_cli import CliClient
from p4switch.switch.pcap import read_pcap
from tests.ports import receive

pytestmark = pytest.mark.net  # switch processes on veths, as root

H1_MAC, H2_MAC = "00:00:00:00:01:01", "00:00:00:00:02:02"
JUMBO_MTU = 9100


def until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Until ``condition()`` holds; fails naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.01)


def drain(cli: CliClient, ports: list[PacketSocketPort]) -> None:
    """Forget frames left over from an earlier test (the switch is shared by the module): once
    the switch has handled every frame it received, what it sent is in the host sockets."""
    until(lambda: accounted(s := stats(cli)) >= s.get("rx", 0), "the switch handled every frame it received")
    for p in ports:
        while p.recv_frames(64):
            pass


def wait_for(port: PacketSocketPort, frame: bytes, timeout: float = 10.0) -> bool:
    """Whether ``frame`` arrives on ``port`` within ``timeout`` seconds (other frames skipped)."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if select.select([port], [], [], left)[0] and frame in port.recv_frames(64):
            return True
    return False


def stats(cli: CliClient) -> dict[str, int]:
    return {k: int(v) for k, v in (line.split("=") for line in cli.run("switch_stats").splitlines() if line)}


PIPELINE_DROPS = ("dropped_ingress", "dropped_egress", "dropped_assert", "dropped_internal_error",
                  "dropped_unknown_mc_group", "dropped_pass_limit")


def accounted(d: dict[str, int]) -> int:
    """Where received frames went: consumed by the MAC, dropped (pipeline, queues), sent."""
    return (d.get("rx_mac_control", 0) + sum(d.get(f"pipeline.{k}", 0) for k in PIPELINE_DROPS)
            + d.get("drop_tm", 0) + d.get("tx", 0) + d.get("tx_errors", 0) + d.get("packet_in", 0)
            + d.get("drop_no_port", 0) + d.get("drop_watchdog_flush", 0))


def settled_deltas(cli: CliClient, before: dict[str, int], expect_rx: int, timeout: float = 10.0) -> dict[str, int]:
    """Counter changes since ``before`` once the switch has received and handled ``expect_rx``
    frames (or the timeout passed)."""
    deadline = time.monotonic() + timeout
    while True:
        after = stats(cli)
        d = {k: after.get(k, 0) - before.get(k, 0) for k in set(after) | set(before)}
        if (d.get("rx", 0) >= expect_rx and accounted(d) >= d["rx"]) or time.monotonic() > deadline:
            return d
        time.sleep(0.05)


@pytest.fixture(scope="module")
def switch(tmp_path_factory):
    work = tmp_path_factory.mktemp("switch")
    veths = VethPairs(2, prefix="st").create()
    hosts: list[PacketSocketPort] = []
    proc = None
    try:
        # port 1 takes jumbo frames, port 2 only standard ones: oversized frames can arrive on 1
        # and must then fail to leave on 2 without harm.
        for name in (veths.switch_side[0], veths.host_side[0]):
            subprocess.run(["ip", "link", "set", name, "mtu", str(JUMBO_MTU)], check=True)
        grpc_addr, thrift = f"127.0.0.1:{free_tcp_port()}", free_tcp_port()
        cmd = switch_command("ours", {1: veths.switch_side[0], 2: veths.switch_side[1]}, 1, grpc_addr, thrift,
                             cpu_port=CPU_PORT, pcap_dir=str(work / "pcap"), program=str(BASIC_P4))
        proc = start_switch(cmd, grpc_addr, thrift, work / "switch.log")
        proc.wait_ready()
        client = P4RuntimeClient(grpc_addr, device_id=1)
        client.fetch_p4info()  # started with a program: its P4Info comes from the switch
        for prefix, mac, port in (("10.0.1.0/24", H1_MAC, 1), ("10.0.2.0/24", H2_MAC, 2)):
            client.insert(client.table_entry(TABLE, {"hdr.ipv4.dstAddr": prefix}, FORWARD, {"dstAddr": mac, "port": port}))
        hosts = [PacketSocketPort(veths.host_side[0]), PacketSocketPort(veths.host_side[1])]
        cli = CliClient(thrift)
        yield proc, client, cli, hosts, veths, work
        cli.close()
        client.close()
    finally:
        for h in hosts:
            h.close()
        if proc is not None:
            proc.stop()
        veths.delete()


def test_forwards_between_veths_with_exact_bytes(switch) -> None:
    _, _, cli, hosts, _, _ = switch
    drain(cli, hosts)
    frames = [udp_frame(f"10.0.2.{i}", payload=bytes([i]) * 30) for i in range(1, 21)]
    for f in frames:
        assert hosts[0].send(bytes(f))
    got = receive(hosts[1], 20)
    assert got == [bytes(routed(f, H2_MAC)) for f in frames]
    back = udp_frame("10.0.1.9")
    hosts[1].send(bytes(back))
    assert receive(hosts[0], 1) == [bytes(routed(back, H1_MAC))]
    ports = {p["port_num"]: p["extra"] for p in cli.runtime.show_ports()}  # BMv2's bm_dev_mgr_show_ports
    assert int(ports[1]["rx"]) >= 20 and int(ports[2]["tx"]) >= 20


def test_random_truncated_and_oversized_frames_leave_it_running_and_counted(switch) -> None:
    proc, _, cli, hosts, _, _ = switch
    drain(cli, hosts)
    rng = random.Random(7)
    before = stats(cli)
    valid = bytes(udp_frame("10.0.2.2"))
    sent = 0
    for host in hosts:
        junk = [rng.randbytes(rng.randint(14, 1500)) for _ in range(150)]
        junk += [valid[: rng.randint(14, len(valid) - 1)] for _ in range(50)]
        junk += [Ether(dst="00:00:00:00:aa:01", type=0x0800).build() + rng.randbytes(rng.randint(0, 40)) for _ in range(30)]
        junk += [bytes(udp_frame("10.0.2.2", payload=b"J" * 8000))] * 5  # oversized: routed to port 2, MTU 1500
        junk += [rng.randbytes(8500)] * 5
        for frame in junk:
            sent += host.send(frame)
    assert proc.proc.poll() is None
    hosts[0].send(valid)  # valid traffic still flows afterwards
    assert wait_for(hosts[1], bytes(routed(valid, H2_MAC)))
    d = settled_deltas(cli, before, sent + 1)
    kernel_lost = d["port1.rx_kernel_drops"] + d["port2.rx_kernel_drops"]
    assert d["rx"] + kernel_lost == sent + 1  # every frame reached the switch or is counted as lost in the kernel
    assert accounted(d) == d["rx"]
    assert d["tx_errors"] >= 5  # the oversized routed frames could not leave on the 1500-byte port
    assert d["port2.kernel_tx_too_big"] >= 5  # ... counted on the port by reason, not as sent
    assert d["port2.tx_kernel_drops"] + d["port1.tx_kernel_drops"] == d["tx_errors"]
    assert d["port1.tx"] + d["port2.tx"] == d["tx"]  # the ports' tx: only what the kernel took
    assert proc.proc.poll() is None


def test_pcap_files_hold_what_crossed_each_port(switch) -> None:
    _, _, cli, hosts, veths, work = switch
    drain(cli, hosts)
    frame = udp_frame("10.0.2.77", payload=b"pcap-check")
    hosts[0].send(bytes(frame))
    assert receive(hosts[1], 1) != []

    def captured(port_name: str, direction: str, wanted: bytes) -> bool:
        path = work / "pcap" / f"{port_name}_{direction}.pcap"
        return path.exists() and wanted in [f for _, f in read_pcap(path)]

    until(lambda: captured(veths.switch_side[0], "in", bytes(frame)), "the frame is in port 1's input pcap")
    until(lambda: captured(veths.switch_side[1], "out", bytes(routed(frame, H2_MAC))),
          "the routed frame is in port 2's output pcap")


def test_runtime_cli_register_and_counter_words_on_a_live_switch(switch) -> None:
    _, _, cli, hosts, _, _ = switch
    drain(cli, hosts)
    cli.run("register_write BasicEgress.enq_qdepth_seen 7 1234")
    assert cli.run("register_read BasicEgress.enq_qdepth_seen 7") == "BasicEgress.enq_qdepth_seen[7]= 1234"
    before = cli.run("counter_read BasicIngress.port_rx 2")
    hosts[1].send(bytes(udp_frame("10.0.1.5")))
    assert receive(hosts[0], 1) != []
    after = cli.run("counter_read BasicIngress.port_rx 2")

    def count(text: str) -> int:
        return int(text.split("packets=")[1].split(",")[0])

    assert count(after) == count(before) + 1
    dump = cli.run("table_dump BasicIngress.ipv4_lpm")
    assert dump.count("Dumping entry") == 2
    assert "LPM       a000200/24" in dump and "BasicIngress.ipv4_forward - dstAddr=202, port=2" in dump
    cli.run("mc_mgrp_create 5")
    handle = cli.run("mc_node_create 3 1 2").split("handle ")[1]
    cli.run(f"mc_node_associate 5 {handle}")
    assert "mgrp(5)" in cli.run("mc_dump") and "(rid=3) port 2" in cli.run("mc_dump")
    cli.run("mirroring_add 9 2")
    cli.run("mirroring_delete 9")


def test_starts_from_a_compiled_device_config_and_stops_cleanly_on_sigterm(tmp_path) -> None:
    compiled = compile_program("ours", BASIC_P4, tmp_path)
    grpc_addr, thrift = f"127.0.0.1:{free_tcp_port()}", free_tcp_port()
    with VethPairs(1, prefix="sq") as veths:
        cmd = switch_command("ours", {1: veths.switch_side[0]}, 3, grpc_addr, thrift,
                             program=str(compiled.device_config_path))
        proc = start_switch(cmd, grpc_addr, thrift, tmp_path / "log")
        try:
            proc.wait_ready()
            client = P4RuntimeClient(grpc_addr, device_id=3)
            tables = [t.preamble.name for t in client.fetch_p4info().info.tables]
            client.close()
        finally:
            rc = proc.stop()
    assert tables == [TABLE]
    assert rc == 0, proc.log_tail()


def test_bad_command_lines_are_refused_with_a_message(tmp_path) -> None:
    tool = str(Path(sys.executable).parent / "p4switch")
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <core.p4>\n#include <v1model.p4>\nheader h_t { bit<8> f; }\nstruct s_t { h_t h }\n")
    res = subprocess.run([tool, str(bad)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "bad.p4:4:" in res.stderr and "error" in res.stderr
    assert "Traceback" not in res.stderr
    res = subprocess.run([tool, "-i", "1@no-such-if0", "--no-p4"], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "no-such-if0" in res.stderr
    res = subprocess.run([tool, "-i", "veth1", "--no-p4"], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "PORT@IFNAME" in res.stderr
    res = subprocess.run([tool], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "--no-p4" in res.stderr
    res = subprocess.run([tool, "-i", "600@lo", "--no-p4"], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "from 0 to 510" in res.stderr
    res = subprocess.run([tool, "-i", "1@lo", "-i", "2@lo", "--no-p4"], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "interface lo is given twice" in res.stderr
    res = subprocess.run([tool, "--no-p4", "--priority-queues", "9"], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "priority queues must be 1..8" in res.stderr


def test_pfc_frame_on_the_wire_holds_a_queue_until_resume(switch) -> None:
    _, _, cli, hosts, _, _ = switch
    drain(cli, hosts)
    cli.run("set_port_rate 2 1000000")  # 1 Mb/s: 0xffff quanta last 33 s of fabric time
    try:
        def pfc(quanta: int) -> bytes:
            return bytes(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:00:02")
                         / MACControlClassBasedFlowControl(c0_enabled=1, c0_pause_time=quanta))

        hosts[1].send(pfc(0xFFFF))
        deadline = time.monotonic() + 10
        while "frames=1 " not in cli.run("pfc_stats 2") and time.monotonic() < deadline:
            time.sleep(0.01)  # until the switch's MAC has taken the pause
        frame = udp_frame("10.0.2.9", payload=b"held by PFC")
        hosts[0].send(bytes(frame))
        assert receive(hosts[1], 1, timeout=0.5) == []  # paused: the frame waits in queue 0
        assert "\n2 0 1 64 unlimited " in cli.run("queue_stats 2")  # port 2, queue 0: depth 1
        hosts[1].send(pfc(0))  # resume
        assert receive(hosts[1], 1, timeout=5) == [bytes(routed(frame, H2_MAC))]
        assert receive(hosts[0], 1, timeout=0.2) == []  # pause frames are consumed, never forwarded
    finally:
        cli.run("set_port_rate 2 0")


def test_an_interface_that_disappears_does_not_stop_the_switch(tmp_path) -> None:
    grpc_addr, thrift = f"127.0.0.1:{free_tcp_port()}", free_tcp_port()
    veths = VethPairs(2, prefix="sg").create()
    try:
        proc = start_switch(switch_command("ours", {1: veths.switch_side[0], 2: veths.switch_side[1]}, 4, grpc_addr,
                                           thrift), grpc_addr, thrift, tmp_path / "log")
        try:
            proc.wait_ready()
            cli = CliClient(thrift)
            subprocess.run(["ip", "link", "del", veths.switch_side[1]], check=True)

            def noticed() -> bool:  # the receive error on the vanished port is counted
                port2 = next(line for line in cli.run("show_ports").splitlines() if veths.switch_side[1] in line)
                return "rx_errors=0 " not in port2

            until(noticed, "the switch counted the vanished interface")
            assert proc.proc.poll() is None, proc.log_tail()
            assert veths.switch_side[0] in cli.run("show_ports")
            cli.close()
        finally:
            rc = proc.stop(sig=signal.SIGINT)  # Ctrl-C stops it as cleanly as SIGTERM
        assert rc == 0, proc.log_tail()
    finally:
        veths.delete()
