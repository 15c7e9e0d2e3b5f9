"""Target options for the units of v1model's metadata: timestamps in microseconds by default
(BMv2's unit) or nanoseconds (the virtual-time fabric), and the queued bytes of a port kept
in a program register. A tiny program copies the metadata into the frame's MAC fields, so
the test reads what the pipeline saw."""

from __future__ import annotations

import pytest

from p4switch.switch.main import parse_args

# ingress: dst = ingress_global_timestamp; egress: src = enq_timestamp (32) and the
# register the target keeps (16 bits of it) in the EtherType.
INGRESS = """
    apply { hdr.eth.dst = sm.ingress_global_timestamp; sm.egress_spec = 2; }
"""
EGRESS = """
    register<bit<32>>(8) queued_bytes;
    apply {
        bit<32> q;
        queued_bytes.read(q, (bit<32>)sm.egress_port);
        hdr.eth.src = (bit<48>)sm.enq_timestamp;
        hdr.eth.type = (bit<16>)q;
    }
"""
FRAME = bytes(12) + b"\x88\xb5" + bytes(50)


def _run(make_switch, eth_program, **options):
    device, ports = make_switch(eth_program(INGRESS, EGRESS), **options)
    device.tm.set_port_rate(2, 10e9)  # 64-byte frames: 67.2 ns of wire time each
    device.clock.advance(1_234_567)
    for _ in range(3):
        device.receive(1, FRAME)
    while device.poll() is not None:
        device.clock.advance(10)
    return [(int.from_bytes(f[:6], "big"), int.from_bytes(f[6:12], "big"), int.from_bytes(f[12:14], "big"))
            for f in ports[2].sent]


def test_timestamps_count_microseconds_by_default_as_bmv2(make_switch, eth_program) -> None:
    out = _run(make_switch, eth_program)
    assert [(ts, enq) for ts, enq, _ in out] == [(1234, 1234)] * 3
    assert {q for _, _, q in out} == {0}  # no register kept unless asked for


def test_nanosecond_timestamps_and_queued_bytes_when_asked_for(make_switch, eth_program) -> None:
    out = _run(make_switch, eth_program, timestamp_unit_ns=1, queue_bytes_register="queued_bytes")
    assert [(ts, enq) for ts, enq, _ in out] == [(1_234_567, 1_234_567)] * 3
    # bytes left queued behind each frame as it left: two, one, none
    assert [q for _, _, q in out] == [2 * len(FRAME), len(FRAME), 0]


def test_the_command_line_option_defaults_to_microseconds() -> None:
    assert parse_args(["--no-p4"]).timestamp_unit == "us"
    assert parse_args(["--no-p4", "--timestamp-unit", "ns"]).timestamp_unit == "ns"
    with pytest.raises(SystemExit):
        parse_args(["--no-p4", "--timestamp-unit", "ms"])
