"""A small P4Runtime client for data-plane tests and tools, target-agnostic.

It speaks only P4Runtime (official protobufs over gRPC), so the same PTF tests run against our
switch and against BMv2's ``simple_switch_grpc``. Names are P4Info names (``BasicIngress.ipv4_lpm``,
key ``hdr.ipv4.dstAddr``); values are ints, or strings in their usual notation
(``"10.0.0.1"``, ``"00:11:22:33:44:55"``). Match specs by kind:
exact ``v``; lpm ``"10.0.0.0/24"`` or ``(v, prefix_len)``; ternary ``(v, mask)``;
range ``(low, high)``; optional ``v``. A field left out of the match is a wildcard.
Every entity written through :meth:`P4RuntimeClient.insert` is remembered so a test's tearDown
can remove it with :meth:`P4RuntimeClient.undo_all`.
"""

from __future__ import annotations

import ipaddress
import queue
import threading
from pathlib import Path
from typing import Any, Iterable

import grpc
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

Value = int | str | bytes


def to_int(value: Value) -> int:
    """An int from an int, big-endian bytes, a MAC, an IPv4/IPv6 address or a number string."""
    if isinstance(value, int):
        return value
    if isinstance(value, bytes):
        return int.from_bytes(value, "big")
    text = value.strip()
    if text.count(":") == 5 and all(len(p) <= 2 for p in text.split(":")):
        return int(text.replace(":", ""), 16)
    try:
        return int(ipaddress.ip_address(text))
    except ValueError:
        return int(text, 0)


def encode(value: Value, width: int) -> bytes:
    """P4Runtime canonical bytestring (shortest big-endian) of a value that fits ``width``."""
    v = to_int(value)
    if v < 0 or v >> width:
        raise ValueError(f"value {value!r} does not fit in {width} bits")
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def load_p4info(path: str | Path) -> p4info_pb2.P4Info:
    info = p4info_pb2.P4Info()
    data = Path(path).read_bytes()
    if str(path).endswith((".txt", ".txtpb", ".pbtxt")):
        text_format.Merge(data.decode(), info)
    else:
        info.ParseFromString(data)
    return info


class P4Info:
    """Name lookups in a P4Info."""

    def __init__(self, info: p4info_pb2.P4Info) -> None:
        self.info = info

    def _find(self, kind: str, name: str) -> Any:
        for obj in getattr(self.info, kind):
            if obj.preamble.name == name or obj.preamble.alias == name:
                return obj
        known = ", ".join(o.preamble.name for o in getattr(self.info, kind))
        raise KeyError(f"no {kind[:-1]} named {name!r} in the P4Info (known: {known})")

    def table(self, name: str) -> p4info_pb2.Table:
        return self._find("tables", name)

    def action(self, name: str) -> p4info_pb2.Action:
        return self._find("actions", name)

    def counter(self, name: str) -> p4info_pb2.Counter:
        return self._find("counters", name)

    def action_profile(self, name: str) -> p4info_pb2.ActionProfile:
        return self._find("action_profiles", name)

    def controller_header(self, name: str) -> p4info_pb2.ControllerPacketMetadata:
        return self._find("controller_packet_metadata", name)

    def name_of_table(self, table_id: int) -> str:
        return next(t.preamble.name for t in self.info.tables if t.preamble.id == table_id)


