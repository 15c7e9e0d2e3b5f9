"""Id-indexed view of a P4Info, the lookups the server makes on every request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4.config.v1 import p4info_pb2

from p4rt.errors import invalid

_PRIORITY_KINDS = (p4info_pb2.MatchField.TERNARY, p4info_pb2.MatchField.RANGE, p4info_pb2.MatchField.OPTIONAL)


@dataclass(frozen=True, slots=True)
class Field:
    """What requests are checked against of a match field or action parameter, as plain
    values: attribute reads of the pure-Python P4Info messages cost a microsecond each."""

    id: int
    name: str
    bitwidth: int
    match_type: int = 0


@dataclass
class TableSchema:
    """A table's P4Info with its match fields and action refs by id, the ids of its direct
    counter and meter (0: none), and the values every write reads, copied out of the P4Info."""

    info: p4info_pb2.Table
    fields: dict[int, Field]
    actions: dict[int, p4info_pb2.ActionRef]
    needs_priority: bool
    direct_counter: int = 0
    direct_meter: int = 0

    def __post_init__(self) -> None:
        self.name: str = self.info.preamble.name
        self.id: int = self.info.preamble.id
        self.key: list[Field] = list(self.fields.values())  # P4Info order
        self.exact_ids = frozenset(f.id for f in self.key if f.match_type == p4info_pb2.MatchField.EXACT)
        self.scopes: dict[int, int] = {ref.id: ref.scope for ref in self.actions.values()}
        self.is_const: bool = self.info.is_const_table
        self.profile_id: int = self.info.implementation_id
        self.const_default_id: int = self.info.const_default_action_id

    @property
    def idle_timeout(self) -> bool:
        """Entries may have a TTL (P4 ``support_timeout = true``)."""
        return self.info.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL


@dataclass
class Schema:
    """Every P4Info object by id (and digests also by name, as the data plane names them).
    Built once per pipeline config, so a request costs dict lookups, not P4Info scans."""

    p4info: p4info_pb2.P4Info
    tables: dict[int, TableSchema] = field(default_factory=dict)
    idle_tables: list[TableSchema] = field(default_factory=list)  # those with support_timeout
    actions: dict[int, p4info_pb2.Action] = field(default_factory=dict)
    action_ids: dict[str, int] = field(default_factory=dict)
    action_names: dict[int, str] = field(default_factory=dict)
    params: dict[int, dict[int, Field]] = field(default_factory=dict)
    profiles: dict[int, p4info_pb2.ActionProfile] = field(default_factory=dict)
    counters: dict[int, p4info_pb2.Counter] = field(default_factory=dict)
    direct_counters: dict[int, p4info_pb2.DirectCounter] = field(default_factory=dict)
    meters: dict[int, p4info_pb2.Meter] = field(default_factory=dict)
    direct_meters: dict[int, p4info_pb2.DirectMeter] = field(default_factory=dict)
    registers: dict[int, p4info_pb2.Register] = field(default_factory=dict)
    value_sets: dict[int, p4info_pb2.ValueSet] = field(default_factory=dict)
    digests: dict[int, p4info_pb2.Digest] = field(default_factory=dict)
    digests_by_name: dict[str, p4info_pb2.Digest] = field(default_factory=dict)
    packet_in: p4info_pb2.ControllerPacketMetadata | None = None
    packet_out: p4info_pb2.ControllerPacketMetadata | None = None

    @classmethod
    def build(cls, p4info: p4info_pb2.P4Info) -> Schema:
        s = cls(p4info)
        for a in p4info.actions:
            s.actions[a.preamble.id] = a
            s.action_ids[a.preamble.name] = a.preamble.id
            s.action_names[a.preamble.id] = a.preamble.name
            s.params[a.preamble.id] = {p.id: Field(p.id, p.name, p.bitwidth) for p in a.params}
        for c in p4info.direct_counters:
            s.direct_counters[c.preamble.id] = c
        for m in p4info.direct_meters:
            s.direct_meters[m.preamble.id] = m
        for t in p4info.tables:
            ts = TableSchema(t, {f.id: Field(f.id, f.name, f.bitwidth, f.match_type) for f in t.match_fields},
                             {r.id: r for r in t.action_refs},
                             any(f.match_type in _PRIORITY_KINDS for f in t.match_fields))
            for rid in t.direct_resource_ids:
                if rid in s.direct_counters:
                    ts.direct_counter = rid
                elif rid in s.direct_meters:
                    ts.direct_meter = rid
            s.tables[t.preamble.id] = ts
            if ts.idle_timeout:
                s.idle_tables.append(ts)
        s.profiles = {p.preamble.id: p for p in p4info.action_profiles}
        s.counters = {c.preamble.id: c for c in p4info.counters}
        s.meters = {m.preamble.id: m for m in p4info.meters}
        s.registers = {r.preamble.id: r for r in p4info.registers}
        s.value_sets = {v.preamble.id: v for v in p4info.value_sets}
        s.digests = {d.preamble.id: d for d in p4info.digests}
        s.digests_by_name = {d.preamble.name: d for d in p4info.digests}
        for h in p4info.controller_packet_metadata:
            if h.preamble.name == "packet_in":
                s.packet_in = h
            elif h.preamble.name == "packet_out":
                s.packet_out = h
        return s

    def table(self, table_id: int) -> TableSchema:
        return self.lookup("table", self.tables, table_id)

    def action(self, action_id: int) -> p4info_pb2.Action:
        return self.lookup("action", self.actions, action_id)

    @staticmethod
    def lookup(kind: str, objects: dict[int, Any], obj_id: int) -> Any:
        """``objects[obj_id]``; an id the P4Info does not have is INVALID_ARGUMENT."""
        obj = objects.get(obj_id)
        if obj is None:
            raise invalid(f"unknown {kind} id {obj_id}")
        return obj
