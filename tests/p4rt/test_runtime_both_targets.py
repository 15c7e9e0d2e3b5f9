"""One Thrift client, two targets: the same calls give the same answers on our switch process
and on BMv2's ``simple_switch_grpc`` (run where BMv2 is installed, skipped with the reason
otherwise). Switches start without a program and without interfaces, on loopback."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from lab.basic_program import BASIC_P4
from lab.targets import compile_program, free_tcp_port, start_switch, switch_command
from p4rt.bmv2_runtime import Bmv2Error, Bmv2Runtime
from p4rt.runtime_cli import CliClient
from p4rt.thrift import AppErrorType, ApplicationError


def connect(proc, port: int, timeout: float = 60.0) -> Bmv2Runtime:
    """A client once the switch's Thrift port accepts connections (or the switch's log)."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.proc.poll() is not None:
            raise RuntimeError(f"the switch exited with status {proc.proc.returncode}:\n{proc.log_tail()}")
        try:
            return Bmv2Runtime(port)
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no Thrift server on port {port} after {timeout:.0f} s:\n{proc.log_tail()}") from None
            time.sleep(0.1)  # polling the condition (the port opens), as SwitchProcess.wait_ready does


@pytest.fixture(params=["ours", "bmv2"])
def target(request, tmp_path: Path):
    if request.param == "bmv2" and shutil.which("simple_switch_grpc") is None:
        pytest.skip("BMv2 (simple_switch_grpc) is not installed; ../shared/tools/reference/ builds it")
    grpc_addr, thrift = f"127.0.0.1:{free_tcp_port()}", free_tcp_port()
    cmd = switch_command(request.param, {}, 1, grpc_addr, thrift, priority_queues=8)
    proc = start_switch(cmd, grpc_addr, thrift, tmp_path / "switch.log")
    try:
        rt = connect(proc, thrift)
        yield request.param, rt, thrift
        rt.close()
    finally:
        proc.stop()


def test_queues_time_ports_and_errors_answer_alike(target) -> None:
    name, rt, _ = target
    rt.set_queue_rate(1000)
    rt.set_queue_rate(50, 1)
    rt.set_queue_rate(7, 1, 7)
    rt.set_queue_depth(16)
    rt.set_queue_depth(8, 2)
    rt.set_queue_depth(3, 2, 0)
    with pytest.raises(Bmv2Error) as e:
        rt.register_read("MyIngress.nope", 0)
    assert (e.value.exception, e.value.code_name) == ("InvalidRegisterOperation", "INVALID_REGISTER_NAME")
    with pytest.raises(Bmv2Error) as e:
        rt.counter_read("MyIngress.nope", 0)
    assert (e.value.exception, e.value.code_name) == ("InvalidCounterOperation", "INVALID_COUNTER_NAME")
    with pytest.raises(Bmv2Error) as e:
        rt.table_num_entries("MyIngress.nope")
    assert (e.value.exception, e.value.code_name) == ("InvalidTableOperation", "INVALID_TABLE_NAME")
    with pytest.raises(Bmv2Error) as e:
        rt.mc_node_associate(3, 4)
    assert (e.value.exception, e.value.code_name) == ("InvalidMcOperation", "INVALID_L1_HANDLE")
    with pytest.raises(Bmv2Error) as e:
        rt.mirroring_get(3)
    assert (e.value.exception, e.value.code_name) == ("InvalidMirroringOperation", "SESSION_NOT_FOUND")
    with pytest.raises(ApplicationError) as x:
        rt.set_queue_rate(5, 1, 9)  # no priority queue 9
    assert x.value.kind == AppErrorType.UNKNOWN
    rt.mc_mgrp_destroy(9)  # an unknown group: no error
    first = rt.time_elapsed_us()
    assert 0 <= first <= rt.time_elapsed_us()
    assert rt.show_ports() == []


def test_the_cli_says_which_words_need_our_switch(target) -> None:
    name, _, port = target
    cli = CliClient(port)
    try:
        cli.run("set_queue_depth 32 3")
        ok, text = cli.call("switch_stats")
        if name == "ours":
            assert ok and "drop_watchdog_flush=" in text, text
        else:
            assert not ok and "has no p4switch service" in text
        assert cli.call("set_queue_rate 10 3") == (True, "")  # the client carries on
    finally:
        cli.close()


@pytest.fixture(params=["ours", "bmv2"])
def with_basic(request, tmp_path: Path):
    """basic.p4 compiled for the target (BMv2 needs p4c) and the switch started with it."""

    if request.param == "bmv2" and (shutil.which("simple_switch_grpc") is None or shutil.which("p4c") is None):
        pytest.skip("BMv2 with a program needs simple_switch_grpc and p4c; not installed "
                    "(../shared/tools/reference/ builds them)")
    compiled = compile_program(request.param, BASIC_P4, tmp_path / "build")
    grpc_addr, thrift = f"127.0.0.1:{free_tcp_port()}", free_tcp_port()
    cmd = switch_command(request.param, {}, 1, grpc_addr, thrift, program=str(compiled.device_config_path))
    proc = start_switch(cmd, grpc_addr, thrift, tmp_path / "switch.log")
    try:
        rt = connect(proc, thrift)
        yield rt
        rt.close()
    finally:
        proc.stop()


def test_registers_counters_tables_mirroring_and_multicast_of_a_program_answer_alike(with_basic) -> None:
    rt = with_basic
    reg = "BasicEgress.enq_qdepth_seen"
    rt.register_write(reg, 7, 1234)
    assert rt.register_read(reg, 7) == 1234
    cells = rt.register_read_all(reg)
    assert len(cells) == 512 and cells[7] == 1234 and sum(cells) == 1234
    with pytest.raises(Bmv2Error) as e:
        rt.register_read(reg, 512)
    assert e.value.code_name == "INVALID_INDEX"
    rt.register_reset(reg)
    assert rt.register_read(reg, 7) == 0
    assert rt.counter_read("BasicIngress.port_rx", 3) == (0, 0)
    rt.counter_reset("BasicIngress.port_rx")
    assert rt.table_num_entries("BasicIngress.ipv4_lpm") == 0
    rt.table_clear("BasicIngress.ipv4_lpm")
    rt.mirroring_add(5, 2)
    assert rt.mirroring_get(5) == {"port": 2}
    rt.mirroring_delete(5)
    with pytest.raises(Bmv2Error) as e:
        rt.mirroring_delete(5)
    assert e.value.code_name == "SESSION_NOT_FOUND"
    assert rt.mc_mgrp_create(3) == 3
    node = rt.mc_node_create(1, [1, 2])
    rt.mc_node_associate(3, node)
    rt.mc_node_dissociate(3, node)
    rt.mc_node_destroy(node)
    rt.mc_mgrp_destroy(3)
