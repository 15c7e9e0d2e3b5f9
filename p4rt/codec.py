"""P4Runtime protobuf entities <-> the control-plane values of ``p4rt.entries``: the one codec,
used by our P4Runtime server and (through ``p4rt.p4info``) by clients.

Requests come in as protobuf messages; answers go out as encoded messages (``*_bytes``), which
callers that need a protobuf message parse (building messages field by field through the
protobuf API is the slow part of a large Read; see ``p4rt.wire``).

All validation the P4Runtime spec asks of a server happens here, before a target sees a
value: ids must exist in the P4Info, byte strings must fit their bit width, LPM values must
have no bits past the prefix, ternary values no bits outside the mask, "don't care" fields
must be omitted, and the priority must be set exactly when a table has ternary, range or
optional fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4rt import entries as E
from p4rt import wire as W
from p4rt.bytestrings import canonical, to_int, values_by_id
from p4rt.errors import Code, P4RuntimeError, invalid
from p4rt.schema import Field, Schema, TableSchema

MF = p4info_pb2.MatchField
_KIND_OF = {MF.EXACT: "exact", MF.LPM: "lpm", MF.TERNARY: "ternary", MF.RANGE: "range", MF.OPTIONAL: "optional"}


# --- match keys -------------------------------------------------------------------------------
def match_from_proto(ts: TableSchema, matches: Iterable[p4runtime_pb2.FieldMatch]) -> dict[str, E.FieldMatch]:
    """The match of an entry by field name, every P4Runtime rule on match values checked."""
    result: dict[str, E.FieldMatch] = {}
    seen: set[int] = set()
    for m in matches:
        info = ts.fields.get(m.field_id)
        if info is None:
            raise invalid(f"{ts.name}: unknown match field id {m.field_id}")
        if m.field_id in seen:
            raise invalid(f"{ts.name}: match field {info.name} given twice")
        seen.add(m.field_id)
        result[info.name] = _field_from_proto(ts.name, info, m)
    if not ts.exact_ids <= seen:
        missing = next(info for info in ts.key if info.id in ts.exact_ids and info.id not in seen)
        raise invalid(f"{ts.name}: exact match field {missing.name} is missing")
    return result


def _field_from_proto(table: str, info: Field, m: p4runtime_pb2.FieldMatch) -> E.FieldMatch:
    kind = m.WhichOneof("field_match_type")
    expected = _KIND_OF.get(info.match_type)
    what = f"{table}: field {info.name}"
    if kind != expected:
        raise invalid(f"{what} is {expected or 'unsupported'} match, got {kind}")
    w = info.bitwidth
    if kind == "exact":
        return E.Exact(to_int(m.exact.value, w, what))
    if kind == "lpm":
        value, plen = to_int(m.lpm.value, w, what), m.lpm.prefix_len
        if not 0 < plen <= w:
            raise invalid(f"{what}: prefix length {plen} out of range 1..{w} (omit the field for /0)")
        if value & ((1 << (w - plen)) - 1):
            raise invalid(f"{what}: LPM value has bits set past the /{plen} prefix")
        return E.Lpm(value, plen)
    if kind == "ternary":
        value, mask = to_int(m.ternary.value, w, what), to_int(m.ternary.mask, w, what)
        if mask == 0:
            raise invalid(f"{what}: all-zero ternary mask; omit the field for a wildcard")
        if value & ~mask:
            raise invalid(f"{what}: ternary value has bits set outside the mask")
        return E.Ternary(value, mask)
    if kind == "range":
        low, high = to_int(m.range.low, w, what), to_int(m.range.high, w, what)
        if low > high:
            raise invalid(f"{what}: range low 0x{low:x} > high 0x{high:x}")
        if low == 0 and high == (1 << w) - 1:
            raise invalid(f"{what}: full range; omit the field for a wildcard")
        return E.Range(low, high)
    return E.Optional(to_int(m.optional.value, w, what))


def _field_match_bytes(info: Field, fm: E.FieldMatch) -> bytes:
    """One FieldMatch message (canonical byte strings), or b"" for a wildcard."""
    if isinstance(fm, E.Exact):
        body = W.bytes_field(_EXACT_VALUE, canonical(fm.value))
        kind = _FM_EXACT
    elif isinstance(fm, E.Lpm):
        if not fm.prefix_len:
            return b""
        body = W.bytes_field(_LPM_VALUE, canonical(fm.value)) + W.varint_field(_LPM_PLEN, fm.prefix_len)
        kind = _FM_LPM
    elif isinstance(fm, E.Ternary):
        if not fm.mask:
            return b""
        body = W.bytes_field(_TERNARY_VALUE, canonical(fm.value)) + W.bytes_field(_TERNARY_MASK, canonical(fm.mask))
        kind = _FM_TERNARY
    elif isinstance(fm, E.Range):
        body = W.bytes_field(_RANGE_LOW, canonical(fm.low)) + W.bytes_field(_RANGE_HIGH, canonical(fm.high))
        kind = _FM_RANGE
    elif isinstance(fm, E.Optional) and fm.value is not None:
        body = W.bytes_field(_OPTIONAL_VALUE, canonical(fm.value))
        kind = _FM_OPTIONAL
    else:
        return b""
    return W.bytes_field(_TE_MATCH, W.varint_field(_FM_FIELD_ID, info.id) + W.bytes_field(kind, body))


def match_bytes(ts: TableSchema, match: dict[str, E.FieldMatch]) -> bytes:
    """The ``match`` fields of a TableEntry (P4Info order, canonical byte strings, wildcards
    left out)."""
    return b"".join(_field_match_bytes(info, match[info.name]) for info in ts.key if info.name in match)


# --- actions ----------------------------------------------------------------------------------
def action_call_from_proto(schema: Schema, action: p4runtime_pb2.Action) -> E.ActionCall:
    action_id = action.action_id
    params = schema.params.get(action_id)
    if params is None:
        raise invalid(f"unknown action id {action_id}")
    name = schema.action_names[action_id]
    values = values_by_id(params, ((p.param_id, p.value) for p in action.params), f"action {name}", "parameter")
    return E.ActionCall(name, {params[pid].name: v for pid, v in values.items()})


def action_call_bytes(schema: Schema, call: E.ActionCall) -> bytes:
    """An Action message: the action id and every parameter in P4Info order."""
    action_id = schema.action_ids[call.name]
    params = call.params
    out = [W.varint_field(_ACTION_ID, action_id)]
    for p in schema.actions[action_id].params:
        out.append(W.bytes_field(_ACTION_PARAMS, W.varint_field(_PARAM_ID, p.id)
                                 + W.bytes_field(_PARAM_VALUE, canonical(params.get(p.name, 0)))))
    return b"".join(out)


def table_action_from_proto(schema: Schema, ts: TableSchema, ta: p4runtime_pb2.TableAction,
                            default: bool) -> E.EntryAction:
    kind = ta.WhichOneof("type")
    if kind is None:
        raise invalid(f"{ts.name}: entry has no action")
    if kind == "action_profile_action_set":  # table entries handle these (oneshot.py)
        raise P4RuntimeError(Code.UNIMPLEMENTED, "one-shot action sets are only supported in table entries")
    if ts.profile_id:
        if kind == "action":
            raise invalid(f"{ts.name} has an action profile: use a member or group id")
        if kind == "action_profile_group_id":
            if not schema.profiles[ts.profile_id].with_selector:
                raise invalid(f"{ts.name}: its action profile has no selector, so no groups")
            return E.GroupRef(ta.action_profile_group_id)
        return E.MemberRef(ta.action_profile_member_id)
    if kind != "action":
        raise invalid(f"{ts.name} has no action profile: give an action, not a {kind}")
    action = ta.action
    scope = ts.scopes.get(action.action_id)
    if scope is None:
        raise invalid(f"{ts.name}: action id {action.action_id} is not one of the table's actions")
    if default and scope == p4info_pb2.ActionRef.TABLE_ONLY:
        raise invalid(f"{ts.name}: action {schema.action_names[action.action_id]} is @tableonly")
    if not default and scope == p4info_pb2.ActionRef.DEFAULT_ONLY:
        raise invalid(f"{ts.name}: action {schema.action_names[action.action_id]} is @defaultonly")
    return action_call_from_proto(schema, action)


def table_action_bytes(schema: Schema, action: E.EntryAction) -> bytes:
    """A TableAction message: a member, a group or a direct action."""
    if isinstance(action, E.MemberRef):
        return W.varint_field(_TA_MEMBER, action.member_id)
    if isinstance(action, E.GroupRef):
        return W.varint_field(_TA_GROUP, action.group_id)
    return W.bytes_field(_TA_ACTION, action_call_bytes(schema, action))


def action_set_bytes(action_set: p4runtime_pb2.ActionProfileActionSet) -> bytes:
    """A TableAction message carrying a one-shot action set."""
    return W.bytes_field(_TAN["action_profile_action_set"], action_set.SerializeToString())


# --- counters and meters ----------------------------------------------------------------------
def counter_from_proto(data: p4runtime_pb2.CounterData) -> E.CounterData:
    return E.CounterData(packets=data.packet_count, bytes=data.byte_count)


def counter_bytes(data: E.CounterData | None) -> bytes:
    """A CounterData message (zero counts left out, as protobuf does)."""
    if data is None:
        return b""
    return W.varint_field(_CD_BYTES, data.bytes) + W.varint_field(_CD_PACKETS, data.packets)


def meter_from_proto(cfg: p4runtime_pb2.MeterConfig) -> E.MeterConfig:
    if cfg.cir > cfg.pir:
        raise invalid(f"meter config: cir {cfg.cir} exceeds pir {cfg.pir}")
    if min(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst) < 0:
        raise invalid("meter config: rates and bursts must not be negative")
    return E.MeterConfig(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst)


def meter_bytes(cfg: E.MeterConfig) -> bytes:
    """A MeterConfig message."""
    return (W.varint_field(_MC["cir"], cfg.cir) + W.varint_field(_MC["cburst"], cfg.cburst)
            + W.varint_field(_MC["pir"], cfg.pir) + W.varint_field(_MC["pburst"], cfg.pburst))


# --- whole table entries ----------------------------------------------------------------------
def entry_from_proto(schema: Schema, ts: TableSchema, msg: p4runtime_pb2.TableEntry,
                     need_action: bool) -> E.TableEntry:
    match = match_from_proto(ts, msg.match)
    if ts.needs_priority and msg.priority <= 0:
        raise invalid(f"{ts.name} has ternary, range or optional fields: entries need a priority > 0")
    if not ts.needs_priority and msg.priority != 0:
        raise invalid(f"{ts.name} has only exact/LPM fields: priority must be 0")
    action: E.EntryAction = E.ActionCall("")
    if need_action:
        action = table_action_from_proto(schema, ts, msg.action, default=False)
    entry = E.TableEntry(match=match, action=action, priority=msg.priority, metadata=msg.metadata)
    if msg.HasField("counter_data"):
        if not ts.direct_counter:
            raise invalid(f"{ts.name} has no direct counter")
        entry.counter = counter_from_proto(msg.counter_data)
    if msg.HasField("meter_config"):
        if not ts.direct_meter:
            raise invalid(f"{ts.name} has no direct meter")
        entry.meter = meter_from_proto(msg.meter_config)
    if msg.idle_timeout_ns:
        if not ts.idle_timeout:
            raise invalid(f"{ts.name} does not support idle timeout")
        entry.idle_timeout_ns = msg.idle_timeout_ns
    return entry


def entry_bytes(schema: Schema, ts: TableSchema, entry: E.TableEntry, with_counter: bool = False,
                with_meter: bool = False, action: bytes | None = None, is_const: bool = False,
                elapsed_ns: int | None = None) -> bytes:
    """A TableEntry message for ``entry``; ``action`` replaces the TableAction message (the
    one-shot action sets), ``elapsed_ns`` is the time since the last hit when asked for."""
    out = [W.varint_field(_TE["table_id"], ts.id), match_bytes(ts, entry.match),
           W.bytes_field(_TE_ACTION, table_action_bytes(schema, entry.action) if action is None else action),
           W.varint_field(_TE["priority"], entry.priority)]
    if with_meter and ts.direct_meter and entry.meter is not None:
        out.append(W.bytes_field(_TE["meter_config"], meter_bytes(entry.meter)))
    if with_counter and ts.direct_counter:
        out.append(W.bytes_field(_TE["counter_data"], counter_bytes(entry.counter)))
    out.append(W.varint_field(_TE["idle_timeout_ns"], entry.idle_timeout_ns))
    if elapsed_ns is not None:
        out.append(W.bytes_field(_TE["time_since_last_hit"], W.varint_field(1, max(0, elapsed_ns))))
    out.append(W.bytes_field(_TE["metadata"], entry.metadata, keep_empty=False))
    if is_const:
        out.append(W.varint_field(_TE["is_const"], 1))
    return b"".join(out)


def default_entry_bytes(schema: Schema, ts: TableSchema, default: Any) -> bytes:
    """The TableEntry of a table's default action (its action left out when it is not one
    the P4Info names)."""
    out = [W.varint_field(_TE["table_id"], ts.id), W.varint_field(_TE["is_default_action"], 1)]
    if isinstance(default, E.ActionCall) and default.name in schema.action_ids:
        out.insert(1, W.bytes_field(_TE_ACTION, table_action_bytes(schema, default)))
    return b"".join(out)


_TE = W.numbers(p4runtime_pb2.TableEntry)
_TE_MATCH, _TE_ACTION = _TE["match"], _TE["action"]
_FMN = W.numbers(p4runtime_pb2.FieldMatch)
_FM_FIELD_ID, _FM_EXACT, _FM_LPM, _FM_TERNARY, _FM_RANGE, _FM_OPTIONAL = (
    _FMN["field_id"], _FMN["exact"], _FMN["lpm"], _FMN["ternary"], _FMN["range"], _FMN["optional"])
_EXACT_VALUE = W.numbers(p4runtime_pb2.FieldMatch.Exact)["value"]
_LPM_VALUE, _LPM_PLEN = (W.numbers(p4runtime_pb2.FieldMatch.LPM)[k] for k in ("value", "prefix_len"))
_TERNARY_VALUE, _TERNARY_MASK = (W.numbers(p4runtime_pb2.FieldMatch.Ternary)[k] for k in ("value", "mask"))
_RANGE_LOW, _RANGE_HIGH = (W.numbers(p4runtime_pb2.FieldMatch.Range)[k] for k in ("low", "high"))
_OPTIONAL_VALUE = W.numbers(p4runtime_pb2.FieldMatch.Optional)["value"]
_TAN = W.numbers(p4runtime_pb2.TableAction)
_TA_ACTION, _TA_MEMBER, _TA_GROUP = _TAN["action"], _TAN["action_profile_member_id"], _TAN["action_profile_group_id"]
_ACTION_ID, _ACTION_PARAMS = (W.numbers(p4runtime_pb2.Action)[k] for k in ("action_id", "params"))
_PARAM_ID, _PARAM_VALUE = (W.numbers(p4runtime_pb2.Action.Param)[k] for k in ("param_id", "value"))
_CD_BYTES, _CD_PACKETS = (W.numbers(p4runtime_pb2.CounterData)[k] for k in ("byte_count", "packet_count"))
_MC = W.numbers(p4runtime_pb2.MeterConfig)
