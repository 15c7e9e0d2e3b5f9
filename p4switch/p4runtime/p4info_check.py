"""Does a controller's P4Info describe the program of the device config it came with?

SetForwardingPipelineConfig carries both; a P4Info that disagrees with the program (a key
48 bits wide where the program's is 32, a renamed key, a parameter of the wrong width, an id
the program would not give) is accepted by nothing downstream: every later write would fail
or, worse, be read differently by controller and switch. So the P4Info is compared with the
one our compiler generates from the device config, object by object, and the first mismatch
is INVALID_ARGUMENT naming the object, the field and both values.

What must agree: the id and the shape of every object the P4Info names (tables with their
keys, action refs, action profile and direct resources; actions with their parameters;
counters, meters, registers, digests, action profiles, value sets, packet metadata). What
may differ: annotations and documentation, table sizes (a capacity hint), and objects the
P4Info leaves out (the controller just cannot address them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from p4.config.v1 import p4info_pb2

from p4rt.errors import invalid


def check_p4info(given: p4info_pb2.P4Info, program: p4info_pb2.P4Info) -> None:
    """Raise INVALID_ARGUMENT at the first way ``given`` disagrees with ``program`` (the
    P4Info generated from the device config)."""
    ctx = _Context(given, program)
    for kind, attr, compare in _KINDS:
        ours = {o.preamble.name: o for o in getattr(program, attr)}
        for obj in getattr(given, attr):
            what = f"{kind} {obj.preamble.name}"
            mine = ours.get(obj.preamble.name)
            if mine is None:
                raise _mismatch(f"{what} is not in the program")
            _same(what, "id", obj.preamble.id, mine.preamble.id)
            compare(what, obj, mine, ctx)


class _Context:
    """Id -> name in each P4Info, so references (a table's actions, a profile's tables) are
    compared by what they name, the ids having been checked on the objects themselves."""

    def __init__(self, given: p4info_pb2.P4Info, program: p4info_pb2.P4Info) -> None:
        self.given_info, self.program_info = given, program
        self.given = _ids(given)
        self.program = _ids(program)

    def given_names(self, ids: Iterable[int]) -> list[str]:
        return [self.given.get(i, f"id {i}") for i in ids]

    def program_names(self, ids: Iterable[int]) -> list[str]:
        return [self.program.get(i, f"id {i}") for i in ids]


def _ids(p4info: p4info_pb2.P4Info) -> dict[int, str]:
    out: dict[int, str] = {}
    for _kind, attr, _compare in _KINDS:
        for obj in getattr(p4info, attr):
            out[obj.preamble.id] = obj.preamble.name
    return out


def _mismatch(message: str) -> Exception:
    return invalid(f"P4Info does not match the device config: {message}")


def _same(what: str, field: str, given: Any, program: Any) -> None:
    if given != program:
        raise _mismatch(f"{what}: {field} {_show(given, field)} in P4Info, {_show(program, field)} in the program")


def _show(value: Any, field: str) -> str:
    if field == "id":
        return f"{value:#x}"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]" if value else "none"
    return str(value)


def _named_list(what: str, kind: str, given: Iterable[Any], program: Iterable[Any],
                fields: tuple[str, ...]) -> None:
    """Match fields, parameters or packet metadata: the same names in the same order, and
    per name the same ``fields``."""
    given, program = list(given), list(program)
    ours = {m.name: m for m in program}
    for m in given:
        mine = ours.get(m.name)
        if mine is None:
            raise _mismatch(f"{what}: {kind} {m.name} is not in the program "
                            f"(its {kind}s: {', '.join(x.name for x in program) or 'none'})")
        for field in fields:
            _same(f"{what} {kind} {m.name}", field, _field(m, field), _field(mine, field))
    _same(what, f"{kind}s", [m.name for m in given], [m.name for m in program])


def _field(msg: Any, field: str) -> Any:
    if field == "match_type":
        return p4info_pb2.MatchField.MatchType.Name(msg.match_type) if msg.match_type else msg.other_match_type
    return getattr(msg, field)


def _table(what: str, t: p4info_pb2.Table, mine: p4info_pb2.Table, ctx: _Context) -> None:
    _named_list(what, "key", t.match_fields, mine.match_fields, ("id", "bitwidth", "match_type"))
    ours = set(ctx.program_names(r.id for r in mine.action_refs))
    for action in ctx.given_names(r.id for r in t.action_refs):
        if action not in ours:
            raise _mismatch(f"{what}: action {action} is not one of the table's actions in the program")
    _same(what, "action profile", ctx.given_names([t.implementation_id] if t.implementation_id else []),
          ctx.program_names([mine.implementation_id] if mine.implementation_id else []))
    _same(what, "direct resources", sorted(ctx.given_names(t.direct_resource_ids)),
          sorted(ctx.program_names(mine.direct_resource_ids)))
    _same(what, "const entries", t.is_const_table, mine.is_const_table)
    _same(what, "const default action", ctx.given_names([t.const_default_action_id] if t.const_default_action_id else []),
          ctx.program_names([mine.const_default_action_id] if mine.const_default_action_id else []))
    _same(what, "idle timeout", t.idle_timeout_behavior, mine.idle_timeout_behavior)


def _action(what: str, a: p4info_pb2.Action, mine: p4info_pb2.Action, ctx: _Context) -> None:
    _named_list(what, "parameter", a.params, mine.params, ("id", "bitwidth"))


def _profile(what: str, p: p4info_pb2.ActionProfile, mine: p4info_pb2.ActionProfile, ctx: _Context) -> None:
    _same(what, "tables", sorted(ctx.given_names(p.table_ids)), sorted(ctx.program_names(mine.table_ids)))
    _same(what, "with_selector", p.with_selector, mine.with_selector)
    _same(what, "size", p.size, mine.size)


def _counter(what: str, c: Any, mine: Any, ctx: _Context) -> None:
    _same(what, "unit", c.spec.unit, mine.spec.unit)
    if hasattr(c, "size"):
        _same(what, "size", c.size, mine.size)
    if hasattr(c, "direct_table_id"):
        _same(what, "table", ctx.given_names([c.direct_table_id]), ctx.program_names([mine.direct_table_id]))


def _register(what: str, r: p4info_pb2.Register, mine: p4info_pb2.Register, ctx: _Context) -> None:
    _same(what, "size", r.size, mine.size)
    _same(what, "bitwidth", r.type_spec.bitstring.bit.bitwidth, mine.type_spec.bitstring.bit.bitwidth)
    _same(what, "type", r.type_spec, mine.type_spec)


def _digest(what: str, d: p4info_pb2.Digest, mine: p4info_pb2.Digest, ctx: _Context) -> None:
    _same(what, "type", d.type_spec, mine.type_spec)
    if d.type_spec.HasField("struct"):  # its fields are in type_info
        struct = d.type_spec.struct.name
        given = ctx.given_info.type_info.structs.get(struct)
        ours = ctx.program_info.type_info.structs.get(struct)
        if given is None:
            raise _mismatch(f"{what}: type_info has no struct {struct}")
        _same(what, "fields", [m.name for m in given.members], [m.name for m in ours.members] if ours is not None else [])
        for g, o in zip(given.members, ours.members):
            _same(f"{what} field {g.name}", "type", _type(g.type_spec), _type(o.type_spec))


def _type(spec: Any) -> str:
    """A P4DataTypeSpec in one line (bit<W> the common case)."""
    kind = spec.WhichOneof("type_spec")
    if kind == "bitstring":
        width = spec.bitstring.WhichOneof("type_spec")
        return f"{width}<{getattr(spec.bitstring, width).bitwidth}>" if width in ("bit", "int") else str(width)
    return str(spec).replace("\n", " ").strip()


def _value_set(what: str, v: p4info_pb2.ValueSet, mine: p4info_pb2.ValueSet, ctx: _Context) -> None:
    _same(what, "size", v.size, mine.size)
    _named_list(what, "field", v.match, mine.match, ("id", "bitwidth", "match_type"))


def _packet_metadata(what: str, h: p4info_pb2.ControllerPacketMetadata,
                     mine: p4info_pb2.ControllerPacketMetadata, ctx: _Context) -> None:
    _named_list(what, "metadata", h.metadata, mine.metadata, ("id", "bitwidth"))


_Compare = Callable[[str, Any, Any, _Context], None]
_KINDS: list[tuple[str, str, _Compare]] = [
    ("action", "actions", _action),
    ("table", "tables", _table),
    ("action profile", "action_profiles", _profile),
    ("counter", "counters", _counter),
    ("direct counter", "direct_counters", _counter),
    ("meter", "meters", _counter),
    ("direct meter", "direct_meters", _counter),
    ("register", "registers", _register),
    ("digest", "digests", _digest),
    ("value set", "value_sets", _value_set),
    ("controller packet metadata", "controller_packet_metadata", _packet_metadata),
]
