"""The P4Runtime gRPC service (p4.v1.P4Runtime) in front of one switch Device.

Write, Read and pipeline RPCs translate to the executor API under ``device.lock``, held in
short stretches so that forwarding never waits long behind the control plane; the
StreamChannel carries arbitration, packet-out/packet-in and digests. Statuses follow the
P4Runtime spec: NOT_FOUND for an unknown device id or role, PERMISSION_DENIED for a request that does not
come from the primary, FAILED_PRECONDITION before a pipeline is set, UNKNOWN with per-update
p4.v1.Error details when updates of a Write batch fail.
"""

from __future__ import annotations

import importlib.metadata
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from p4.v1 import p4data_pb2, p4runtime_pb2, p4runtime_pb2_grpc

from p4rt import entries as E
from p4rt import wire
from p4rt.bytestrings import canonical
from p4rt.errors import (
    DETAILS_KEY,
    Code,
    P4RuntimeError,
    batch_status,
    from_entry_error,
    rpc_code,
    update_error,
)
from p4rt.packets import PacketIn
from p4rt.schema import Schema
from p4switch.p4runtime import packetio
from p4switch.p4runtime.arbitration import Arbiter, Notice
from p4switch.p4runtime.digests import DigestBatcher
from p4switch.p4runtime.entities import Entities, ReadOut, yield_to_forwarding
from p4switch.p4runtime.idle import idle_notification
from p4switch.p4runtime.pipeline import PipelineManager

log = logging.getLogger("p4switch.p4runtime")

MAX_STREAMS = 16  # open StreamChannels at once; more are answered RESOURCE_EXHAUSTED
READ_CHUNK = 1000  # entities per ReadResponse, keeping messages under clients' 4 MB limit
WRITE_CHUNK = 128  # updates applied per hold of the device lock

try:
    API_VERSION = importlib.metadata.version("p4runtime")
except importlib.metadata.PackageNotFoundError:  # protobufs vendored some other way
    API_VERSION = "1.4.1"


def election_id_of(msg: Any) -> int:
    """A p4.v1.Uint128 as one int, so election ids compare as the spec orders them."""
    return (msg.high << 64) | msg.low


def _decode_update(raw: bytes) -> p4runtime_pb2.Update | P4RuntimeError:
    """One update's bytes as a protobuf Update, or the P4RuntimeError that fails it alone."""
    try:
        return p4runtime_pb2.Update.FromString(raw)
    except DecodeError as e:
        return P4RuntimeError(Code.INVALID_ARGUMENT, f"malformed update: {e}")


# A poller sends the same request every sample: small requests are cut once and remembered
# (REMEMBERED_REQUESTS of them, each at most REMEMBERED_REQUEST_BYTES long).
REMEMBERED_REQUESTS = 64
REMEMBERED_REQUEST_BYTES = 16384


def _read_request(raw: bytes, memo: dict[bytes, tuple[int, str, list[Any]]]) -> tuple[int, str, list[Any]]:
    """Device id, role and entities of a ReadRequest: the cells a poller names as (kind, id,
    index), other entities as protobuf parses them (``wire.read_request``)."""
    found = memo.get(raw)
    if found is not None:
        return found
    try:
        cut = wire.read_request(raw)
        if len(raw) <= REMEMBERED_REQUEST_BYTES:
            if len(memo) >= REMEMBERED_REQUESTS:
                memo.clear()
            memo[raw] = cut
        return cut
    except wire.Undecodable:
        pass  # a field read here only by protobuf, or not a message: protobuf decides
    try:
        request = p4runtime_pb2.ReadRequest.FromString(raw)
    except DecodeError as e:
        raise P4RuntimeError(Code.INVALID_ARGUMENT, f"malformed ReadRequest: {e}") from None
    return request.device_id, request.role, list(request.entities)


def _apply(entities: Entities, update: Any) -> P4RuntimeError | None:
    """Apply one update; the error it fails with, mapped to its status, or None."""
    try:
        entities.write(update)
        return None
    except P4RuntimeError as e:
        return e
    except E.EntryError as e:
        return from_entry_error(e)
    except Exception as e:  # noqa: BLE001 - a bug must fail one update, not the server
        log.exception("update failed")
        return P4RuntimeError(Code.INTERNAL, f"internal error: {e}")


