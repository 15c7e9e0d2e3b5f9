"""P4Runtime control-plane speed against the in-process switch device, over loopback gRPC.

* Table entries written and read per second: ``ENTRIES`` LPM entries of basic L3 in
  WriteRequests of ``BATCH`` updates, then one wildcard Read, per second of this process's
  CPU time (server and client threads; wall-clock rates beside them depend on what else the
  machine runs, as with the in-process switch figures). The client sends requests
  serialized beforehand and takes responses as bytes (counted, then checked after the clock
  stops), so the figures are the server's, not the pure-Python protobuf of the client.
* A full Read of fabric.p4's counters and registers, alone and while the device forwards
  packets on another thread: how long the Read takes and the longest gap between two forwarded packets
  during it (next to the longest gap in the same time without a Read), i.e. how long the
  control plane stalls the data plane; and the longest CPU stretch of the Read between two
  yields to forwarding, which bounds that stall without depending on the machine's load.

Run only this module: ``.venv/bin/python -m bench p4runtime``.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from p4.v1 import p4runtime_pb2

from bench.result import Result
from controller.fabric_rules import PORT_STATS, stat_cells
from lab.basic_program import udp_frame
from p4rt.p4info import P4InfoIndex
from p4rt.switch_conn import SwitchConnection
from p4rt.wire import fields, read_request_bytes
from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info, ids
from p4switch.p4info.device_config import encode
from p4switch.p4runtime import P4RuntimeServer
from p4switch.switch.device import Device
from p4switch.switch.loop import share_the_gil_promptly

ROOT = Path(__file__).resolve().parent.parent
BASIC = ROOT / "tests" / "p4switch" / "p4runtime" / "programs" / "basic_l3.p4"
FABRIC = ROOT / "p4src" / "fabric.p4"
ENTRIES = 10000
BATCH = 1000
POLLED_PORTS = 16  # a leaf's ports
POLLS = 20


def _raw_calls(conn: SwitchConnection) -> tuple:
    """Write and Read taking serialized requests, Read yielding serialized responses."""
    write = conn.channel.unary_unary("/p4.v1.P4Runtime/Write", request_serializer=None,
                                     response_deserializer=None)
    read = conn.channel.unary_stream("/p4.v1.P4Runtime/Read", request_serializer=None,
                                     response_deserializer=None)
    return write, read


def _count_entities(chunks: list[bytes]) -> int:
    """Entities in serialized ReadResponses (their only field), without parsing them."""
    return sum(len(fields(data)) for data in chunks)


def _start(program: Path, include_dirs: list[str] | None = None):
    checked = compile_file(str(program), include_dirs=include_dirs or [])
    p4info = generate_p4info(checked)
    device = Device(device_id=0, cpu_port=255)
    server = P4RuntimeServer(device, "127.0.0.1:0").start()
    conn = SwitchConnection("bench", f"127.0.0.1:{server.port}", device_id=0)
    conn.connect()
    conn.set_pipeline(p4info, encode(program.name, checked.source_text))
    return p4info, device, server, conn


def _table_rates() -> list[Result]:
    p4info, device, server, conn = _start(BASIC)
    try:
        table = p4info.tables[0]
        forward = next(a for a in p4info.actions if a.preamble.name.endswith("ipv4_forward"))
        device.program.tables[table.preamble.name].size = ENTRIES
        writes = []
        for start in range(0, ENTRIES, BATCH):
            w = p4runtime_pb2.WriteRequest()
            w.election_id.low = 1
            for i in range(start, start + BATCH):
                u = w.updates.add(type=p4runtime_pb2.Update.INSERT)
                e = u.entity.table_entry
                e.table_id = table.preamble.id
                m = e.match.add(field_id=1).lpm
                m.value, m.prefix_len = (0x0A000000 + (i << 8)).to_bytes(4, "big"), 24
                e.action.action.action_id = forward.preamble.id
                e.action.action.params.add(param_id=1, value=b"\x00\x00\x00\x00\x00\x01")
                e.action.action.params.add(param_id=2, value=b"\x01")
            writes.append(w.SerializeToString())
        write, read = _raw_calls(conn)
        request = p4runtime_pb2.ReadRequest()
        request.entities.add().table_entry.table_id = table.preamble.id
        c0, t0 = time.process_time(), time.perf_counter()
        for w in writes:
            write(w, timeout=60)
        c1, t1 = time.process_time(), time.perf_counter()
        count = _count_entities(list(read(request.SerializeToString(), timeout=60)))
        c2, t2 = time.process_time(), time.perf_counter()
    finally:
        conn.close()
        server.stop(grace=None)
    assert count == ENTRIES, count
    return [
        Result("p4runtime table writes", ENTRIES / (c1 - c0), "entries/s",
               f"batches of {BATCH}, loopback gRPC; CPU time ({ENTRIES / (t1 - t0):,.0f}/s wall)"),
        Result("p4runtime table reads", ENTRIES / (c2 - c1), "entries/s",
               f"one wildcard Read; CPU time ({ENTRIES / (t2 - t1):,.0f}/s wall)"),
    ]


class _GapSink:
    """A port that notes when each frame left, to find the longest pause in forwarding."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def send(self, frame: bytes) -> bool:
        self.times.append(time.perf_counter())
        return True

    def worst_gap(self, start: float, end: float) -> float:
        inside = [t for t in self.times if start <= t <= end]
        points = [start] + inside + [end]
        return max(b - a for a, b in zip(points, points[1:]))


