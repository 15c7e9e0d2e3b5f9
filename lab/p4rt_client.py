"""The P4Runtime client of data-plane tests and tools: test notation over the controller's session.

The session itself (arbitration, pipeline push, batched writes, reads, packet I/O, digest acks,
errors with per-update details) is the controller's :class:`p4rt.switch_conn.SwitchConnection`,
and names become ids and canonical byte strings in :class:`p4rt.p4info.P4InfoIndex`: one
P4Runtime client and one P4Info encoder in the project. What this module adds is what a test
wants on top: values written the way a test reads them, packet-ins and digests in queues to
wait on, and cleanup. It speaks only P4Runtime, so the same PTF tests run against our switch and
against BMv2's ``simple_switch_grpc``.

Names are P4Info names (``BasicIngress.ipv4_lpm``, key ``hdr.ipv4.dstAddr``); values are ints,
or strings in their usual notation (``"10.0.0.1"``, ``"00:11:22:33:44:55"``). Match specs by
kind: exact ``v``; lpm ``"10.0.0.0/24"`` or ``(v, prefix_len)``; ternary ``(v, mask)``;
range ``(low, high)``; optional ``v``. A field left out of the match is a wildcard.
Every entity written through :meth:`P4RuntimeClient.insert` is remembered so a test's tearDown
can remove it with :meth:`P4RuntimeClient.undo_all`.
"""

from __future__ import annotations

import ipaddress
import queue
from collections.abc import Iterable
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4rt.entries import ActionCall, CloneSession, Exact, FieldMatch, Lpm, Optional, Range, Replica, TableEntry, Ternary
from p4rt.errors import P4InfoError, P4RuntimeError
from p4rt.p4info import P4InfoIndex, encode
from p4rt.switch_conn import SwitchConnection

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


def field_match(kind: int, spec: Any) -> FieldMatch:
    """One key field in test notation as the shared vocabulary's match of P4Info kind ``kind``."""
    name = p4info_pb2.MatchField.MatchType.Name(kind)
    if name == "EXACT":
        return Exact(to_int(spec))
    if name == "LPM":
        if isinstance(spec, str) and "/" in spec:
            addr, plen = spec.split("/")
            spec = (addr, int(plen))
        value, plen = spec
        return Lpm(to_int(value), plen)
    if name == "TERNARY":
        return Ternary(to_int(spec[0]), to_int(spec[1]))
    if name == "RANGE":
        return Range(to_int(spec[0]), to_int(spec[1]))
    if name == "OPTIONAL":
        return Optional(to_int(spec))
    raise ValueError(f"match kind {name} is not supported here")


class P4RuntimeClient:
    """A primary controller session for a test: connects (and arbitrates) on construction."""

    def __init__(self, address: str, device_id: int = 1, election_id: int = 1, timeout: float = 10.0) -> None:
        self.packet_ins: queue.Queue[p4runtime_pb2.PacketIn] = queue.Queue()
        self.digests: queue.Queue[p4runtime_pb2.DigestList] = queue.Queue()
        self.conn = SwitchConnection(f"device {device_id}", address, device_id, election_id,
                                     on_packet_in=self.packet_ins.put, on_digest=self.digests.put)
        self.conn.connect(timeout)
        self.p4info: P4InfoIndex | None = None
        self._written: list[p4runtime_pb2.Entity] = []

    def close(self) -> None:
        self.conn.close()

    # ---- pipeline --------------------------------------------------------------------------
    def set_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes) -> None:
        self.conn.set_pipeline(p4info, device_config)
        self.p4info = P4InfoIndex(p4info)

    def fetch_p4info(self) -> P4InfoIndex:
        self.p4info = P4InfoIndex(self.conn.get_pipeline().p4info)
        return self.p4info

    def _info(self) -> P4InfoIndex:
        return self.p4info or self.fetch_p4info()

    # ---- entities ----------------------------------------------------------------------------
    def table_entry(self, table: str, match: dict[str, Any] | None = None, action: str | None = None,
                    params: dict[str, Value] | None = None, priority: int = 0,
                    default: bool = False) -> p4runtime_pb2.Entity:
        info = self._info()
        call = None if action is None else ActionCall(action, {k: to_int(v) for k, v in (params or {}).items()})
        entity = p4runtime_pb2.Entity()
        if default:
            entity.table_entry.CopyFrom(info.table_entry_pb(table, None, call))
            return entity
        kinds = {k.name: k.match_type for k in info.table_keys(table)}
        unknown = set(match or {}) - set(kinds)
        if unknown:
            raise P4InfoError(f"table {table} has no key {', '.join(sorted(unknown))} (keys: {', '.join(kinds)})")
        entry = TableEntry({name: field_match(kinds[name], spec) for name, spec in (match or {}).items()},
                           call, priority)  # type: ignore[arg-type]  # no action: the caller sets one
        entity.table_entry.CopyFrom(info.table_entry_pb(table, entry))
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
        session = CloneSession(session_id, [Replica(port, 0) for port in ports], truncate=truncate)
        entity.packet_replication_engine_entry.CopyFrom(P4InfoIndex.clone_session_pb(session))
        return entity

    def write(self, entity: p4runtime_pb2.Entity, update_type: str = "INSERT") -> None:
        update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.Type.Value(update_type))
        update.entity.CopyFrom(entity)
        self.conn.write([update])

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
            except P4RuntimeError:
                pass  # already gone (e.g. the test deleted it itself)

    def read(self, entity: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        return self.conn.read([entity])

    def read_table(self, table: str) -> list[p4runtime_pb2.TableEntry]:
        entity = p4runtime_pb2.Entity()
        entity.table_entry.table_id = self._info().get("tables", table).preamble.id
        return [e.table_entry for e in self.read(entity)]

    def read_counter(self, counter: str, index: int) -> tuple[int, int]:
        """(packets, bytes) of an indirect counter cell."""
        entity = p4runtime_pb2.Entity()
        entity.counter_entry.CopyFrom(self._info().counter_pb(counter, index))
        data = self.read(entity)[0].counter_entry.data
        return data.packet_count, data.byte_count

    # ---- packet I/O --------------------------------------------------------------------------
    def packet_out(self, payload: bytes, **metadata: Value) -> None:
        """Send a packet-out; header fields not named (such as padding) are sent as 0."""
        fields = self._info().packet_metadata("packet_out")
        unknown = set(metadata) - {name for _, name, _ in fields}
        if unknown:
            raise KeyError(f"packet_out has no metadata {', '.join(sorted(unknown))}")
        self.conn.packet_out(payload, [(mid, encode(to_int(metadata.get(name, 0)), width))
                                       for mid, name, width in fields])

    def packet_in(self, timeout: float = 2.0) -> tuple[bytes, dict[str, int]]:
        """Next packet-in: (payload, metadata by name). Raises queue.Empty on timeout."""
        pkt = self.packet_ins.get(timeout=timeout)
        names = {mid: name for mid, name, _ in self._info().packet_metadata("packet_in")}
        return pkt.payload, {names.get(m.metadata_id, str(m.metadata_id)): int.from_bytes(m.value, "big") for m in pkt.metadata}
