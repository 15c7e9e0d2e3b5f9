"""P4Info lookups by name, and the name-level encoders a controller or a test writes with.

Clients speak in the shared vocabulary (``p4rt.entries``: TableEntry with Exact/Lpm/Ternary/...
matches, ActionCall/MemberRef/GroupRef, CloneSession) and by P4Info *names* (full names, aliases
or unique suffixes); this module checks what they ask for against the P4Info (names, widths,
prefix lengths) with errors that name the program's objects, then hands the values to the one
codec (``p4rt.codec``) that our P4Runtime server uses too, so both ends encode alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4rt import codec, wire
from p4rt.bytestrings import canonical
from p4rt.entries import (
    ActionCall,
    CloneSession,
    Exact,
    FieldMatch,
    GroupRef,
    Lpm,
    MemberRef,
    Optional,
    Range,
    TableEntry,
    Ternary,
)
from p4rt.errors import P4InfoError
from p4rt.schema import Schema

CELL_READS_KEPT = 256  # selections whose Read entities P4InfoIndex keeps (a poller's few, a CLI's any)


def encode(value: int, bitwidth: int) -> bytes:
    """P4Runtime canonical byte string of a value that must fit in ``bitwidth`` bits."""
    if value < 0 or value >> bitwidth:
        raise P4InfoError(f"value {value} does not fit in {bitwidth} bits")
    return canonical(value)


def load_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """Read a P4Info file in text (.txt/.txtpb) or binary (.bin) protobuf format."""
    path = Path(path)
    info = p4info_pb2.P4Info()
    if path.suffix == ".bin":
        info.ParseFromString(path.read_bytes())
    else:
        text_format.Parse(path.read_text(), info)
    return info


@dataclass(frozen=True)
class KeyInfo:
    id: int
    name: str
    bitwidth: int
    match_type: int  # p4info_pb2.MatchField.MatchType


class P4InfoIndex:
    """Name <-> id maps over one P4Info, with the encoders for entries built on them."""

    def __init__(self, info: p4info_pb2.P4Info) -> None:
        self.info = info
        self.schema = Schema.build(info)
        self._by_name: dict[tuple[str, str], object] = {}
        self._by_id: dict[tuple[str, int], object] = {}
        for kind in ("tables", "actions", "action_profiles", "counters", "direct_counters",
                     "meters", "direct_meters", "registers", "digests", "controller_packet_metadata"):
            for obj in getattr(info, kind):
                pre = obj.preamble
                self._by_id[(kind, pre.id)] = obj
                self._by_name[(kind, pre.name)] = obj
                if pre.alias:
                    self._by_name.setdefault((kind, pre.alias), obj)
        self._cell_reads: dict[tuple[str, str, tuple[int, ...] | None], bytes] = {}

    # -- lookups -----------------------------------------------------------------------
    def resolve(self, kind: str, name: str) -> str:
        """Full P4Info name from a full name, an alias or a unique dotted suffix ("routing_v4"
        finds "MyIngress.routing.routing_v4"), so rules survive compilers naming nested
        control instances differently."""
        if (kind, name) in self._by_name:
            return self._by_name[(kind, name)].preamble.name
        hits = sorted(n for k, n in self._by_name if k == kind and n.endswith("." + name))
        full = {self._by_name[(kind, n)].preamble.name for n in hits}
        if len(full) == 1:
            return full.pop()
        if len(full) > 1:
            raise P4InfoError(f"{kind[:-1].replace('_', ' ')} name {name!r} is ambiguous: {', '.join(sorted(full))}")
        return self.get(kind, name).preamble.name  # raises the "has no" error with the list

    def get(self, kind: str, name: str):
        try:
            return self._by_name[(kind, name)]
        except KeyError:
            have = sorted(n for k, n in self._by_name if k == kind)
            raise P4InfoError(f"the P4 program has no {kind[:-1].replace('_', ' ')} {name!r}"
                              f" (it has: {', '.join(have) or 'none'})") from None

    def by_id(self, kind: str, id_: int):
        try:
            return self._by_id[(kind, id_)]
        except KeyError:
            raise P4InfoError(f"no {kind[:-1]} with id {id_}") from None

    def names(self, kind: str) -> list[str]:
        return sorted(obj.preamble.name for (k, _), obj in self._by_id.items() if k == kind)

    def has(self, kind: str, name: str) -> bool:
        return (kind, name) in self._by_name

    def table_keys(self, table: str) -> list[KeyInfo]:
        t = self.get("tables", table)
        return [KeyInfo(m.id, m.name, m.bitwidth, m.match_type) for m in t.match_fields]

    def action_params(self, action: str) -> list[tuple[int, str, int]]:
        return [(p.id, p.name, p.bitwidth) for p in self.get("actions", action).params]

    def packet_metadata(self, which: str) -> list[tuple[int, str, int]]:
        """(id, name, bitwidth) of the packet_in or packet_out header fields."""
        if not self.has("controller_packet_metadata", which):
            return []
        return [(m.id, m.name, m.bitwidth) for m in self.get("controller_packet_metadata", which).metadata]

    # -- encoders ---------------------------------------------------------------------
    def action_pb(self, call: ActionCall) -> p4runtime_pb2.Action:
        a = self.get("actions", call.name)
        params = {name: width for _, name, width in self.action_params(call.name)}
        if set(call.params) != set(params):
            raise P4InfoError(f"action {call.name}: expected parameters {sorted(params)},"
                              f" got {sorted(call.params)}")
        for name, value in call.params.items():
            encode(value, params[name])
        msg = p4runtime_pb2.Action()
        msg.MergeFromString(codec.action_call_bytes(self.schema, ActionCall(a.preamble.name, call.params)))
        return msg

    def table_entry_pb(self, table: str, entry: TableEntry | None, default: ActionCall | None = None
                       ) -> p4runtime_pb2.TableEntry:
        """An entry (or, with ``entry`` None, the default action ``default``) as a protobuf."""
        t = self.get("tables", table)
        msg = p4runtime_pb2.TableEntry(table_id=t.preamble.id)
        if entry is None:
            msg.is_default_action = True
            if default is not None:
                msg.action.action.CopyFrom(self.action_pb(default))
            return msg
        keys = {k.name: k for k in self.table_keys(table)}
        unknown = set(entry.match) - set(keys)
        if unknown:
            raise P4InfoError(f"table {table} has no key field(s) {sorted(unknown)} (keys: {sorted(keys)})")
        match = {name: _fitted(f"{table}.{name}", m, keys[name].bitwidth) for name, m in entry.match.items()}
        msg.MergeFromString(codec.match_bytes(self.schema.tables[t.preamble.id], match))
        msg.priority = entry.priority
        if isinstance(entry.action, ActionCall):
            msg.action.action.CopyFrom(self.action_pb(entry.action))
        elif entry.action is not None:  # None: a key alone, e.g. for a DELETE
            msg.action.MergeFromString(codec.table_action_bytes(self.schema, entry.action))
        return msg

    def member_pb(self, profile: str, member_id: int, call: ActionCall) -> p4runtime_pb2.ActionProfileMember:
        prof = self.get("action_profiles", profile)
        msg = p4runtime_pb2.ActionProfileMember(action_profile_id=prof.preamble.id, member_id=member_id)
        msg.action.CopyFrom(self.action_pb(call))
        return msg

    def group_pb(self, profile: str, group_id: int, members: list[tuple[int, int]],
                 max_size: int = 0) -> p4runtime_pb2.ActionProfileGroup:
        prof = self.get("action_profiles", profile)
        msg = p4runtime_pb2.ActionProfileGroup(action_profile_id=prof.preamble.id, group_id=group_id,
                                               max_size=max_size or prof.max_group_size or len(members))
        for mid, weight in members:
            msg.members.add(member_id=mid, weight=weight)
        return msg

    def register_pb(self, register: str, index: int | None) -> p4runtime_pb2.RegisterEntry:
        """A register read: one cell, or every cell with ``index`` None."""
        reg = self.get("registers", register)
        msg = p4runtime_pb2.RegisterEntry(register_id=reg.preamble.id)
        if index is not None:
            if not 0 <= index < reg.size:
                raise P4InfoError(f"register {register}: index {index} outside 0..{reg.size - 1}")
            msg.index.index = index
        return msg

    def counter_pb(self, counter: str, index: int | None) -> p4runtime_pb2.CounterEntry:
        c = self.get("counters", counter)
        msg = p4runtime_pb2.CounterEntry(counter_id=c.preamble.id)
        if index is not None:
            msg.index.index = index
        return msg

    def cell_reads(self, kind: str, name: str, indices: Iterable[int] | None) -> bytes:
        """The encoded ReadRequest entities (``wire.read_entities``) of cells ``indices`` of a
        counter or register (``kind`` "counters" or "registers"; every cell with None), for a
        connection's ``read_encoded``. Made once per selection: a poller reads the same cells
        every sample, and building their messages cost as much as the switch's reading them."""
        key = (kind, name, None if indices is None else tuple(indices))
        encoded = self._cell_reads.get(key)
        if encoded is None:
            build, field = ((self.counter_pb, "counter_entry") if kind == "counters"
                            else (self.register_pb, "register_entry"))
            built = []
            for index in [None] if key[2] is None else key[2]:
                entity = p4runtime_pb2.Entity()
                getattr(entity, field).CopyFrom(build(name, index))
                built.append(entity)
            if len(self._cell_reads) >= CELL_READS_KEPT:
                self._cell_reads.clear()
            encoded = self._cell_reads[key] = wire.read_entities(built)
        return encoded

    @staticmethod
    def clone_session_pb(cs: CloneSession) -> p4runtime_pb2.PacketReplicationEngineEntry:
        msg = p4runtime_pb2.PacketReplicationEngineEntry()
        s = msg.clone_session_entry
        s.session_id = cs.session_id
        s.class_of_service = cs.cos
        s.packet_length_bytes = cs.truncate
        for r in cs.replicas:
            s.replicas.add(egress_port=r.port, instance=r.instance)
        return msg

    # -- decoders ---------------------------------------------------------------------
    def table_entry_from_pb(self, msg: p4runtime_pb2.TableEntry) -> tuple[str, TableEntry | None, object]:
        """(table name, TableEntry or None for a default entry, action) for display and diffing."""
        ts = self.schema.table(msg.table_id)
        which = msg.action.WhichOneof("type")
        action: object = None
        if which == "action":  # what a switch holds needs no check against the table's action refs
            action = codec.action_call_from_proto(self.schema, msg.action.action)
        elif which == "action_profile_member_id":
            action = MemberRef(msg.action.action_profile_member_id)
        elif which == "action_profile_group_id":
            action = GroupRef(msg.action.action_profile_group_id)
        if msg.is_default_action:
            return ts.name, None, action
        entry = TableEntry(match=codec.match_from_proto(ts, msg.match), action=action,  # type: ignore[arg-type]
                           priority=msg.priority)
        if msg.HasField("counter_data"):
            entry.counter = codec.counter_from_proto(msg.counter_data)
        return ts.name, entry, action


def _fitted(what: str, m: FieldMatch, width: int) -> FieldMatch:
    """A key field checked against its width, with the bits P4Runtime wants cleared (past an
    LPM prefix, outside a ternary mask) cleared."""
    if isinstance(m, Exact):
        encode(m.value, width)
    elif isinstance(m, Lpm):
        if not 0 <= m.prefix_len <= width:
            raise P4InfoError(f"{what}: prefix length {m.prefix_len} > {width}")
        value = m.value & ((1 << m.prefix_len) - 1) << (width - m.prefix_len)
        encode(value, width)
        return Lpm(value, m.prefix_len)
    elif isinstance(m, Ternary):
        encode(m.mask, width)
        return Ternary(m.value & m.mask, m.mask)
    elif isinstance(m, Range):
        encode(m.low, width)
        encode(m.high, width)
    elif isinstance(m, Optional):
        if m.value is not None:
            encode(m.value, width)
    else:
        raise P4InfoError(f"unsupported match {m!r}")
    return m