class P4RuntimeClient:
    """One controller session: arbitration, pipeline push, writes, reads, packet I/O."""

    def __init__(self, address: str, device_id: int = 1, election_id: int = 1, timeout: float = 10.0) -> None:
        self.address = address
        self.device_id = device_id
        self.election_id = election_id
        self.timeout = timeout
        self.channel = grpc.insecure_channel(address)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            self.channel.close()
            raise ConnectionError(f"no P4Runtime server on {address} within {timeout} s") from None
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.p4info: P4Info | None = None
        self._requests: queue.Queue = queue.Queue()
        self.packet_ins: queue.Queue = queue.Queue()
        self.digests: queue.Queue = queue.Queue()
        self.stream_errors: queue.Queue = queue.Queue()  # StreamError messages (e.g. a bad packet-out)
        self._arbitration: queue.Queue = queue.Queue()
        self._written: list[p4runtime_pb2.Entity] = []
        self._stream = self.stub.StreamChannel(iter(self._requests.get, None))
        self._reader = threading.Thread(target=self._read_stream, daemon=True)
        self._reader.start()
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = device_id
        req.arbitration.election_id.low = election_id
        self._requests.put(req)
        try:
            reply = self._arbitration.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise ConnectionError(f"no arbitration answer from {address} within {timeout} s") from None
        if reply.status.code != 0:
            self.close()
            raise ConnectionError(f"not primary on {address}: {reply.status.message}")

    def _read_stream(self) -> None:
        try:
            for msg in self._stream:
                which = msg.WhichOneof("update")
                if which == "arbitration":
                    self._arbitration.put(msg.arbitration)
                elif which == "packet":
                    self.packet_ins.put(msg.packet)
                elif which == "digest":
                    self.digests.put(msg.digest)
                elif which == "error":
                    self.stream_errors.put(msg.error)
        except grpc.RpcError:
            pass  # the stream ends when the client or the switch closes it

    def close(self) -> None:
        self._requests.put(None)
        self.channel.close()

    def _election(self) -> p4runtime_pb2.Uint128:
        return p4runtime_pb2.Uint128(high=0, low=self.election_id)

    # ---- pipeline --------------------------------------------------------------------------
    def set_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes) -> None:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, election_id=self._election(),
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        self.stub.SetForwardingPipelineConfig(req, timeout=self.timeout * 6)
        self.p4info = P4Info(p4info)

    def fetch_p4info(self) -> P4Info:
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        self.p4info = P4Info(self.stub.GetForwardingPipelineConfig(req, timeout=self.timeout).config.p4info)
        return self.p4info

    def _info(self) -> P4Info:
        return self.p4info or self.fetch_p4info()

    # ---- entities ----------------------------------------------------------------------------
    def table_entry(self, table: str, match: dict[str, Any] | None = None, action: str | None = None,
                    params: dict[str, Value] | None = None, priority: int = 0,
                    default: bool = False) -> p4runtime_pb2.Entity:
        info = self._info()
        t = info.table(table)
        entity = p4runtime_pb2.Entity()
        te = entity.table_entry
        te.table_id = t.preamble.id
        te.priority = priority
        te.is_default_action = default
        fields = {f.name: f for f in t.match_fields}
        for name, spec in (match or {}).items():
            if name not in fields:
                raise KeyError(f"table {table} has no key {name!r} (keys: {', '.join(fields)})")
            f = fields[name]
            fm = te.match.add()
            fm.field_id = f.id
            kind = p4info_pb2.MatchField.MatchType.Name(f.match_type)
            if kind == "EXACT":
                fm.exact.value = encode(spec, f.bitwidth)
            elif kind == "LPM":
                if isinstance(spec, str) and "/" in spec:
                    addr, plen = spec.split("/")
                    spec = (addr, int(plen))
                value, plen = spec
                mask = ((1 << plen) - 1) << (f.bitwidth - plen) if plen else 0
                fm.lpm.value = encode(to_int(value) & mask, f.bitwidth)
                fm.lpm.prefix_len = plen
            elif kind == "TERNARY":
                value, mask = spec
                fm.ternary.value = encode(to_int(value) & to_int(mask), f.bitwidth)
                fm.ternary.mask = encode(mask, f.bitwidth)
            elif kind == "RANGE":
                fm.range.low = encode(spec[0], f.bitwidth)
                fm.range.high = encode(spec[1], f.bitwidth)
            elif kind == "OPTIONAL":
                fm.optional.value = encode(spec, f.bitwidth)
            else:
                raise ValueError(f"match kind {kind} of {table}.{name} is not supported here")
        if action is not None:
            a = info.action(action)
            te.action.action.action_id = a.preamble.id
            declared = {p.name: p for p in a.params}
            for pname, value in (params or {}).items():
                if pname not in declared:
                    raise KeyError(f"action {action} has no parameter {pname!r}")
                p = te.action.action.params.add()
                p.param_id = declared[pname].id
                p.value = encode(value, declared[pname].bitwidth)
        return entity

    def multicast_group(self, group_id: int, replicas: Iterable[tuple[int, int]]) -> p4runtime_pb2.Entity:
        """``replicas``: (egress port, instance/rid) pairs."""
        entity = p4runtime_pb2.Entity()
        mg = entity.packet_replication_engine_entry.multicast_group_entry
        mg.multicast_group_id = group_id
        for port, instance in replicas:
            mg.replicas.add(egress_port=port, instance=instance)
        return entity

    def clone_session(self, session_id: int, ports: Iterable[int], truncate: int = 0) -> p4runtime_pb2.Entity:
        entity = p4runtime_pb2.Entity()
        cs = entity.packet_replication_engine_entry.clone_session_entry
        cs.session_id = session_id
        cs.packet_length_bytes = truncate
        for port in ports:
            cs.replicas.add(egress_port=port, instance=0)
        return entity

    def write(self, entity: p4runtime_pb2.Entity, update_type: str = "INSERT") -> None:
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id, election_id=self._election())
        u = req.updates.add()
        u.type = p4runtime_pb2.Update.Type.Value(update_type)
        u.entity.CopyFrom(entity)
        self.stub.Write(req, timeout=self.timeout)

    def insert(self, entity: p4runtime_pb2.Entity) -> None:
        """INSERT and remember it for :meth:`undo_all`."""
        self.write(entity, "INSERT")
        self._written.append(entity)

    def modify(self, entity: p4runtime_pb2.Entity) -> None:
        self.write(entity, "MODIFY")

    def delete(self, entity: p4runtime_pb2.Entity) -> None:
        self.write(entity, "DELETE")
        self._written = [e for e in self._written if e != entity]

    def undo_all(self) -> None:
        """Delete everything inserted through this client, newest first."""
        while self._written:
            entity = self._written.pop()
            try:
                self.write(entity, "DELETE")
            except grpc.RpcError:
                pass  # already gone (e.g. the test deleted it itself)

    def read(self, entity: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.add().CopyFrom(entity)
        out = []
        for resp in self.stub.Read(req, timeout=self.timeout):
            out.extend(resp.entities)
        return out

    def read_table(self, table: str) -> list[p4runtime_pb2.TableEntry]:
        entity = p4runtime_pb2.Entity()
        entity.table_entry.table_id = self._info().table(table).preamble.id
        return [e.table_entry for e in self.read(entity)]

    def read_counter(self, counter: str, index: int) -> tuple[int, int]:
        """(packets, bytes) of an indirect counter cell."""
        entity = p4runtime_pb2.Entity()
        ce = entity.counter_entry
        ce.counter_id = self._info().counter(counter).preamble.id
        ce.index.index = index
        entries = self.read(entity)
        data = entries[0].counter_entry.data
        return data.packet_count, data.byte_count

    # ---- packet I/O --------------------------------------------------------------------------
    def packet_out(self, payload: bytes, **metadata: Value) -> None:
        """Send a packet-out; header fields not named (such as padding) are sent as 0."""
        meta = self._info().controller_header("packet_out")
        unknown = set(metadata) - {m.name for m in meta.metadata}
        if unknown:
            raise KeyError(f"packet_out has no metadata {', '.join(sorted(unknown))}")
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = payload
        for m in meta.metadata:
            req.packet.metadata.add(metadata_id=m.id, value=encode(metadata.get(m.name, 0), m.bitwidth))
        self._requests.put(req)

    def packet_in(self, timeout: float = 2.0) -> tuple[bytes, dict[str, int]]:
        """Next packet-in: (payload, metadata by name). Raises queue.Empty on timeout."""
        pkt = self.packet_ins.get(timeout=timeout)
        meta = self._info().controller_header("packet_in")
        names = {m.id: m.name for m in meta.metadata}
        return pkt.payload, {names.get(m.metadata_id, str(m.metadata_id)): int.from_bytes(m.value, "big") for m in pkt.metadata}
