"""P4Info generated from real programs: the full text of a basic L3 program against a golden
file (reviewed by hand against p4c's output for the P4 tutorials' basic.p4), and the objects of
a program with every kind of control-plane resource."""

from pathlib import Path

from p4.config.v1 import p4info_pb2

from p4switch.exec import LoadedProgram
from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info, ids, p4info_to_text

HERE = Path(__file__).parent


def test_basic_l3_matches_golden_text():
    checked = compile_file(str(HERE / "programs" / "basic_l3.p4"))
    text = p4info_to_text(generate_p4info(checked))
    assert text == (HERE / "golden" / "basic_l3.p4info.txtpb").read_text()


def _one(repeated, name):
    found = [x for x in repeated if x.preamble.name == name]
    assert len(found) == 1, [x.preamble.name for x in repeated]
    return found[0]


def test_every_resource_kind(switch_program):
    p4info = switch_program.p4info
    MF, Ref = p4info_pb2.MatchField, p4info_pb2.ActionRef
    assert [t.preamble.name for t in p4info.tables] == [
        "MyIngress.routes", "MyIngress.acl", "MyIngress.l2", "MyIngress.ecmp", "MyIngress.nexthops"]
    assert [a.preamble.name for a in p4info.actions] == [
        "NoAction", "MyIngress.drop", "MyIngress.to_cpu", "MyIngress.forward", "MyIngress.set_port",
        "MyIngress.l2_forward", "MyIngress.flood"]

    acl = _one(p4info.tables, "MyIngress.acl")
    assert [(f.name, f.bitwidth, f.match_type) for f in acl.match_fields] == [
        ("hdr.ethernet.etherType", 16, MF.TERNARY), ("hdr.ipv4.protocol", 8, MF.RANGE),
        ("standard_metadata.ingress_port", 9, MF.OPTIONAL)]
    noaction = ids.hashed_id(ids.ACTION, "NoAction")
    assert [(r.id, r.scope) for r in acl.action_refs][-1] == (noaction, Ref.DEFAULT_ONLY)
    assert acl.const_default_action_id == noaction and acl.size == 8

    routes = _one(p4info.tables, "MyIngress.routes")
    hits = _one(p4info.direct_counters, "MyIngress.route_hits")
    assert list(routes.direct_resource_ids) == [hits.preamble.id]
    assert hits.direct_table_id == routes.preamble.id and hits.spec.unit == p4info_pb2.CounterSpec.BOTH
    assert hits.preamble.id >> 24 == ids.DIRECT_COUNTER

    ecmp = _one(p4info.tables, "MyIngress.ecmp")
    assert [f.name for f in ecmp.match_fields] == ["hdr.ipv4.dstAddr"]  # selector fields are not match fields
    sel = _one(p4info.action_profiles, "MyIngress.ecmp_selector")
    assert ecmp.implementation_id == sel.preamble.id and sel.with_selector and sel.size == 64
    assert list(sel.table_ids) == [ecmp.preamble.id]

    l2 = _one(p4info.tables, "MyIngress.l2")
    l2_meter = _one(p4info.direct_meters, "MyIngress.l2_meter")
    assert l2_meter.direct_table_id == l2.preamble.id and list(l2.direct_resource_ids) == [l2_meter.preamble.id]
    assert l2_meter.spec.unit == p4info_pb2.MeterSpec.BYTES
    assert l2_meter.preamble.id >> 24 == ids.DIRECT_METER == 0x15
    assert [m.preamble.name for m in p4info.meters] == ["MyIngress.policer"]  # direct meters are listed apart

    nexthops = _one(p4info.tables, "MyIngress.nexthops")
    profile = _one(p4info.action_profiles, "MyIngress.nexthop_profile")
    assert not profile.with_selector and profile.size == 32
    assert profile.preamble.id >> 24 == ids.ACTION_PROFILE
    assert nexthops.implementation_id == profile.preamble.id and list(profile.table_ids) == [nexthops.preamble.id]
    assert [p.preamble.name for p in p4info.action_profiles] == ["MyIngress.ecmp_selector", "MyIngress.nexthop_profile"]

    counter = _one(p4info.counters, "MyIngress.port_packets")
    assert (counter.size, counter.spec.unit) == (512, p4info_pb2.CounterSpec.PACKETS)
    meter = _one(p4info.meters, "MyIngress.policer")
    assert (meter.size, meter.spec.unit) == (16, p4info_pb2.MeterSpec.PACKETS)
    reg = _one(p4info.registers, "MyIngress.last_length")
    assert (reg.size, reg.type_spec.bitstring.bit.bitwidth) == (16, 32)

    digest = _one(p4info.digests, "learn_t")
    assert digest.preamble.id == ids.hashed_id(ids.DIGEST, "learn_t")
    members = p4info.type_info.structs["learn_t"].members
    assert [(m.name, m.type_spec.bitstring.bit.bitwidth) for m in members] == [("srcAddr", 48), ("ingress_port", 9)]

    vs = _one(p4info.value_sets, "MyParser.custom_ethertypes")
    assert vs.size == 4 and [(m.id, m.bitwidth, m.match_type) for m in vs.match] == [(1, 16, MF.EXACT)]

    pout = _one(p4info.controller_packet_metadata, "packet_out")
    assert pout.preamble.id == ids.hashed_id(ids.CONTROLLER_HEADER, "packet_out_header_t")
    assert [(m.id, m.name, m.bitwidth) for m in pout.metadata] == [(1, "egress_port", 9), (2, "_pad", 7)]


