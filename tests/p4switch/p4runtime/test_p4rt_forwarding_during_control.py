"""Forwarding goes on while a long Read or Write is being served: the server holds the
device lock only in short stretches, and a packet that arrives in the middle of a request
is switched before the request ends."""

import threading

import grpc
import pytest
from p4.v1 import p4runtime_pb2
from scapy.layers.l2 import Ether

from p4switch.p4info import ids
from p4switch.p4runtime import entities, service

INSERT = p4runtime_pb2.Update.INSERT
FRAME = bytes(Ether(dst="00:00:00:00:00:0a", src="00:00:00:00:00:77", type=0x9999) / (b"x" * 46))


def _l2(mac: int, port: int) -> p4runtime_pb2.TableEntry:
    e = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.l2"))
    e.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
    e.action.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.l2_forward")
    e.action.action.params.add(param_id=1, value=bytes([port]))
    return e


class _MidRequest:
    """Wraps a step the server takes outside the device lock between chunks of a request:
    on call number ``at``, a packet is sent into the switch from another thread, and the step
    waits (up to 10 s) for the switch to have taken it, which it cannot while the request
    holds the lock."""

    def __init__(self, device, step, at: int):
        self.device, self.step, self.at = device, step, at
        self.calls = 0
        self.forwarded_mid_request: bool | None = None

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.at:
            sender = threading.Thread(target=self.device.receive, args=(1, FRAME), daemon=True)
            sender.start()
            sender.join(timeout=10)
            self.forwarded_mid_request = not sender.is_alive()
        return self.step(*args, **kwargs)


@pytest.fixture
def forwarding(controller, switch, rt):
    controller.write(rt.update(INSERT, table_entry=_l2(0x0A, 2)))
    switch.device.receive(1, FRAME)  # the path works before the test changes anything
    assert switch.ports[2].get() == FRAME
    return switch


def test_a_packet_passes_during_a_long_read(forwarding, controller, monkeypatch):
    monkeypatch.setattr(entities, "SNAPSHOT", 64)  # port_packets' 512 cells in 8 stretches
    hook = _MidRequest(forwarding.device, entities.W.counter_entities, at=2)
    monkeypatch.setattr(entities.W, "counter_entities", hook)
    query = p4runtime_pb2.CounterEntry(counter_id=ids.hashed_id(ids.COUNTER, "MyIngress.port_packets"))
    cells = controller.read(p4runtime_pb2.Entity(counter_entry=query))
    assert len(cells) == 512 and hook.calls == 8
    assert hook.forwarded_mid_request is True
    assert forwarding.ports[2].get() == FRAME


def test_a_packet_passes_during_a_long_write(forwarding, controller, monkeypatch, rt):
    hook = _MidRequest(forwarding.device, service._decode_update, at=service.WRITE_CHUNK + 1)  # 2nd chunk
    monkeypatch.setattr(service, "_decode_update", hook)
    updates = [rt.update(INSERT, table_entry=_l2(0x100 + i, 3)) for i in range(2 * service.WRITE_CHUNK)]
    with pytest.raises(grpc.RpcError):  # MyIngress.l2 holds 4 entries: most of these fail, as they may
        controller.write(*updates)
    assert hook.forwarded_mid_request is True
    assert forwarding.ports[2].get() == FRAME
