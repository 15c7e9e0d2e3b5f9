"""Shared fixtures of the P4Runtime tests."""

import queue
import threading
import types
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.rpc import status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info
from p4switch.p4info.device_config import encode
from p4switch.p4runtime import P4RuntimeServer
from p4switch.switch.device import Device
from p4switch.switch.loop import SwitchLoop

# ----------------------------------------------------------------------------------------------
# A running switch with the P4Runtime server, and a raw gRPC client


PROGRAMS = Path(__file__).parent / "programs"
DEVICE_ID = 1
CPU_PORT = 64
DATA_PORTS = (1, 2, 3, 4)


@dataclass
class CompiledProgram:
    p4info: object
    device_config: bytes

    def config(self) -> p4runtime_pb2.ForwardingPipelineConfig:
        return p4runtime_pb2.ForwardingPipelineConfig(p4info=self.p4info, p4_device_config=self.device_config)


def compile_program(name: str) -> CompiledProgram:
    checked = compile_file(str(PROGRAMS / name))
    return CompiledProgram(generate_p4info(checked), encode(name, checked.source_text))


@pytest.fixture(scope="session")
def switch_program() -> CompiledProgram:
    return compile_program("p4rt_switch.p4")


class ListPort:
    """An in-memory port: frames the switch sends are appended and can be waited for."""

    def __init__(self) -> None:
        self.frames: queue.Queue = queue.Queue()

    def send(self, frame: bytes) -> bool:
        self.frames.put(bytes(frame))
        return True

    def get(self, timeout: float = 5.0) -> bytes:
        return self.frames.get(timeout=timeout)


@dataclass
class RunningSwitch:
    device: object
    address: str
    ports: dict[int, ListPort]
    server: object


@pytest.fixture
def switch():
    device = Device(device_id=DEVICE_ID, cpu_port=CPU_PORT)
    ports = {p: ListPort() for p in DATA_PORTS}
    for p, io in ports.items():
        device.add_port(p, io)
    loop = SwitchLoop(device, {})
    thread = threading.Thread(target=loop.run, daemon=True)
    thread.start()
    server = P4RuntimeServer(device, "127.0.0.1:0").start()
    try:
        yield RunningSwitch(device, f"127.0.0.1:{server.port}", ports, server)
    finally:
        server.stop(grace=None)
        loop.stop()
        thread.join(timeout=5)


class Client:
    """A P4Runtime client written against the protobufs only (no helper library)."""

    def __init__(self, address: str, election_id: int = 1, device_id: int = DEVICE_ID) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.election_id = election_id
        self.device_id = device_id
        self.requests: queue.Queue = queue.Queue()
        self.responses: queue.Queue = queue.Queue()
        self.stream_error: grpc.RpcError | None = None
        self.stream = self.stub.StreamChannel(iter(self.requests.get, None))
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        try:
            for msg in self.stream:
                self.responses.put(msg)
        except grpc.RpcError as e:
            self.stream_error = e
        self.responses.put(None)

    def next(self, kind: str, timeout: float = 5.0):
        while True:
            msg = self.responses.get(timeout=timeout)
            if msg is None or msg.WhichOneof("update") == kind:
                return msg

    def arbitrate(self, election_id: int | None = None, device_id: int | None = None):
        if election_id is not None:
            self.election_id = election_id
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id if device_id is None else device_id
        req.arbitration.election_id.high = self.election_id >> 64
        req.arbitration.election_id.low = self.election_id & ((1 << 64) - 1)
        self.requests.put(req)
        return self.next("arbitration")

    def send(self, req: p4runtime_pb2.StreamMessageRequest) -> None:
        self.requests.put(req)

    def _stamp(self, req):
        req.device_id = self.device_id
        req.election_id.high = self.election_id >> 64
        req.election_id.low = self.election_id & ((1 << 64) - 1)
        return req

    def set_pipeline(self, config, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT):
        req = self._stamp(p4runtime_pb2.SetForwardingPipelineConfigRequest(action=action))
        if config is not None:
            req.config.CopyFrom(config)
        return self.stub.SetForwardingPipelineConfig(req)

    def write(self, *updates: p4runtime_pb2.Update):
        req = self._stamp(p4runtime_pb2.WriteRequest())
        req.updates.extend(updates)
        return self.stub.Write(req)

    def read(self, *entities: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.extend(entities)
        return [e for resp in self.stub.Read(req) for e in resp.entities]

    def close(self) -> None:
        self.requests.put(None)
        self.channel.close()


def update(kind: int, **entity) -> p4runtime_pb2.Update:
    return p4runtime_pb2.Update(type=kind, entity=p4runtime_pb2.Entity(**entity))


def batch_errors(error: grpc.RpcError) -> list:
    """Per-update (code, message) pairs from a failed Write's status details."""
    for key, value in error.trailing_metadata():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            out = []
            for detail in status.details:
                err = p4runtime_pb2.Error()
                detail.Unpack(err)
                out.append((grpc.StatusCode(_CODES[err.canonical_code]), err.message))
            return out
    raise AssertionError("no grpc-status-details-bin in the trailers")


_CODES = {c.value[0]: c.value for c in grpc.StatusCode}


@pytest.fixture
def controller(switch, switch_program):
    """A primary client (election id 10) that has pushed p4rt_switch.p4."""
    c = Client(switch.address, election_id=10)
    assert c.arbitrate().arbitration.status.code == 0
    c.set_pipeline(switch_program.config())
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def rt():
    """The raw-client helpers (test modules cannot import conftest under importlib mode)."""
    return types.SimpleNamespace(Client=Client, update=update, batch_errors=batch_errors)