ANNOTATED = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; }
struct headers { h_t h; }
struct metadata { bit<8> m; }
parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    @id(0x01000077) action a1(@id(9) bit<8> x, bit<16> y) { hdr.h.a = x; hdr.h.b = y; }
    @name(".global_a2") action a2() { }
    action unused_action() { }
    @brief("the first table") @description("keyed by two fields")
    @id(5) table t1 {
        key = { hdr.h.a: exact @name("first"); hdr.h.b: ternary @id(7); }
        actions = { a1; a2; }
        support_timeout = true;
    }
    @name("renamed") table t2 {
        key = { meta.m: exact; }
        actions = { a2; }
    }
    table never_applied { key = { meta.m: exact; } actions = { unused_action; } }
    apply { t1.apply(); t2.apply(); }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action e1() { }
    table et { key = { hdr.h.a: exact; } actions = { e1; } }
    apply { et.apply(); }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def test_annotations_names_ids_and_unused_objects(tmp_path):
    (tmp_path / "annotated.p4").write_text(ANNOTATED)
    p4info = generate_p4info(compile_file(str(tmp_path / "annotated.p4")))
    assert [t.preamble.name for t in p4info.tables] == ["Ing.t1", "Ing.renamed", "Eg.et"]  # never_applied dropped
    # unused_action dropped; NoAction is the implicit default of every table here (p4c)
    assert [a.preamble.name for a in p4info.actions] == ["NoAction", "Ing.a1", "global_a2", "Eg.e1"]
    t1 = p4info.tables[0]
    assert t1.preamble.id == 0x02000005
    assert (t1.preamble.doc.brief, t1.preamble.doc.description) == ("the first table", "keyed by two fields")
    assert list(t1.preamble.annotations) == []
    assert [(f.id, f.name) for f in t1.match_fields] == [(1, "first"), (7, "hdr.h.b")]
    assert t1.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL
    a1 = p4info.actions[1]
    assert a1.preamble.id == 0x01000077
    assert [(p.id, p.name) for p in a1.params] == [(9, "x"), (2, "y")]
    assert p4info.actions[2].preamble.id == ids.hashed_id(ids.ACTION, "global_a2")
    assert p4info.tables[1].preamble.id == ids.hashed_id(ids.TABLE, "Ing.renamed")


NESTED = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers { h_t h; }
struct metadata { }
register<bit<32>>(4) top_reg;
parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Inner(inout headers hdr, inout standard_metadata_t sm) {
    counter(8, CounterType.packets) hits;
    action set(bit<9> port) { sm.egress_spec = port; hits.count(0); }
    table t { key = { hdr.h.a: exact; } actions = { set; NoAction; } }
    apply { t.apply(); top_reg.write(0, 1); }
}
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Inner() first;
    @name("renamed") Inner() second;
    action own() { }
    table outer { key = { hdr.h.a: exact; } actions = { own; } }
    apply { first.apply(hdr, sm); outer.apply(); second.apply(hdr, sm); }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def test_nested_controls_are_named_by_instance_path_like_the_executor(tmp_path):
    (tmp_path / "nested.p4").write_text(NESTED)
    checked = compile_file(str(tmp_path / "nested.p4"))
    p4info = generate_p4info(checked)
    tables = [t.preamble.name for t in p4info.tables]
    # sub-control locals are expanded where the instance is declared (p4c's inliner)
    assert tables == ["Ing.first.t", "Ing.renamed.t", "Ing.outer"]
    assert [a.preamble.name for a in p4info.actions] == ["NoAction", "Ing.first.set", "Ing.renamed.set", "Ing.own"]
    assert [c.preamble.name for c in p4info.counters] == ["Ing.first.hits", "Ing.renamed.hits"]
    assert [r.preamble.name for r in p4info.registers] == ["top_reg"]
    assert p4info.tables[0].preamble.alias == "first.t"
    # the executor knows every object under the same name, so the P4Runtime server finds it
    program = LoadedProgram.from_checked(checked)
    assert set(tables) == set(program.tables)
    assert {a.preamble.name for a in p4info.actions} <= set(program.actions)
    assert {c.preamble.name for c in p4info.counters} <= set(program.counters)
    assert {r.preamble.name for r in p4info.registers} == set(program.registers)


USER_TYPES = """
#include <core.p4>
#include <v1model.p4>
type bit<9> port_t;
enum bit<8> Proto { TCP = 6, UDP = 17 }
header h_t { bit<8> p; bit<9> port; bit<7> pad; }
struct headers { h_t h; }
struct metadata { port_t egress; }
parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action to(port_t port, Proto expect) { meta.egress = port; }
    table t { key = { meta.egress: exact; } actions = { to; } }
    apply { t.apply(); }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def test_new_types_are_named_and_described(tmp_path):
    (tmp_path / "types.p4").write_text(USER_TYPES)
    p4info = generate_p4info(compile_file(str(tmp_path / "types.p4")))
    field = p4info.tables[0].match_fields[0]
    assert (field.bitwidth, field.type_name.name) == (9, "port_t")
    port, expect = _one(p4info.actions, "Ing.to").params
    assert (port.bitwidth, port.type_name.name) == (9, "port_t")
    assert (expect.bitwidth, expect.HasField("type_name")) == (8, False)
    assert p4info.type_info.new_types["port_t"].original_type.bitstring.bit.bitwidth == 9
    proto = p4info.type_info.serializable_enums["Proto"]
    assert proto.underlying_type.bitwidth == 8
    assert [(m.name, m.value) for m in proto.members] == [("TCP", b"\x06"), ("UDP", b"\x11")]
