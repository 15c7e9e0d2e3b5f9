"""One P4Runtime session with one switch, that survives the switch restarting.

A background thread owns the bidirectional StreamChannel: it arbitrates for primary, hands
packet-ins and digests to callbacks, and when the stream breaks (the switch process died or
restarted) it reconnects with exponential backoff and calls ``on_reconnect`` once primary again,
so the controller can push the pipeline and its state back. Unary calls (Write, Read, pipeline
config) go through the same channel and raise :class:`P4RuntimeError` with the per-update
details the server returned, so callers see *which* write failed and why.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable, Iterator

import grpc
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4rt import interrupts, wire
from p4rt.errors import DETAILS_KEY, P4RuntimeError

log = logging.getLogger(__name__)

BATCH = 256  # updates per WriteRequest: bounded message size, still few round trips
# A failed Write carries one p4.v1.Error per update in its trailing metadata; gRPC's default
# 8 KiB limit would turn a large failed batch into a bare RESOURCE_EXHAUSTED.
CHANNEL_OPTIONS = [("grpc.max_metadata_size", 4 * 1024 * 1024)]


def call_error(switch: str, what: str, code: grpc.StatusCode, message: str,
               trailing: Iterable[tuple[str, bytes]] = ()) -> P4RuntimeError:
    """The error a failed call raises: which switch, which call, the status, and the per-update
    details the server sent in its trailing metadata (P4Runtime spec 12). Also used by the
    in-process connection of the virtual-time fabric, so both report failures alike."""
    return P4RuntimeError(code, f"{switch}: {what} failed: {code.name}: {message or ''}", update_errors(trailing))


def update_errors(trailing: Iterable[tuple[str, bytes]]) -> list[str]:
    """One line per failed update of a batch, from the google.rpc.Status in ``trailing``."""
    out: list[str] = []
    for key, value in trailing:
        if key != DETAILS_KEY:
            continue
        status = status_pb2.Status.FromString(value)
        for i, any_msg in enumerate(status.details):
            e = p4runtime_pb2.Error()
            if any_msg.Unpack(e) and e.canonical_code != code_pb2.OK:
                out.append(f"update #{i}: {code_pb2.Code.Name(e.canonical_code)}: {e.message}")
    return out


def _call_error(switch: str, what: str, err: grpc.RpcError) -> P4RuntimeError:
    return call_error(switch, what, err.code(), err.details(), err.trailing_metadata() or ())


class SwitchConnection:
    def __init__(
        self,
        name: str,
        address: str,
        device_id: int,
        election_id: int = 1,
        on_packet_in: Callable[[p4runtime_pb2.PacketIn], None] | None = None,
        on_digest: Callable[[p4runtime_pb2.DigestList], None] | None = None,
        on_reconnect: Callable[[SwitchConnection], None] | None = None,
    ) -> None:
        self.name = name
        self.address = address
        self.device_id = device_id
        self.election_id = election_id
        self.on_packet_in = on_packet_in
        self.on_digest = on_digest
        self.on_reconnect = on_reconnect
        self.channel = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._read = self.channel.unary_stream("/p4.v1.P4Runtime/Read", request_serializer=None,
                                               response_deserializer=None)  # bytes both ways
        self.is_primary = threading.Event()
        self.reconnects = 0  # times the session was re-established after a break
        self._arbitrated = threading.Event()
        self._arbitration_status: tuple[int, str] = (code_pb2.UNKNOWN, "no answer yet")
        self._requests: queue.Queue | None = None
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    # -- session ------------------------------------------------------------------------
    def connect(self, timeout: float = 10.0) -> None:
        """Open the stream and become primary; raises ConnectionError if that fails in time."""
        self._thread = threading.Thread(target=self._run, name=f"p4rt-{self.name}", daemon=True)
        self._thread.start()
        if not self._arbitrated.wait(timeout):
            self.close()
            raise ConnectionError(f"{self.name}: no P4Runtime server answered arbitration at {self.address}"
                                  f" within {timeout:g} s")
        code, message = self._arbitration_status
        if code != code_pb2.OK:
            self.close()
            raise ConnectionError(f"{self.name}: not primary at {self.address}: {code_pb2.Code.Name(code)} {message}")

    def close(self) -> None:
        self._closed.set()
        if self._requests is not None:
            self._requests.put(None)
        with interrupts.held():  # a close cut short leaves calls the channel still waits for
            self.channel.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        backoff = 0.1
        first = True
        while not self._closed.is_set():
            requests: queue.Queue = queue.Queue()
            self._requests = requests
            fresh = True
            arb = p4runtime_pb2.StreamMessageRequest()
            arb.arbitration.device_id = self.device_id
            arb.arbitration.election_id.low = self.election_id
            requests.put(arb)
            try:
                for msg in self.stub.StreamChannel(_drain(requests)):
                    backoff = 0.1
                    kind = msg.WhichOneof("update")
                    if kind == "arbitration":
                        self._on_arbitration(msg.arbitration)
                        # a new stream after a broken one: the switch may have restarted
                        if fresh and self.is_primary.is_set() and not first:
                            self.reconnects += 1
                            if self.on_reconnect is not None:
                                threading.Thread(target=self._reconnected, daemon=True).start()
                        if self.is_primary.is_set():
                            first = fresh = False
                    elif kind == "packet" and self.on_packet_in is not None:
                        self.on_packet_in(msg.packet)
                    elif kind == "digest":
                        self._ack_digest(msg.digest)
                        if self.on_digest is not None:
                            self.on_digest(msg.digest)
                    elif kind == "error":
                        log.warning("%s: stream error %s", self.name, msg.error)
            except grpc.RpcError as e:
                if not self._closed.is_set():
                    log.info("%s: stream broken (%s), reconnecting", self.name, e.code().name)
            except Exception:  # a callback bug must not kill the session thread
                log.exception("%s: stream handler failed", self.name)
            finally:
                requests.put(None)
            self.is_primary.clear()
            if self._closed.wait(backoff):
                return
            backoff = min(backoff * 2, 2.0)

    def _reconnected(self) -> None:
        try:
            self.on_reconnect(self)  # type: ignore[misc]
        except Exception:
            log.exception("%s: restoring state after reconnect failed", self.name)

    def _on_arbitration(self, upd: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        self._arbitration_status = (upd.status.code, upd.status.message)
        if upd.status.code == code_pb2.OK:
            self.is_primary.set()
        else:
            self.is_primary.clear()
        self._arbitrated.set()

    def _ack_digest(self, digest: p4runtime_pb2.DigestList) -> None:
        if self._requests is not None:
            ack = p4runtime_pb2.StreamMessageRequest()
            ack.digest_ack.digest_id = digest.digest_id
            ack.digest_ack.list_id = digest.list_id
            self._requests.put(ack)

    def wait_primary(self, timeout: float) -> bool:
        return self.is_primary.wait(timeout)

    def wait_closed(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` s; True at once if the session is (or gets) closed."""
        return self._closed.wait(timeout)

    # -- unary calls --------------------------------------------------------------------
    def _call(self, what: str, fn, request, **kw):
        try:
            with interrupts.held():
                return fn(request, **kw)
        except grpc.RpcError as e:
            raise _call_error(self.name, what, e) from None

    def set_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes, cookie: int = 0) -> None:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
        )
        req.election_id.low = self.election_id
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        req.config.cookie.cookie = cookie
        self._call("SetForwardingPipelineConfig", self.stub.SetForwardingPipelineConfig, req, timeout=120)

    def get_pipeline(self) -> p4runtime_pb2.ForwardingPipelineConfig:
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE,
        )
        return self._call("GetForwardingPipelineConfig", self.stub.GetForwardingPipelineConfig, req, timeout=10).config

    def write(self, updates: list[p4runtime_pb2.Update]) -> None:
        """Send updates in batches; the first failing batch raises with its per-update errors."""
        for start in range(0, len(updates), BATCH):
            req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
            req.election_id.low = self.election_id
            req.updates.extend(updates[start:start + BATCH])
            self._call("Write", self.stub.Write, req, timeout=30)

    def read(self, entities: Iterable[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        return wire.response_entities(self.read_encoded(wire.read_entities(entities)))

    def read_encoded(self, entities: bytes) -> list[bytes]:
        """The serialized ReadResponses to a Read of ``entities``, a ReadRequest's encoded
        ``entities`` fields (``wire.read_entities``, ``P4InfoIndex.cell_reads``): a poller's
        cells are decoded by ``wire`` without protobuf's message objects."""
        try:
            with interrupts.held():
                return list(self._read(wire.read_request_bytes(self.device_id, entities), timeout=30))
        except grpc.RpcError as e:
            raise _call_error(self.name, "Read", e) from None

    def packet_out(self, payload: bytes, metadata: list[tuple[int, bytes]]) -> None:
        if self._requests is None:
            raise ConnectionError(f"{self.name}: not connected")
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.packet.payload = payload
        for mid, value in metadata:
            msg.packet.metadata.add(metadata_id=mid, value=value)
        self._requests.put(msg)


def _drain(q: queue.Queue) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
    while True:
        item = q.get()
        if item is None:
            return
        yield item