class _PauseWatch:
    """Wraps the service's pause between the slices of a Read: the longest CPU time the Read's
    thread ran between two pauses, i.e. the longest the control plane holds the GIL or the
    device lock in one go. Unlike the forwarding gap, this does not depend on the machine's load."""

    def __init__(self, pause) -> None:
        self.pause = pause
        self.last: float | None = None
        self.longest = 0.0

    def __call__(self) -> None:
        now = time.thread_time()
        if self.last is not None:
            self.longest = max(self.longest, now - self.last)
        self.pause()
        self.last = time.thread_time()


def _forward(device, frame: bytes, stop: threading.Event) -> None:
    while not stop.is_set():
        device.receive(1, frame)
        device.poll()


def _full_read_stall() -> list[Result]:
    interval = sys.getswitchinterval()
    share_the_gil_promptly()  # as the switch process does; the other benchmarks keep the default
    p4info, device, server, conn = _start(FABRIC, [str(ROOT / "p4src"), str(ROOT / "p4src" / "include")])
    sink = _GapSink()
    device.add_port(1, _GapSink())
    device.add_port(2, sink)
    stop = threading.Event()
    forwarder = threading.Thread(target=_forward, args=(device, _fabric_frame(udp_frame), stop), daemon=True)
    try:
        routes = [("FabricIngress.routing.routing_v4", [(1, "lpm", bytes([10, 0, 2, 0]), 24)],
                   "FabricIngress.routing.route_to_port", [(1, b"\x02")]),
                  ("FabricIngress.next_hop.next_hop_mac", [(1, "exact", b"\x02", 0)],
                   "FabricIngress.next_hop.set_next_hop_macs", [(1, bytes.fromhex("020000000002")),
                                                                 (2, bytes.fromhex("000000000202"))])]
        updates = []
        for table, matches, action, params in routes:
            u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
            e = u.entity.table_entry
            e.table_id = ids.hashed_id(ids.TABLE, table)
            for field_id, kind, value, extra in matches:
                m = e.match.add(field_id=field_id)
                if kind == "lpm":
                    m.lpm.value, m.lpm.prefix_len = value, extra
                else:
                    m.exact.value = value
            e.action.action.action_id = ids.hashed_id(ids.ACTION, action)
            for pid, value in params:
                e.action.action.params.add(param_id=pid, value=value)
            updates.append(u)
        conn.write(updates)
        request = p4runtime_pb2.ReadRequest()
        request.entities.add().counter_entry.SetInParent()
        request.entities.add().register_entry.SetInParent()
        cells = sum(c.size for c in p4info.counters) + sum(r.size for r in p4info.registers)
        _write, read = _raw_calls(conn)
        poll_bytes, polled = _poller_request(p4info)
        p0 = time.process_time()
        for _ in range(POLLS):
            assert _count_entities(list(read(poll_bytes, timeout=60))) == polled
        p1 = time.process_time()
        watch = server.service.pause = _PauseWatch(server.service.pause)
        full = request.SerializeToString()
        a0 = time.perf_counter()
        alone = _count_entities(list(read(full, timeout=120)))
        a1 = time.perf_counter()
        forwarder.start()
        deadline = time.perf_counter() + 10
        while len(sink.times) < 1000 and time.perf_counter() < deadline:  # warmed up and forwarding
            time.sleep(0.01)
        watch.last = None  # the next Read may run on another gRPC worker thread
        t0 = time.perf_counter()
        count = _count_entities(list(read(full, timeout=120)))
        t1 = time.perf_counter()
        idle_end = t1 + (t1 - t0)  # as long again without a Read, for comparison
        while time.perf_counter() < idle_end:
            time.sleep(0.01)
    finally:
        stop.set()
        conn.close()
        server.stop(grace=None)
        forwarder.join(timeout=10)
        sys.setswitchinterval(interval)
    assert count == alone == cells, (count, alone, cells)
    during, without = sink.worst_gap(t0, t1), sink.worst_gap(t1, idle_end)
    return [
        Result("p4runtime poller's cell reads", POLLS * polled / (p1 - p0), "cells/s",
               f"Reads of {polled} entities of a cell each (the telemetry's selection for {POLLED_PORTS} ports); "
               "CPU time"),
        Result("p4runtime full read of fabric.p4", a1 - a0, "s", f"{count} counter and register cells, one Read"),
        Result("p4runtime full read while forwarding", t1 - t0, "s", "the same Read, packets forwarded meanwhile"),
        Result("p4runtime worst forwarding gap", during * 1000, "ms",
               f"during that Read (same time without: {without * 1000:.1f} ms)"),
        Result("p4runtime longest Read slice", watch.longest * 1000, "ms",
               "CPU time of the full Read between two yields to forwarding"),
    ]


def _poller_request(p4info) -> tuple[bytes, int]:
    """What the controller's telemetry asks a switch for on each sample (``read_port_stats``):
    the cells of each ``PORT_STATS`` statistic for every port it watches, in one Read; and
    how many cells that is."""
    index = P4InfoIndex(p4info)
    entities, count = b"", 0
    for kind, short, per_prio in PORT_STATS.values():
        cells = stat_cells(list(range(1, POLLED_PORTS + 1)), per_prio)
        entities += index.cell_reads(kind, index.resolve(kind, short), cells)
        count += len(cells)
    return read_request_bytes(0, entities), count


def _fabric_frame(udp_frame) -> bytes:
    frame = bytes(udp_frame("10.0.2.2", payload=b"x" * 64))
    return bytes.fromhex("020000000001") + frame[6:]  # to the fabric switch's MAC


def run() -> list[Result]:
    return _table_rates() + _full_read_stall()
