"""P4Runtime control-plane speed: table entries written and read per second over gRPC
(loopback, one client, batches of 500 LPM entries) against the in-process switch device.

The session is the controller's (arbitration, pipeline push, read); the timed writes send
pre-built WriteRequests on its stub, so the figure is the server's, not the cost of building
protobufs on the client."""

from __future__ import annotations

import time
from pathlib import Path

from p4.v1 import p4runtime_pb2

from bench.result import Result
from p4rt.switch_conn import SwitchConnection
from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info
from p4switch.p4info.device_config import encode
from p4switch.p4runtime import P4RuntimeServer
from p4switch.switch.device import Device

PROGRAM = Path(__file__).resolve().parent.parent / "tests" / "p4runtime" / "programs" / "basic_l3.p4"
ENTRIES = 4000
BATCH = 500


def run() -> list[Result]:
    checked = compile_file(str(PROGRAM))
    p4info = generate_p4info(checked)
    device = Device(device_id=0)
    server = P4RuntimeServer(device, "127.0.0.1:0").start()
    conn = SwitchConnection("bench", f"127.0.0.1:{server.port}", device_id=0)
    try:
        conn.connect()
        conn.set_pipeline(p4info, encode(PROGRAM.name, checked.source_text))
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
            writes.append(w)
        t0 = time.perf_counter()
        for w in writes:
            conn.stub.Write(w)
        t1 = time.perf_counter()
        read = p4runtime_pb2.Entity()
        read.table_entry.table_id = table.preamble.id
        count = len(conn.read([read]))
        t2 = time.perf_counter()
    finally:
        conn.close()
        server.stop(grace=None)
    assert count == ENTRIES
    return [
        Result("p4runtime table writes", ENTRIES / (t1 - t0), "entries/s", f"batches of {BATCH}, loopback gRPC"),
        Result("p4runtime table reads", ENTRIES / (t2 - t1), "entries/s", "one wildcard Read"),
    ]
