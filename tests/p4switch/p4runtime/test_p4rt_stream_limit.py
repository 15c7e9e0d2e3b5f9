"""Idle StreamChannels cannot starve the server: past the bound they are refused with
RESOURCE_EXHAUSTED, and unary RPCs keep threads of their own."""

import queue
import time

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4switch.p4info import ids
from p4switch.p4runtime import P4RuntimeServer
from p4switch.p4runtime.service import MAX_STREAMS


def _l2(mac: int) -> p4runtime_pb2.TableEntry:
    e = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.l2"))
    e.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
    e.action.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.l2_forward")
    e.action.action.params.add(param_id=1, value=b"\x01")
    return e


def _wait_until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_streams_past_the_bound_are_refused_and_unary_rpcs_still_served(controller, switch, rt):
    service = switch.server.service
    channel = grpc.insecure_channel(switch.address)
    stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
    requests: list[queue.Queue] = []
    calls = []  # a call nobody references is cancelled

    def open_stream():
        q: queue.Queue = queue.Queue()
        requests.append(q)
        calls.append(stub.StreamChannel(iter(q.get, None)))
        return calls[-1]

    try:
        # the controller holds one stream; fill every other slot with idle ones (no arbitration)
        for n in range(2, MAX_STREAMS + 1):
            open_stream()
            assert _wait_until(lambda n=n: len(service.streams) == n)
        for _ in range(5):  # past the bound: refused at once, each one
            call = open_stream()
            assert call.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"at most {MAX_STREAMS}" in call.details()
        assert len(service.streams) == MAX_STREAMS

        # every stream slot and its worker are taken: the primary's Write and a Read still go through
        controller.stub.Write(controller._stamp(p4runtime_pb2.WriteRequest(
            updates=[rt.update(p4runtime_pb2.Update.INSERT, table_entry=_l2(1))])), timeout=10)
        req = p4runtime_pb2.ReadRequest(device_id=controller.device_id)
        req.entities.add().table_entry.SetInParent()
        assert len([e for r in controller.stub.Read(req, timeout=10) for e in r.entities]) == 1

        requests[0].put(None)  # an idle client leaves: its slot serves the next one
        assert _wait_until(lambda: len(service.streams) == MAX_STREAMS - 1)
        open_stream()
        assert _wait_until(lambda: len(service.streams) == MAX_STREAMS)
    finally:
        for q in requests:
            q.put(None)
        channel.close()


def test_bound_is_a_setting(switch):

    with pytest.raises(ValueError):
        P4RuntimeServer(switch.device, "127.0.0.1:0", max_streams=0)
