"""P4Info as p4c generates it, on our own program of the corner cases where we once differed
(found by ``python -m p4switch.p4info.compare`` on p4c's corpus; programs/p4info_parity.p4).
Each expectation is p4c 1.2.4's behaviour for the construct, as its corpus outputs show it."""

from pathlib import Path

import pytest
from p4.config.v1 import p4info_pb2

from p4switch.exec import LoadedProgram
from p4switch.exec.tables import DEFAULT_ONLY
from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info, ids
from p4switch.p4info.compare import differences

HERE = Path(__file__).parent
PROGRAM = HERE / "programs" / "p4info_parity.p4"
NOACTION = ids.hashed_id(ids.ACTION, "NoAction")
Ref = p4info_pb2.ActionRef


@pytest.fixture(scope="module")
def checked():
    return compile_file(str(PROGRAM))


@pytest.fixture(scope="module")
def p4info(checked):
    return generate_p4info(checked)


def _one(repeated, name):
    found = [x for x in repeated if x.preamble.name == name]
    assert len(found) == 1, [x.preamble.name for x in repeated]
    return found[0]


def test_a_table_without_default_gets_noaction_default_only(p4info, tmp_path):
    by_key = _one(p4info.tables, "Ing.by_key")
    refs = [(r.id, r.scope, list(r.annotations)) for r in by_key.action_refs]
    assert refs[-1] == (NOACTION, Ref.DEFAULT_ONLY, ["@defaultonly"])
    assert by_key.initial_default_action.action_id == NOACTION and not by_key.const_default_action_id
    listed = _one(p4info.tables, "Ing.listed")  # NoAction already in the list: once, table-and-default
    assert [r.scope for r in listed.action_refs if r.id == NOACTION] == [Ref.TABLE_AND_DEFAULT]
    assert listed.initial_default_action.action_id == NOACTION
    frozen = _one(p4info.tables, "Ing.frozen")  # a declared default: nothing added
    assert NOACTION not in [r.id for r in frozen.action_refs]
    assert frozen.initial_default_action.action_id == _one(p4info.actions, "Ing.flag").preamble.id
    # the executor agrees: a controller may set the default back to NoAction, not add entries with it
    # (without the control applied by type name, which the executor does not load yet)
    path = tmp_path / "no_direct_apply.p4"
    path.write_text(PROGRAM.read_text().replace("Acl.apply(hdr, meta);", ""))
    table = LoadedProgram.from_file(path).tables["Ing.by_key"]
    assert "NoAction" in table.action_names and table.scopes["NoAction"] == DEFAULT_ONLY


def test_match_field_names_follow_p4cs_key_naming(p4info):
    fields = [(f.name, f.bitwidth) for f in _one(p4info.tables, "Ing.by_key").match_fields]
    assert fields == [
        ("hdr.eth.$valid$", 1),             # isValid() of a header
        ("hdr.tags.t1.$valid$", 1),         # ... of a header inside a union
        ("hdr.eth.dst[47:40]", 8),          # a slice
        ("hdr.eth.src & 0xff00ff00ff", 48),  # a mask: hex without leading zeros
        ("hdr.stack[1].etype", 16),         # a stack element
        ("meta.vrf_id", 16),                # a struct field's @name
        ("meta.kind", 8),                   # a serializable enum
    ]


def test_actions_as_p4c_leaves_them(p4info):
    names = {a.preamble.name for a in p4info.actions}
    assert "Ing.inner" not in names  # only called from another action: inlined away
    assert not _one(p4info.actions, "Ing.bump").params  # called directly: arguments bound
    assert [p.name for p in _one(p4info.actions, "Ing.set_port").params] == ["port"]


def test_branches_never_taken_use_nothing(p4info):
    """p4c removes a branch a constant condition never takes first; code after exit stays."""
    names = {a.preamble.name for a in p4info.actions}
    assert "Ing.never" not in names and "Ing.late" in names


def test_controls_applied_by_type_and_sub_parsers_are_named_by_instance_path(p4info):
    assert _one(p4info.tables, "Ing.Acl.acl").preamble.alias == "acl"
    assert {a.preamble.name for a in p4info.actions} >= {"Ing.Acl.deny"}
    assert [v.preamble.name for v in p4info.value_sets] == ["P.first.special_types"]


def test_const_entries_even_empty_make_a_const_table(p4info):
    frozen = _one(p4info.tables, "Ing.frozen")
    assert frozen.is_const_table and not frozen.has_initial_entries


def test_selector_sizing_annotations_become_fields(p4info):
    sel = _one(p4info.action_profiles, "Ing.sel")
    assert (sel.with_selector, sel.size, sel.max_group_size) == (True, 64, 16)
    assert sel.WhichOneof("selector_size_semantics") == "sum_of_members"
    assert sel.sum_of_members.max_member_weight == 100
    assert not sel.preamble.annotations


def test_user_types_in_type_info(p4info):
    port = p4info.type_info.new_types["port_id_t"]
    assert (port.translated_type.uri, port.translated_type.sdn_bitwidth) == ("example.org/fabric/port_id_t", 32)
    assert list(port.annotations) == ['@brief_note("a translated port")']
    assert not port.HasField("original_type")
    param = _one(p4info.actions, "Ing.set_port").params[0]
    assert (param.bitwidth, param.type_name.name) == (32, "port_id_t")  # the controller's width
    vrf2 = p4info.type_info.new_types["vrf2_t"]  # a new type of a new type: its representation
    assert vrf2.original_type.bitstring.bit.bitwidth == 16
    kind = p4info.type_info.serializable_enums["Kind"]
    assert [(m.name, m.value) for m in kind.members] == [("DATA", b"\x01"), ("ACK", b"\x11")]


MINIMAL = """#include <core.p4>
#include <v1model.p4>
struct h_t { }
struct m_t { }
parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) { state start { transition accept; } }
control V(inout h_t h, inout m_t m) { apply { } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { BODY } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("body, has_type_info", [
    ("", False),                                             # nothing converted
    ("static_assert(true);", False),                         # folded by the front end
    ("mark_to_drop(sm);", True),                             # any extern function call
])
def test_type_info_block_appears_when_p4c_opens_it(tmp_path, body, has_type_info):
    path = tmp_path / "minimal.p4"
    path.write_text(MINIMAL.replace("BODY", body))
    assert generate_p4info(compile_file(str(path))).HasField("type_info") == has_type_info


def test_compare_ignores_order_and_names_what_differs(p4info):
    shuffled = p4info_pb2.P4Info()
    shuffled.CopyFrom(p4info)
    shuffled.tables.sort(key=lambda t: t.preamble.name, reverse=True)
    assert differences(p4info, shuffled) == []
    shuffled.tables[0].size = 7
    del shuffled.actions[-1]
    found = differences(p4info, shuffled)
    assert any(line.startswith(f"tables[{shuffled.tables[0].preamble.name}].size: ours") for line in found)
    assert f"actions[{p4info.actions[-1].preamble.name}]: only in ours" in found


def test_controller_header_struct_fields_are_flattened(p4info):
    out = _one(p4info.controller_packet_metadata, "packet_out")
    assert [(m.id, m.name, m.bitwidth) for m in out.metadata] == [(1, "meta.pad", 7), (2, "meta.port", 9)]


def test_platform_properties_are_fields_of_pkg_info(p4info):
    assert p4info.pkg_info.platform_properties.multicast_group_table_size == 64
    assert not p4info.pkg_info.annotations
