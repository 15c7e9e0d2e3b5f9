"""P4Runtime protobuf entities <-> the control-plane values of ``p4rt.entries``: the one codec,
used by our P4Runtime server and (through ``p4rt.p4info``) by clients.

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
from p4rt.bytestrings import canonical, to_int, values_by_id
from p4rt.errors import Code, P4RuntimeError, invalid
from p4rt.schema import Schema, TableSchema

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
    for info in ts.fields.values():
        if info.match_type == MF.EXACT and info.id not in seen:
            raise invalid(f"{ts.name}: exact match field {info.name} is missing")
    return result


def _field_from_proto(table: str, info: p4info_pb2.MatchField, m: p4runtime_pb2.FieldMatch) -> E.FieldMatch:
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


def match_into(ts: TableSchema, match: dict[str, E.FieldMatch], out: Any) -> None:
    """Append the FieldMatch messages of ``match`` to the repeated field ``out`` (in P4Info
    order, canonical byte strings, wildcards left out)."""
    for info in ts.info.match_fields:
        fm = match.get(info.name)
        if fm is None:
            continue
        if isinstance(fm, E.Exact):
            out.add(field_id=info.id).exact.value = canonical(fm.value)
        elif isinstance(fm, E.Lpm):
            if fm.prefix_len:
                lpm = out.add(field_id=info.id).lpm
                lpm.value, lpm.prefix_len = canonical(fm.value), fm.prefix_len
        elif isinstance(fm, E.Ternary):
            if fm.mask:
                ternary = out.add(field_id=info.id).ternary
                ternary.value, ternary.mask = canonical(fm.value), canonical(fm.mask)
        elif isinstance(fm, E.Range):
            rng = out.add(field_id=info.id).range
            rng.low, rng.high = canonical(fm.low), canonical(fm.high)
        elif isinstance(fm, E.Optional) and fm.value is not None:
            out.add(field_id=info.id).optional.value = canonical(fm.value)


# --- actions ----------------------------------------------------------------------------------
def action_call_from_proto(schema: Schema, action: p4runtime_pb2.Action) -> E.ActionCall:
    info = schema.action(action.action_id)
    params = schema.params[action.action_id]
    values = values_by_id(params, ((p.param_id, p.value) for p in action.params),
                          f"action {info.preamble.name}", "parameter")
    return E.ActionCall(info.preamble.name, {params[pid].name: v for pid, v in values.items()})


def action_call_into(schema: Schema, call: E.ActionCall, msg: p4runtime_pb2.Action) -> None:
    action_id = schema.action_ids[call.name]
    msg.action_id = action_id
    for p in schema.actions[action_id].params:
        msg.params.add(param_id=p.id, value=canonical(call.params.get(p.name, 0)))


def table_action_from_proto(schema: Schema, ts: TableSchema, ta: p4runtime_pb2.TableAction,
                            default: bool) -> E.EntryAction:
    kind = ta.WhichOneof("type")
    if kind is None:
        raise invalid(f"{ts.name}: entry has no action")
    if kind == "action_profile_action_set":  # table entries handle these (oneshot.py)
        raise P4RuntimeError(Code.UNIMPLEMENTED, "one-shot action sets are only supported in table entries")
    if ts.info.implementation_id:
        if kind == "action":
            raise invalid(f"{ts.name} has an action profile: use a member or group id")
        if kind == "action_profile_group_id":
            if not schema.profiles[ts.info.implementation_id].with_selector:
                raise invalid(f"{ts.name}: its action profile has no selector, so no groups")
            return E.GroupRef(ta.action_profile_group_id)
        return E.MemberRef(ta.action_profile_member_id)
    if kind != "action":
        raise invalid(f"{ts.name} has no action profile: give an action, not a {kind}")
    ref = ts.actions.get(ta.action.action_id)
    if ref is None:
        raise invalid(f"{ts.name}: action id {ta.action.action_id} is not one of the table's actions")
    if default and ref.scope == p4info_pb2.ActionRef.TABLE_ONLY:
        raise invalid(f"{ts.name}: action {schema.actions[ref.id].preamble.name} is @tableonly")
    if not default and ref.scope == p4info_pb2.ActionRef.DEFAULT_ONLY:
        raise invalid(f"{ts.name}: action {schema.actions[ref.id].preamble.name} is @defaultonly")
    return action_call_from_proto(schema, ta.action)


def table_action_into(schema: Schema, action: E.EntryAction, ta: p4runtime_pb2.TableAction) -> None:
    if isinstance(action, E.MemberRef):
        ta.action_profile_member_id = action.member_id
    elif isinstance(action, E.GroupRef):
        ta.action_profile_group_id = action.group_id
    else:
        action_call_into(schema, action, ta.action)


# --- counters and meters ----------------------------------------------------------------------
def counter_from_proto(data: p4runtime_pb2.CounterData) -> E.CounterData:
    return E.CounterData(packets=data.packet_count, bytes=data.byte_count)


def counter_into(data: E.CounterData | None, msg: p4runtime_pb2.CounterData) -> None:
    msg.SetInParent()
    if data is not None:
        msg.packet_count, msg.byte_count = data.packets, data.bytes


def meter_from_proto(cfg: p4runtime_pb2.MeterConfig) -> E.MeterConfig:
    if cfg.cir > cfg.pir:
        raise invalid(f"meter config: cir {cfg.cir} exceeds pir {cfg.pir}")
    if min(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst) < 0:
        raise invalid("meter config: rates and bursts must not be negative")
    return E.MeterConfig(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst)


def meter_into(cfg: E.MeterConfig, msg: p4runtime_pb2.MeterConfig) -> None:
    msg.cir, msg.cburst, msg.pir, msg.pburst = cfg.cir, cfg.cburst, cfg.pir, cfg.pburst


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


def entry_into(schema: Schema, ts: TableSchema, entry: E.TableEntry, msg: p4runtime_pb2.TableEntry,
               with_counter: bool, with_meter: bool) -> None:
    msg.table_id = ts.info.preamble.id
    msg.priority = entry.priority
    match_into(ts, entry.match, msg.match)
    table_action_into(schema, entry.action, msg.action)
    if with_counter and ts.direct_counter:
        counter_into(entry.counter, msg.counter_data)
    if with_meter and ts.direct_meter and entry.meter is not None:
        meter_into(entry.meter, msg.meter_config)
    if entry.idle_timeout_ns:
        msg.idle_timeout_ns = entry.idle_timeout_ns
    msg.metadata = entry.metadata
