"""P4Info built from a control-plane model follows p4c's layout rules."""

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from p4switch.p4info import ids
from p4switch.p4info.build import allocate_field_ids, build_p4info, p4info_to_text
from p4switch.p4info.model import Annotations, ParamInfo


def _by_name(repeated, name):
    return next(x for x in repeated if x.preamble.name == name)


def test_field_ids_count_by_position_and_honour_at_id():
    assert allocate_field_ids([None, None, None], "t") == [1, 2, 3]
    assert allocate_field_ids([None, 1, None], "t") == [2, 1, 3]
    assert allocate_field_ids([5, None], "t") == [5, 2]
    with pytest.raises(ids.IdError, match="used multiple times"):
        allocate_field_ids([2, 2], "t")


def test_tables_actions_and_externs(model):
    p4info = build_p4info(model)
    acl = _by_name(p4info.tables, "MyIngress.acl")
    assert acl.preamble.id == ids.hashed_id(ids.TABLE, "MyIngress.acl") and acl.preamble.alias == "acl"
    assert [(f.id, f.match_type, f.bitwidth) for f in acl.match_fields] == [
        (1, p4info_pb2.MatchField.TERNARY, 32), (2, p4info_pb2.MatchField.RANGE, 16),
        (3, p4info_pb2.MatchField.OPTIONAL, 8)]
    assert [(r.id, r.scope, list(r.annotations)) for r in acl.action_refs] == [
        (ids.hashed_id(ids.ACTION, "MyIngress.set_port"), p4info_pb2.ActionRef.TABLE_AND_DEFAULT, []),
        (ids.hashed_id(ids.ACTION, "NoAction"), p4info_pb2.ActionRef.DEFAULT_ONLY, ["@defaultonly"])]
    assert acl.const_default_action_id == ids.hashed_id(ids.ACTION, "NoAction")
    assert list(acl.direct_resource_ids) == [ids.hashed_id(ids.DIRECT_COUNTER, "MyIngress.acl_hits")]
    assert acl.size == 256

    fwd = _by_name(p4info.tables, "MyIngress.fwd")
    assert [f.id for f in fwd.match_fields] == [1, 7]
    assert fwd.action_refs[0].scope == p4info_pb2.ActionRef.TABLE_ONLY
    assert fwd.initial_default_action.action_id == ids.hashed_id(ids.ACTION, "MyIngress.rewrite")
    # arguments carry the action's parameter ids (mac has @id(5), port is second)
    assert [(a.param_id, a.value) for a in fwd.initial_default_action.arguments] == [
        (5, bytes.fromhex("0a0b0c0d0e0f")), (2, b"\x00\x03")]
    assert fwd.size == 1024 and fwd.const_default_action_id == 0

    rewrite = _by_name(p4info.actions, "MyIngress.rewrite")
    assert [(p.id, p.name, p.bitwidth) for p in rewrite.params] == [(5, "mac", 48), (2, "port", 9)]

    ecmp = _by_name(p4info.tables, "MyIngress.ecmp")
    sel = _by_name(p4info.action_profiles, "MyIngress.sel")
    assert ecmp.implementation_id == sel.preamble.id == ids.hashed_id(ids.ACTION_PROFILE, "MyIngress.sel")
    assert sel.with_selector and sel.size == 128 and list(sel.table_ids) == [ecmp.preamble.id]

    dc = p4info.direct_counters[0]
    assert dc.spec.unit == p4info_pb2.CounterSpec.BOTH and dc.direct_table_id == acl.preamble.id
    assert p4info.counters[0].spec.unit == p4info_pb2.CounterSpec.BYTES and p4info.counters[0].size == 512
    assert p4info.meters[0].spec.unit == p4info_pb2.MeterSpec.PACKETS
    reg = p4info.registers[0]
    assert reg.type_spec.bitstring.bit.bitwidth == 48 and reg.size == 1024
    assert reg.preamble.id >> 24 == ids.REGISTER
    digest = p4info.digests[0]
    assert digest.preamble.id == ids.hashed_id(ids.DIGEST, "learn_t") and digest.type_spec.struct.name == "learn_t"
    assert p4info.type_info.structs["learn_t"].members[0].type_spec.bitstring.bit.bitwidth == 48


def test_controller_headers_named_by_annotation_with_id_from_type_name(model):
    p4info = build_p4info(model)
    pin = p4info.controller_packet_metadata[0]
    assert (pin.preamble.name, pin.preamble.alias) == ("packet_in", "packet_in")
    assert pin.preamble.id == ids.hashed_id(ids.CONTROLLER_HEADER, "packet_in_header_t")
    assert [(m.id, m.name, m.bitwidth) for m in pin.metadata] == [(1, "ingress_port", 9), (2, "_pad", 7)]


def test_aliases_shorten_only_while_unique(model):
    info = model
    info.actions.append(info.actions[1].__class__("MyEgress.set_port", [ParamInfo("port", 9)]))
    p4info = build_p4info(info)
    assert _by_name(p4info.actions, "MyIngress.set_port").preamble.alias == "MyIngress.set_port"
    assert _by_name(p4info.actions, "MyIngress.rewrite").preamble.alias == "rewrite"


def test_text_output_parses_back_and_carries_the_schema_comment(model):
    p4info = build_p4info(model)
    text = p4info_to_text(p4info)
    assert text.startswith("# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n")
    again = p4info_pb2.P4Info()
    text_format.Parse(text, again)
    assert again == p4info
    assert 'pkg_info {\n  arch: "v1model"\n}\ntables {\n  preamble {\n' in text


def test_documentation_annotations_go_to_doc(model):
    info = model
    info.tables[0].notes = Annotations(texts=["@my_note(1)"], brief="ACL", description="drops bad traffic")
    t = build_p4info(info).tables[0]
    assert list(t.preamble.annotations) == ["@my_note(1)"]
    assert (t.preamble.doc.brief, t.preamble.doc.description) == ("ACL", "drops bad traffic")