class _Stream:
    """One StreamChannel: an outgoing queue drained by the RPC's response generator, or for an
    in-process client (``deliver`` given) a direct call of its handler, which takes packet-ins
    as ``p4rt.packets.PacketIn`` (no protobuf message built and parsed per packet)."""

    _CLOSE = object()

    def __init__(self, key: int,
                 deliver: Callable[[p4runtime_pb2.StreamMessageResponse], None] | None = None,
                 deliver_packet_in: Callable[[PacketIn], None] | None = None) -> None:
        self.key = key
        self.out: queue.Queue = queue.Queue()
        self.deliver = deliver
        # an in-process client's handler itself: a packet-in per INT report in a simulation
        self.send_packet_in: Callable[[PacketIn], None] = deliver_packet_in or self._packet_in_message
        self.election_id: int | None = None
        self.abort: P4RuntimeError | None = None

    def send(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        if self.deliver is not None:
            self.deliver(msg)
        else:
            self.out.put(msg)

    def _packet_in_message(self, pkt: PacketIn) -> None:
        self.send(p4runtime_pb2.StreamMessageResponse(packet=pkt.to_pb()))

    def close(self, error: P4RuntimeError | None = None) -> None:
        if error is not None:
            self.abort = error
        self.out.put(self._CLOSE)


class P4RuntimeService(p4runtime_pb2_grpc.P4RuntimeServicer):
    """The RPC handlers. Control-plane state (arbitration, digest batching, one-shot groups,
    the pipeline config) lives here and in its helpers; the data plane stays in ``device``."""

    def __init__(self, device: Any, now_ns: Callable[[], int] | None = None, max_streams: int = MAX_STREAMS,
                 pause: Callable[[], None] = yield_to_forwarding) -> None:
        """``pause`` runs between the chunks of a Write or Read, so that forwarding threads get
        the device lock; a switch without such threads (the virtual-time fabric, where the
        sleep only costs wall time) passes a no-op."""
        self.device = device
        self.pause = pause
        self.max_streams = max_streams
        clock = getattr(device, "clock", None)
        self.now_ns = now_ns or (clock.now_ns if clock is not None else time.monotonic_ns)
        self.arbiter = Arbiter()
        self.streams: dict[int, _Stream] = {}
        self._primary: _Stream | None = None  # the primary client's stream (_notify)
        self._read_requests: dict[bytes, tuple[int, str, list[Any]]] = {}  # _read_request's
        self.state_lock = threading.Lock()
        self.control_lock = threading.Lock()  # one Write or pipeline change at a time
        self.keys = itertools.count(1)
        # the server's timer sets this to its wake-up (it sleeps long while no time-driven work waits)
        self.wake: Callable[[], None] = lambda: None
        self.digests = DigestBatcher(self._send_digest_list, self.now_ns, on_waiting=lambda: self.wake())
        self.pipeline = PipelineManager(device, self.digests, self.control_lock)
        self.stats: dict[str, int] = {"packet_in_dropped": 0, "packet_in_short": 0, "digest_lists_dropped": 0,
                                      "idle_notifications_dropped": 0}
        self._packet_in = packetio.PacketInRoute(self.pipeline, self.stats)  # to the primary (_notify)
        device.on_packet_in = self._packet_in.send
        device.on_digest = self._digest

    # ------------------------------------------------------------------ common checks
    def _check_device(self, device_id: int) -> None:
        if device_id != self.device.device_id:
            raise P4RuntimeError(Code.NOT_FOUND, f"device id {device_id} does not exist "
                                                 f"(this switch is device {self.device.device_id})")

    def _check_role(self, role: str) -> None:
        if role:
            raise P4RuntimeError(Code.NOT_FOUND, f"role {role!r} does not exist; only the default role is configured")

    def _check_primary(self, election_id: int) -> None:
        with self.state_lock:
            if not self.arbiter.is_primary(election_id):
                raise P4RuntimeError(Code.PERMISSION_DENIED, "only the primary controller may do this "
                                                             f"(election id {election_id} is not the primary's)")

    def _schema(self) -> Schema:
        schema = self.pipeline.schema
        if schema is None or self.device.program is None:
            raise P4RuntimeError(Code.FAILED_PRECONDITION, "no forwarding pipeline config has been set")
        return schema

    @staticmethod
    def _fail(context: grpc.ServicerContext, e: P4RuntimeError) -> None:
        context.abort(e.code, str(e))

    # ------------------------------------------------------------------ unary RPCs
    def Capabilities(self, request: p4runtime_pb2.CapabilitiesRequest,
                     context: grpc.ServicerContext) -> p4runtime_pb2.CapabilitiesResponse:
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    def SetForwardingPipelineConfig(self, request: p4runtime_pb2.SetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext) -> p4runtime_pb2.SetForwardingPipelineConfigResponse:
        try:
            self._check_device(request.device_id)
            self._check_role(request.role)
            self._check_primary(election_id_of(request.election_id))
            self.pipeline.set(request.action, request.config if request.HasField("config") else None)
        except P4RuntimeError as e:
            self._fail(context, e)
        self.wake()  # a program with idle-timeout tables needs the timer's scans from now on
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request: p4runtime_pb2.GetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext) -> p4runtime_pb2.GetForwardingPipelineConfigResponse:
        try:
            self._check_device(request.device_id)
            return p4runtime_pb2.GetForwardingPipelineConfigResponse(config=self.pipeline.get(request.response_type))
        except P4RuntimeError as e:
            self._fail(context, e)

    def Write(self, request: bytes, context: grpc.ServicerContext) -> p4runtime_pb2.WriteResponse:
        """A WriteRequest, taken as bytes (``server.py``) and cut into its updates by ``wire``,
        each parsed by protobuf (a malformed one fails alone). Updates are applied WRITE_CHUNK at a time under
        the device lock, so forwarding goes on between chunks; ``control_lock`` keeps other
        Writes and pipeline changes out for the whole request."""
        try:
            try:
                header, raw_updates = wire.split_write_request(request)
            except (wire.Undecodable, DecodeError) as e:
                raise P4RuntimeError(Code.INVALID_ARGUMENT, f"malformed WriteRequest: {e}") from None
            self._check_device(header.device_id)
            self._check_role(header.role)
            self._check_primary(election_id_of(header.election_id))
            self._schema()  # a pipeline is set (it can be replaced, never removed)
            if header.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
                raise P4RuntimeError(Code.UNIMPLEMENTED, "only CONTINUE_ON_ERROR atomicity is supported")
        except P4RuntimeError as e:
            self._fail(context, e)
        failures: dict[int, P4RuntimeError] = {}
        with self.control_lock:
            entities = Entities(self.device.program, self.pipeline.schema, self.digests, self.pipeline.oneshots,
                                self.now_ns, self.device.lock)
            for start in range(0, len(raw_updates), WRITE_CHUNK):
                decoded = [_decode_update(raw) for raw in raw_updates[start:start + WRITE_CHUNK]]
                with self.device.lock:
                    for i, update in enumerate(decoded, start):
                        error = update if isinstance(update, P4RuntimeError) else _apply(entities, update)
                        if error is not None:
                            failures[i] = error
                self.pause()
        if failures:
            ok = update_error(Code.OK)
            errors = [update_error(failures[i].code, str(failures[i])) if i in failures else ok
                      for i in range(len(raw_updates))]
            message = f"{len(failures)} of {len(raw_updates)} updates failed"
            context.set_trailing_metadata(((DETAILS_KEY, batch_status(errors, message).SerializeToString()),))
            context.set_code(Code.UNKNOWN)
            context.set_details(message)
        return p4runtime_pb2.WriteResponse()

    def Read(self, request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
        """Serialized ReadResponses to a serialized ReadRequest (``server.py`` passes both as
        they are). The readers take the device lock only while copying state out
        (``entities.py``)."""
        out = ReadOut()
        try:
            device_id, role, selections = _read_request(request, self._read_requests)
            self._check_device(device_id)
            self._check_role(role)
            with self.control_lock:  # the schema and the program of one pipeline, not one of each
                entities = Entities(self.device.program, self._schema(), self.digests, self.pipeline.oneshots,
                                    self.now_ns, self.device.lock, self.pause)
            entities.read_all(selections, out)
        except P4RuntimeError as e:
            self._fail(context, e)
        except E.EntryError as e:
            self._fail(context, from_entry_error(e))
        yield from out.responses(READ_CHUNK)

    # ------------------------------------------------------------------ stream channel
    def StreamChannel(self, request_iterator: Iterator[p4runtime_pb2.StreamMessageRequest],
                      context: grpc.ServicerContext) -> Iterator[p4runtime_pb2.StreamMessageResponse]:
        stream = _Stream(next(self.keys))
        with self.state_lock:
            full = len(self.streams) >= self.max_streams
            if not full:
                self.streams[stream.key] = stream
        if full:  # each stream pins a worker thread: past the bound, unary RPCs would starve
            self._fail(context, P4RuntimeError(Code.RESOURCE_EXHAUSTED,
                                               f"this switch serves at most {self.max_streams} open StreamChannels"))
        reader = threading.Thread(target=self._read_stream, args=(stream, request_iterator),
                                  name=f"p4rt-stream-{stream.key}", daemon=True)
        reader.start()
        context.add_callback(lambda: stream.close())
        try:
            while True:
                msg = stream.out.get()
                if msg is _Stream._CLOSE:
                    break
                yield msg
        finally:
            self._drop_stream(stream)
        if stream.abort is not None:
            context.abort(stream.abort.code, str(stream.abort))

    def _read_stream(self, stream: _Stream, request_iterator: Iterator) -> None:
        try:
            for request in request_iterator:
                if not self.stream_request(stream, request):
                    return
        except grpc.RpcError:
            pass  # client went away
        except Exception:  # noqa: BLE001 - a broken client must not take the server down
            log.exception("stream %s failed", stream.key)
        stream.close()

    def stream_request(self, stream: _Stream, request: p4runtime_pb2.StreamMessageRequest) -> bool:
        """Handle one message a client sent on its stream; False when the stream ends (a
        refused arbitration: ``stream.abort`` says why)."""
        kind = request.WhichOneof("update")
        try:
            if kind == "arbitration":
                self._arbitrate(stream, request.arbitration)
            elif kind == "packet":
                self._packet_out(stream, request.packet)
            elif kind == "digest_ack":
                self.digests.ack(request.digest_ack.digest_id, request.digest_ack.list_id)
            else:
                raise P4RuntimeError(Code.UNIMPLEMENTED, f"stream message {kind} is not supported")
        except P4RuntimeError as e:
            if kind == "arbitration":
                stream.close(e)
                return False
            self._stream_error(stream, request, e)
        return True

    def open_stream(self, deliver: Callable[[p4runtime_pb2.StreamMessageResponse], None],
                    deliver_packet_in: Callable[[PacketIn], None]) -> _Stream:
        """A StreamChannel for a client in this process (the virtual-time fabric): no gRPC and
        no threads; responses go to ``deliver`` as they are sent, packet-ins to
        ``deliver_packet_in`` as ``p4rt.packets.PacketIn``, requests come through
        :meth:`stream_request`, and :meth:`close_stream` ends it as a broken RPC would."""
        stream = _Stream(next(self.keys), deliver, deliver_packet_in)
        with self.state_lock:
            self.streams[stream.key] = stream
        return stream

    def close_stream(self, stream: _Stream) -> None:
        self._drop_stream(stream)

    def _stream_error(self, stream: _Stream, request: Any, e: P4RuntimeError) -> None:
        err = p4runtime_pb2.StreamError(canonical_code=rpc_code(e.code), message=str(e))
        if request.HasField("packet"):
            err.packet_out.packet_out.CopyFrom(request.packet)
        elif request.HasField("digest_ack"):
            err.digest_list_ack.digest_list_ack.CopyFrom(request.digest_ack)
        stream.send(p4runtime_pb2.StreamMessageResponse(error=err))

    def _arbitrate(self, stream: _Stream, update: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        if update.device_id != self.device.device_id:
            code = Code.FAILED_PRECONDITION if stream.election_id is not None else Code.NOT_FOUND
            raise P4RuntimeError(code, f"device id {update.device_id} does not exist "
                                       f"(this switch is device {self.device.device_id})")
        if update.role.name or update.role.id:
            raise P4RuntimeError(Code.NOT_FOUND, f"role {update.role.name or update.role.id!r} does not exist; "
                                                 "only the default role is configured")
        if not update.HasField("election_id"):
            raise P4RuntimeError(Code.INVALID_ARGUMENT, "arbitration without election id is not supported")
        election_id = election_id_of(update.election_id)
        with self.state_lock:
            notices = self.arbiter.update(stream.key, election_id)
            stream.election_id = election_id
            self._notify(notices)

    def _notify(self, notices: list[Notice]) -> None:
        """Send arbitration answers and remember the primary's stream, which packet-ins and
        digests go to (caller holds state_lock, after changing the arbiter): they read it
        without the lock, the packet-in route its handler (one attribute read a packet-in)."""
        key = self.arbiter.primary()
        self._primary = self.streams.get(key) if key is not None else None
        self._packet_in.deliver = self._primary.send_packet_in if self._primary is not None else None
        highest = self.arbiter.highest or 0
        for notice in notices:
            target = self.streams.get(notice.key)
            if target is None:
                continue
            resp = p4runtime_pb2.StreamMessageResponse()
            arb = resp.arbitration
            arb.device_id = self.device.device_id
            arb.election_id.high, arb.election_id.low = highest >> 64, highest & ((1 << 64) - 1)
            arb.status.code = rpc_code(notice.code)
            arb.status.message = "you are the primary" if notice.code == Code.OK else "a primary exists; you are a backup"
            target.send(resp)

    def _drop_stream(self, stream: _Stream) -> None:
        with self.state_lock:
            self.streams.pop(stream.key, None)
            if stream.election_id is not None:
                self._notify(self.arbiter.remove(stream.key))

    # ------------------------------------------------------------------ packet I/O
    def _packet_out(self, stream: _Stream, packet: p4runtime_pb2.PacketOut) -> None:
        with self.state_lock:  # other streams' threads change the arbiter
            primary = stream.election_id is not None and self.arbiter.is_primary(stream.election_id)
        if not primary:
            raise P4RuntimeError(Code.PERMISSION_DENIED, "only the primary may send packet-out")
        schema = self._schema()
        frame = packetio.encode_packet_out(schema.packet_out, packet)
        try:
            self.device.packet_out(frame)
        except ValueError as e:
            raise P4RuntimeError(Code.FAILED_PRECONDITION, str(e)) from None

    # ------------------------------------------------------------------ digests
    def _digest(self, message: Any) -> None:
        """Device callback: one DigestMessage(name, fields[(name, width, value)])."""
        schema = self.pipeline.schema
        info = schema.digests_by_name.get(message.name) if schema is not None else None
        if info is None:
            return
        data = p4data_pb2.P4Data()
        for _name, _width, value in message.fields:
            data.struct.members.add(bitstring=canonical(value))
        self.digests.add(info.preamble.id, data)

    def _send_digest_list(self, digest_list: p4runtime_pb2.DigestList) -> None:
        primary = self._primary
        if primary is None:
            self.digests.ack(digest_list.digest_id, digest_list.list_id)  # nobody to wait for
            self.stats["digest_lists_dropped"] += 1
            return
        primary.send(p4runtime_pb2.StreamMessageResponse(digest=digest_list))

    # ------------------------------------------------------------------ idle timeout
    def _scan_idle(self) -> None:
        """Send one IdleTimeoutNotification with every entry that idled out since the last
        scan. Scan and send happen under the device lock, so concurrent scans (the timer's
        and a caller's) queue their notifications in the order they scanned."""
        schema = self.pipeline.schema
        if schema is None or not schema.idle_tables:
            return  # the usual case costs no lock
        with self.device.lock:
            schema, program = self.pipeline.schema, self.device.program
            if schema is None or program is None:
                return
            msg = idle_notification(program, schema, self.now_ns())
            if msg is None:
                return
            primary = self._primary
            if primary is None:
                self.stats["idle_notifications_dropped"] += 1
                return
            primary.send(p4runtime_pb2.StreamMessageResponse(idle_timeout_notification=msg))

    def tick(self) -> bool:
        """Time-driven work: digest lists whose max_timeout passed, idle table entries.
        True while there is more of it to come (a list waits, the program has idle tables)."""
        waiting = self.digests.flush_due()
        self._scan_idle()
        schema = self.pipeline.schema
        return waiting or (schema is not None and bool(schema.idle_tables))
