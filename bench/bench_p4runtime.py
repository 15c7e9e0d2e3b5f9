"""P4Runtime control-plane speed: table entries written and read per second over gRPC
(loopback, one client, batches of 500 LPM entries) against the in-process switch device."""

from __future__ import annotations

import queue
import time
from pathlib import Path

import grpc
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from bench.result import Result

PROGRAM = Path(__file__).resolve().parent.parent / "tests" / "p4runtime" / "programs" / "basic_l3.p4"
ENTRIES = 4000
BATCH = 500


def run() -> list[Result]:
    from p4switch.frontend import compile_file
    from p4switch.p4info import generate_p4info
    from p4switch.p4info.device_config import encode
    from p4switch.p4runtime import P4RuntimeServer
    from p4switch.switch.device import Device

    checked = compile_file(str(PROGRAM))
    p4info = generate_p4info(checked)
    device = Device(device_id=0)
    server = P4RuntimeServer(device, "127.0.0.1:0").start()
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    requests: queue.Queue = queue.Queue()
    try:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        arb = p4runtime_pb2.StreamMessageRequest()
        arb.arbitration.election_id.low = 1
        requests.put(arb)
        stream = stub.StreamChannel(iter(requests.get, None))
        next(stream)
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.election_id.low = 1
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = encode(PROGRAM.name, checked.source_text)
        stub.SetForwardingPipelineConfig(req)
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
            stub.Write(w)
        t1 = time.perf_counter()
        read = p4runtime_pb2.ReadRequest()
        read.entities.add().table_entry.table_id = table.preamble.id
        count = sum(len(r.entities) for r in stub.Read(read))
        t2 = time.perf_counter()
        requests.put(None)
    finally:
        channel.close()
        server.stop(grace=None)
    assert count == ENTRIES
    return [
        Result("p4runtime table writes", ENTRIES / (t1 - t0), "entries/s", f"batches of {BATCH}, loopback gRPC"),
        Result("p4runtime table reads", ENTRIES / (t2 - t1), "entries/s", "one wildcard Read"),
    ]
