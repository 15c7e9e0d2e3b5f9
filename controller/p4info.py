"""P4Info lookups and the translation between control-plane values and P4Runtime messages.

The controller speaks in the project's shared vocabulary (``p4switch.entries``: TableEntry with
Exact/Lpm/Ternary/... matches, ActionCall/MemberRef/GroupRef, CloneSession) and by P4Info
*names*; this module is the one place that turns those into P4Runtime protobufs (ids, canonical
byte strings) and back, so the rest of the controller never handles ids or byte encodings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4switch.entries import (
    ActionCall,
    CloneSession,
    CounterData,
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


class P4InfoError(KeyError):
    """A name the loaded P4 program does not have, or a value that does not fit."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


def encode(value: int, bitwidth: int) -> bytes:
    """P4Runtime canonical byte string: big-endian, no leading zero bytes, at least one byte."""
    if value < 0 or value >> bitwidth:
        raise P4InfoError(f"value {value} does not fit in {bitwidth} bits")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def decode(data: bytes) -> int:
    return int.from_bytes(data, "big")


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
        params = {name: (pid, width) for pid, name, width in self.action_params(call.name)}
        extra = set(call.params) - set(params)
        missing = set(params) - set(call.params)
        if extra or missing:
            raise P4InfoError(f"action {call.name}: expected parameters {sorted(params)},"
                              f" got {sorted(call.params)}")
        msg = p4runtime_pb2.Action(action_id=a.preamble.id)
        for name, value in call.params.items():
            pid, width = params[name]
            msg.params.add(param_id=pid, value=encode(value, width))
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
        for name, m in entry.match.items():
            k = keys[name]
            fm = msg.match.add(field_id=k.id)
            if isinstance(m, Exact):
                fm.exact.value = encode(m.value, k.bitwidth)
            elif isinstance(m, Lpm):
                if not 0 <= m.prefix_len <= k.bitwidth:
                    raise P4InfoError(f"{table}.{name}: prefix length {m.prefix_len} > {k.bitwidth}")
                if m.prefix_len == 0:  # P4Runtime: a /0 is expressed by leaving the field out
                    msg.match.pop()
                    continue
                mask = ((1 << m.prefix_len) - 1) << (k.bitwidth - m.prefix_len)
                fm.lpm.value = encode(m.value & mask, k.bitwidth)
                fm.lpm.prefix_len = m.prefix_len
            elif isinstance(m, Ternary):
                fm.ternary.value = encode(m.value & m.mask, k.bitwidth)
                fm.ternary.mask = encode(m.mask, k.bitwidth)
            elif isinstance(m, Range):
                fm.range.low = encode(m.low, k.bitwidth)
                fm.range.high = encode(m.high, k.bitwidth)
            elif isinstance(m, Optional):
                if m.value is None:
                    msg.match.pop()
                    continue
                fm.optional.value = encode(m.value, k.bitwidth)
            else:
                raise P4InfoError(f"unsupported match {m!r}")
        msg.priority = entry.priority
        act = entry.action
        if isinstance(act, ActionCall):
            msg.action.action.CopyFrom(self.action_pb(act))
        elif isinstance(act, MemberRef):
            msg.action.action_profile_member_id = act.member_id
        elif isinstance(act, GroupRef):
            msg.action.action_profile_group_id = act.group_id
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
        t = self.by_id("tables", msg.table_id)
        keys = {m.id: m for m in t.match_fields}
        match: dict[str, FieldMatch] = {}
        for fm in msg.match:
            name = keys[fm.field_id].name
            kind = fm.WhichOneof("field_match_type")
            if kind == "exact":
                match[name] = Exact(decode(fm.exact.value))
            elif kind == "lpm":
                match[name] = Lpm(decode(fm.lpm.value), fm.lpm.prefix_len)
            elif kind == "ternary":
                match[name] = Ternary(decode(fm.ternary.value), decode(fm.ternary.mask))
            elif kind == "range":
                match[name] = Range(decode(fm.range.low), decode(fm.range.high))
            elif kind == "optional":
                match[name] = Optional(decode(fm.optional.value))
        which = msg.action.WhichOneof("type")
        action: object
        if which == "action":
            a = self.by_id("actions", msg.action.action.action_id)
            pnames = {p.id: p.name for p in a.params}
            action = ActionCall(a.preamble.name, {pnames[p.param_id]: decode(p.value) for p in msg.action.action.params})
        elif which == "action_profile_member_id":
            action = MemberRef(msg.action.action_profile_member_id)
        elif which == "action_profile_group_id":
            action = GroupRef(msg.action.action_profile_group_id)
        else:
            action = None
        if msg.is_default_action:
            return t.preamble.name, None, action
        entry = TableEntry(match=match, action=action, priority=msg.priority)  # type: ignore[arg-type]
        if msg.HasField("counter_data"):
            entry.counter = CounterData(msg.counter_data.packet_count, msg.counter_data.byte_count)
        return t.preamble.name, entry, action


def format_value(name: str, bitwidth: int, value: int) -> str:
    """A key or parameter value the way an operator reads it: IPv4 addresses dotted, MAC
    addresses colon-separated (recognised by width and name), everything else in decimal."""
    leaf = name.rsplit(".", 1)[-1].lower()
    if bitwidth == 32 and ("ipv4" in name.lower() or leaf.endswith("_ip") or leaf in ("src_addr", "dst_addr")):
        return ".".join(str(value >> s & 0xFF) for s in (24, 16, 8, 0))
    if bitwidth == 48 and ("mac" in leaf or "ethernet" in name.lower()):
        return ":".join(f"{value >> s & 0xFF:02x}" for s in range(40, -1, -8))
    return str(value)


def format_match(m: FieldMatch, key: KeyInfo | None = None) -> str:
    """Human form of one key field, the way the CLI prints it; with the field's P4Info ``key``
    addresses read as addresses (``10.2.0.0/16``), without it values are numbers."""
    if key is not None and isinstance(m, (Exact, Lpm, Ternary)) and m.value is not None:
        text = format_value(key.name, key.bitwidth, m.value)
        if text != str(m.value):  # an address
            if isinstance(m, Lpm):
                return f"{text}/{m.prefix_len}"
            if isinstance(m, Ternary):
                return f"{text}&&&{format_value(key.name, key.bitwidth, m.mask)}"
            return text
    if isinstance(m, Exact):
        return str(m.value)
    if isinstance(m, Lpm):
        return f"{m.value:#x}/{m.prefix_len}"
    if isinstance(m, Ternary):
        return f"{m.value:#x}&&&{m.mask:#x}"
    if isinstance(m, Range):
        return f"{m.low}..{m.high}"
    return "*" if m.value is None else str(m.value)
