"""Turn a :class:`ProgramInfo` into a P4Info message laid out the way p4c lays it out."""

from __future__ import annotations

from typing import Any

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from p4rt.bytestrings import padded as padded_bytes
from p4switch.p4info import ids
from p4switch.p4info.model import (
    Annotations,
    ControllerHeaderInfo,
    CounterlikeInfo,
    MatchFieldInfo,
    ProgramInfo,
)

_MATCH_TYPES = {
    "exact": p4info_pb2.MatchField.EXACT,
    "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY,
    "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}
_COUNTER_UNITS = {
    "packets": p4info_pb2.CounterSpec.PACKETS,
    "bytes": p4info_pb2.CounterSpec.BYTES,
    "packets_and_bytes": p4info_pb2.CounterSpec.BOTH,
}
_METER_UNITS = {"packets": p4info_pb2.MeterSpec.PACKETS, "bytes": p4info_pb2.MeterSpec.BYTES}


def allocate_field_ids(requested: list[int | None], what: str) -> list[int]:
    """Ids of match fields, params and metadata: ``@id`` first, the rest counted from 1 by
    position (a position with an explicit id still consumes its number), skipping used ids."""
    taken: set[int] = set()
    for value in requested:
        if value is None:
            continue
        if value == 0:
            raise ids.IdError(f"{what}: 0 is not a valid @id value")
        if value in taken:
            raise ids.IdError(f"{what}: @id {value} is used multiple times")
        taken.add(value)
    result: list[int] = []
    index = 1
    for value in requested:
        if value is not None:
            result.append(value)
            index += 1
            continue
        while index in taken:
            index += 1
        result.append(index)
        taken.add(index)
    return result


def symbol_table(info: ProgramInfo) -> ids.SymbolTable:
    table = ids.SymbolTable()
    for action in info.actions:
        table.add(ids.ACTION, action.name, action.notes.at_id)
    for tbl in info.tables:
        table.add(ids.TABLE, tbl.name, tbl.notes.at_id)
    for vs in info.value_sets:
        table.add(ids.VALUE_SET, vs.name, vs.notes.at_id)
    for header in info.controller_headers:
        table.add(ids.CONTROLLER_HEADER, header.type_name, header.notes.at_id)
    for prefix, objects in (
        (ids.ACTION_PROFILE, info.action_profiles),
        (ids.COUNTER, info.counters),
        (ids.DIRECT_COUNTER, info.direct_counters),
        (ids.METER, info.meters),
        (ids.DIRECT_METER, info.direct_meters),
        (ids.REGISTER, info.registers),
    ):
        for obj in objects:
            table.add(prefix, obj.name, obj.notes.at_id)
    for digest in info.digests:
        table.add(ids.DIGEST, digest.name)
    table.assign()
    return table


def _annotate(message: Any, notes: Annotations) -> None:
    message.annotations.extend(notes.texts)
    if notes.brief is not None or notes.description is not None:
        if notes.brief is not None:
            message.doc.brief = notes.brief
        if notes.description is not None:
            message.doc.description = notes.description


def _preamble(preamble, obj_id: int, name: str, alias: str, notes: Annotations) -> None:
    preamble.id = obj_id
    preamble.name = name
    preamble.alias = alias
    _annotate(preamble, notes)


def _field(message: Any, field_id: int, name: str, notes: Annotations, bitwidth: int,
           type_name: str | None) -> None:
    """What match fields, action parameters and controller-header metadata have in common,
    written in the field order p4c's text output shows."""
    message.id = field_id
    message.name = name
    _annotate(message, notes)
    message.bitwidth = bitwidth
    if type_name:
        message.type_name.name = type_name


def _match_field(message: p4info_pb2.MatchField, fld: MatchFieldInfo, field_id: int) -> None:
    _field(message, field_id, fld.name, fld.notes, fld.bitwidth, fld.type_name)
    if fld.match_type in _MATCH_TYPES:
        message.match_type = _MATCH_TYPES[fld.match_type]
    else:
        message.other_match_type = fld.match_type


def build_p4info(info: ProgramInfo) -> p4info_pb2.P4Info:
    """Raises :class:`ids.IdError` for ``@id`` conflicts."""
    sym = symbol_table(info)
    p4info = p4info_pb2.P4Info()
    p4info.pkg_info.arch = info.arch
    for key, value in info.pkg_fields.items():
        setattr(p4info.pkg_info, key, value)
    for key, number in info.platform_properties.items():
        setattr(p4info.pkg_info.platform_properties, key, number)
    _annotate(p4info.pkg_info, info.pkg_annotations)

    param_ids = {a.name: allocate_field_ids([p.notes.at_id for p in a.params], a.name) for a in info.actions}
    for tbl in info.tables:
        msg = p4info.tables.add()
        _preamble(msg.preamble, sym.id_of(ids.TABLE, tbl.name), tbl.name, sym.alias_of(tbl.name), tbl.notes)
        field_ids = allocate_field_ids([f.notes.at_id for f in tbl.match_fields], tbl.name)
        for fld, field_id in zip(tbl.match_fields, field_ids):
            _match_field(msg.match_fields.add(), fld, field_id)
        for ref in tbl.action_refs:
            ref_msg = msg.action_refs.add()
            ref_msg.id = sym.id_of(ids.ACTION, ref.name)
            _annotate(ref_msg, ref.notes)
            names = {text.split("(")[0] for text in ref.notes.texts}
            if "@tableonly" in names and "@defaultonly" in names:
                raise ids.IdError(f"table {tbl.name}: action {ref.name} is both @tableonly and @defaultonly")
            if "@tableonly" in names:
                ref_msg.scope = p4info_pb2.ActionRef.TABLE_ONLY
            elif "@defaultonly" in names:
                ref_msg.scope = p4info_pb2.ActionRef.DEFAULT_ONLY
        if tbl.const_default_action is not None:
            msg.const_default_action_id = sym.id_of(ids.ACTION, tbl.const_default_action)
        if tbl.initial_default is not None:
            action_name, args = tbl.initial_default
            call = msg.initial_default_action
            call.action_id = sym.id_of(ids.ACTION, action_name)
            for param_id, (value, width) in zip(param_ids[action_name], args):
                arg = call.arguments.add()
                arg.param_id = param_id
                arg.value = padded_bytes(value, width)
        if tbl.implementation is not None:
            msg.implementation_id = sym.id_of(ids.ACTION_PROFILE, tbl.implementation)
        if tbl.direct_counter is not None:
            msg.direct_resource_ids.append(sym.id_of(ids.DIRECT_COUNTER, tbl.direct_counter))
        if tbl.direct_meter is not None:
            msg.direct_resource_ids.append(sym.id_of(ids.DIRECT_METER, tbl.direct_meter))
        msg.size = tbl.size
        if tbl.support_timeout:
            msg.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
        if tbl.is_const:
            msg.is_const_table = True
        if tbl.has_initial_entries:
            msg.has_initial_entries = True

    for action in info.actions:
        msg = p4info.actions.add()
        _preamble(msg.preamble, sym.id_of(ids.ACTION, action.name), action.name,
                  sym.alias_of(action.name), action.notes)
        for param, param_id in zip(action.params, param_ids[action.name]):
            _field(msg.params.add(), param_id, param.name, param.notes, param.bitwidth, param.type_name)

    for prof in info.action_profiles:
        msg = p4info.action_profiles.add()
        _preamble(msg.preamble, sym.id_of(ids.ACTION_PROFILE, prof.name), prof.name,
                  sym.alias_of(prof.name), prof.notes)
        msg.table_ids.extend(sym.id_of(ids.TABLE, t) for t in prof.tables)
        msg.with_selector = prof.with_selector
        msg.size = prof.size
        if prof.max_group_size:
            msg.max_group_size = prof.max_group_size
        if prof.size_semantics == "sum_of_weights":
            msg.sum_of_weights.SetInParent()
        elif prof.size_semantics == "sum_of_members":
            msg.sum_of_members.SetInParent()
            if prof.max_member_weight:
                msg.sum_of_members.max_member_weight = prof.max_member_weight

    _counterlike(p4info.counters, info.counters, ids.COUNTER, sym, _COUNTER_UNITS)
    _counterlike(p4info.direct_counters, info.direct_counters, ids.DIRECT_COUNTER, sym, _COUNTER_UNITS)
    _counterlike(p4info.meters, info.meters, ids.METER, sym, _METER_UNITS)
    _counterlike(p4info.direct_meters, info.direct_meters, ids.DIRECT_METER, sym, _METER_UNITS)

    for header in info.controller_headers:
        _controller_header(p4info.controller_packet_metadata.add(), header, sym)

    for vs in info.value_sets:
        msg = p4info.value_sets.add()
        _preamble(msg.preamble, sym.id_of(ids.VALUE_SET, vs.name), vs.name, sym.alias_of(vs.name), vs.notes)
        match_ids = allocate_field_ids([m.notes.at_id for m in vs.match], vs.name)
        for fld, field_id in zip(vs.match, match_ids):
            _match_field(msg.match.add(), fld, field_id)
        msg.size = vs.size

    for reg in info.registers:
        msg = p4info.registers.add()
        _preamble(msg.preamble, sym.id_of(ids.REGISTER, reg.name), reg.name, sym.alias_of(reg.name), reg.notes)
        msg.type_spec.CopyFrom(reg.type_spec)
        msg.size = reg.size

    for digest in info.digests:
        msg = p4info.digests.add()
        _preamble(msg.preamble, sym.id_of(ids.DIGEST, digest.name), digest.name,
                  sym.alias_of(digest.name), Annotations())
        msg.type_spec.CopyFrom(digest.type_spec)

    # p4c's serializer opens type_info (so prints an often empty block) whenever it converts a
    # type or hands an object to the architecture: for every table, action parameter,
    # controller header field, extern instance and extern function call.
    if info.type_info.ByteSize() or _opens_type_info(info):
        p4info.type_info.SetInParent()
        p4info.type_info.MergeFrom(info.type_info)
    return p4info


def _opens_type_info(info: ProgramInfo) -> bool:
    return bool(info.tables or any(a.params for a in info.actions)
                or any(h.metadata for h in info.controller_headers) or info.uses_externs)


def _counterlike(repeated, objects: list[CounterlikeInfo], prefix: int, sym: ids.SymbolTable, units) -> None:
    for obj in objects:
        msg = repeated.add()
        _preamble(msg.preamble, sym.id_of(prefix, obj.name), obj.name, sym.alias_of(obj.name), obj.notes)
        msg.spec.unit = units.get(obj.unit, 0)
        if obj.direct_table is not None:
            msg.direct_table_id = sym.id_of(ids.TABLE, obj.direct_table)
        else:
            msg.size = obj.size


def _controller_header(msg, header: ControllerHeaderInfo, sym: ids.SymbolTable) -> None:
    # P4Info names a controller header by its annotation argument ("packet_in"), both as
    # name and alias, while the id comes from the header type's name.
    _preamble(msg.preamble, sym.id_of(ids.CONTROLLER_HEADER, header.type_name), header.name,
              header.name, header.notes)
    meta_ids = allocate_field_ids([m.notes.at_id for m in header.metadata], header.name)
    for meta, meta_id in zip(header.metadata, meta_ids):
        _field(msg.metadata.add(), meta_id, meta.name, meta.notes, meta.bitwidth, meta.type_name)


TEXT_HEADER = "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"


def p4info_to_text(p4info: p4info_pb2.P4Info) -> str:
    """Protobuf text format with the schema comment p4c puts at the top of ``.txtpb`` files."""
    return TEXT_HEADER + text_format.MessageToString(p4info)
