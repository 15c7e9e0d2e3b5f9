"""Type checking: int literal widths, implicit casts, generics, enums, tuples, structs,
constant folding and control-plane names."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.frontend import CompileError, ast, compile_file
from p4switch.frontend import types as T

PROGRAMS = Path(__file__).parent / "programs"


def _stmts(control: ast.ControlDecl) -> list[ast.Node]:
    return list(control.body.statements)


def _calls(node: ast.Node) -> list[ast.MethodCall]:
    return [n for n in node.walk() if isinstance(n, ast.MethodCall)]


def test_int_literal_takes_width_from_context(v1prog, find_line):
    path = v1prog(body="        meta.b8 = meta.b8 + 1;\n"
                       "        meta.b16 = 300;\n"
                       "        meta.b8 = 300;\n"
                       "        meta.b32 = 2 + 3;\n"
                       "        meta.b16 = meta.b16 << 3;")
    checked = compile_file(str(path))
    ing = checked.pipeline["ingress"]
    s = _stmts(ing)
    add = s[0].rhs
    assert add.right.type == T.BitsType(8) and isinstance(add.right, ast.IntLiteral)
    assert s[1].rhs.type == T.BitsType(16) and s[1].rhs.value == 300
    assert s[2].rhs.value == 300 % 256  # wraps to the target width, as p4c does
    assert checked.warnings == [f"{path}:{find_line(path, 'meta.b8 = 300')}:19: warning: "
                                f"assignment: value 300 does not fit in bit<8>; it becomes 44"]
    folded = s[3].rhs
    assert isinstance(folded, ast.Cast) and folded.implicit and folded.is_const
    assert folded.value == 5 and folded.type == T.BitsType(32)
    assert folded.expr.type == T.INT  # the int expression under the implicit cast
    shift = s[4].rhs
    assert shift.type == T.BitsType(16) and shift.right.value == 3


def test_arbitrary_precision_int_constants(v1prog):
    path = v1prog(decls="const int HUGE = 1 << 100;\nconst bit<8> TOP = (bit<8>)(HUGE >> 93);\n"
                        "const bool OK = static_assert(TOP == 128);")
    checked = compile_file(str(path))
    consts = {d.name: d for d in checked.program.declarations if isinstance(d, ast.ConstDecl)}
    assert consts["HUGE"].value == 2 ** 100 and consts["HUGE"].type == T.INT
    assert consts["TOP"].value == 128
    assert consts["OK"].value is True


def test_generic_extern_functions_infer_type_arguments(sample):
    checked = sample("externs")
    calls = {c.method_name: c for c in _calls(checked.pipeline["ingress"].body)}
    h = calls["hash"]
    assert h.kind == "extern_function"
    assert h.type_args == {"O": T.BitsType(16), "T": T.BitsType(16),
                           "D": T.TupleType((T.BitsType(48), T.BitsType(48))), "M": T.BitsType(32)}
    assert [a.name for a in h.args] == ["result", "algo", "base", "data", "max"]
    assert h.args[1].value.value == "crc16"
    r = calls["random"]
    assert r.type_args == {"T": T.BitsType(8)}
    assert [a.value.type for a in r.args] == [T.BitsType(8)] * 3  # literals 0 and 255 typed by T
    d = calls["digest"]
    assert d.type_args["T"].name == "learn_t"
    assert isinstance(d.args[1].value, ast.ListExpression) and d.args[1].value.type.name == "learn_t"
    log = calls["log_msg"]
    assert log.args[0].value.value == "port {} hash {}"


def test_extern_instances_and_methods(sample):
    checked = sample("externs")
    ing = checked.pipeline["ingress"]
    inst = {d.name: d for d in ing.locals if isinstance(d, ast.InstanceDecl)}
    reg = inst["flow_bytes"]
    assert reg.type.name == "register" and reg.type.type_args == (T.BitsType(32),)
    assert reg.ctor_args == {"size": 1024}
    assert inst["port_pkts"].ctor_args == {"size": 64, "type": "packets_and_bytes"}
    assert inst["ecmp_sel"].ctor_args == {"algorithm": "crc16", "size": 128, "outputWidth": 14}
    assert inst["acl_meter"].type.type_args == (T.BitsType(2),)
    reads = [c for c in _calls(ing.body) if c.method_name == "read"]
    assert reads[0].kind == "extern_method" and reads[0].target.expr.decl is reg
    assert reads[0].signature.params[0].type == T.BitsType(32)
    meter = next(c for c in _calls(ing.body) if c.method_name == "execute_meter")
    assert meter.type_args == {"T": T.BitsType(2)}
    assert checked.control_plane_name(reg) == "Ing.flow_bytes"


def test_table_properties_entries_and_priorities(sample):
    checked = sample("externs")
    ing = checked.pipeline["ingress"]
    tables = {d.name: d for d in ing.locals if isinstance(d, ast.TableDecl)}
    acl = tables["acl"]
    assert [k.match_kind for k in acl.key] == ["ternary", "range", "optional"]
    assert acl.default_action_const and not acl.entries_const
    assert acl.prop("counters").value.decl.name == "acl_hits"
    assert acl.prop("meters").value.decl.name == "acl_meter"
    e0, e1, e2 = acl.entries
    assert isinstance(e0.keys[0], ast.Mask) and e0.keys[0].value_expr.value == 0x800
    assert e0.keys[0].mask.value == 0xFFFF and e0.keys[0].mask.type == T.BitsType(16)
    assert isinstance(e0.keys[1], ast.Range) and (e0.keys[1].low.value, e0.keys[1].high.value) == (1, 8)
    assert isinstance(e0.keys[2], ast.DontCare)
    assert e1.priority_value == 10 and e1.keys[2].value == 0x0180C200000E
    assert e2.priority_value == 3
    assert [a.annotations[0].name for a in acl.actions if a.annotations] == ["defaultonly"]
    ecmp = tables["ecmp"]
    assert ecmp.prop("implementation").value.decl.name == "ecmp_sel"
    assert ecmp.key[1].match_kind == "selector"
    assert tables["learn"].prop("support_timeout").value.value is True


def test_serializable_enums_typedefs_and_new_types(sample):
    checked = sample("types_mix")
    decls = {getattr(d, "name", None): d for d in checked.program.declarations}
    ety = decls["EtherType"].type
    assert isinstance(ety, T.SerEnumType) and ety.members == {"IPV4": 0x800, "ARP": 0x806,
                                                              "VLAN": 0x8100}
    eth = decls["ethernet_t"].type
    assert eth.field_type("dst") == T.BitsType(48)  # typedef is an alias
    assert eth.field_type("etherType") is ety
    flow = decls["flow_id_t"].type
    assert isinstance(flow, T.NewType) and flow.underlying == T.BitsType(32)
    parser = checked.pipeline["parser"]
    case = parser.states[0].transition.target.cases[0]
    assert case.keyset.type is ety and case.keyset.value == 0x800
    ing = checked.pipeline["ingress"]
    table = next(d for d in ing.locals if isinstance(d, ast.TableDecl))
    assert [e.keys[0].value for e in table.entries] == [0x800, 0x806]
    assert [[(a.name, a.value.value) for a in e.action.args] for e in table.entries] == [
        [("a", 1), ("b", 2)], [("a", 3), ("b", 4)]]
    assert [a.value.value for a in table.default_action.args] == [0, 0xFF0B]


def test_tuples_structs_unions_and_functions(sample):
    checked = sample("types_mix")
    ing = checked.pipeline["ingress"]
    s = _stmts(ing)
    pair = s[1].rhs
    assert isinstance(pair, ast.ListExpression) and pair.type.name == "pair_t"
    tup = s[2].rhs
    assert tup.type == T.TupleType((T.BitsType(8), T.BOOL)) and tup.items[0].type == T.BitsType(8)
    action = next(d for d in ing.locals if isinstance(d, ast.ActionDecl) and d.name == "set_pair")
    init = action.body.statements[0].rhs
    assert isinstance(init, ast.StructExpression) and [f.name for f in init.fields] == ["a", "b"]
    assert init.type.name == "pair_t"
    calls = {c.method_name: c for c in _calls(ing.body)}
    max8 = calls["max8"]
    assert max8.kind == "function" and [a.name for a in max8.args] == ["x", "y"]
    assert max8.args[0].value.decl.name == "WIDTH_A"  # named arguments put in parameter order
    assert calls["swap_macs"].args[0].value.is_lvalue
    union_valid = calls["isValid"]
    assert union_valid.kind == "union_method"
    invalid = next(st for st in ing.body.walk() if isinstance(st, ast.InvalidHeader))
    assert invalid.type.name == "ipv4_t"
    assert isinstance(checked.program.declarations[-1].type, T.SpecializedType)


def test_constant_folding_of_declarations(sample):
    checked = sample("types_mix")
    consts = {d.name: d.value for d in checked.program.declarations if isinstance(d, ast.ConstDecl)}
    assert consts["WIDTH_A"] == 0xAA
    assert consts["NEG"] == -1
    assert consts["FOLDED"] == 0xFF0B
    assert consts["BIG"] == 1 << 70
    assert consts["SAT"] == 255
    assert consts["FLAG"] is True
    assert consts["OCTAL"] == 15
    assert consts["FROM_BIG"] == 8
    assert consts["__v1model_version"] == 20180101


def test_header_stacks_and_parser_loop(sample):
    checked = sample("stacks_loop")
    decls = {getattr(d, "name", None): d for d in checked.program.declarations}
    stack = decls["headers_t"].type.field_type("mpls")
    assert stack == T.StackType(decls["mpls_t"].type, 4)
    ipv4 = decls["ipv4_t"].type
    assert ipv4.has_varbit() and ipv4.field_type("options") == T.VarbitType(320)
    parser = checked.pipeline["parser"]
    mpls = next(s for s in parser.states if s.name == "parse_mpls")
    nxt = mpls.statements[0].call.args[0].value
    assert nxt.kind == "stack" and nxt.name == "next" and nxt.is_lvalue
    assert mpls.transition.target.cases[0].state.decl is mpls  # the loop back
    ing = checked.pipeline["ingress"]
    push = next(c for c in _calls(ing) if c.method_name == "push_front")
    assert push.kind == "stack_method" and push.args[0].value.value == 1
    size = next(n for n in ing.body.walk() if isinstance(n, ast.Member) and n.name == "size")
    assert size.is_const and size.value == 4
    table = next(d for d in ing.locals if isinstance(d, ast.TableDecl))
    assert [checked.key_name(k) for k in table.key] == ["hdr.mpls[0].label", "mpls_valid"]


def test_control_plane_names_honour_name_annotations(v1prog):
    path = v1prog(decls='@name("top_act") action top() {}',
                  locals='    @name("renamed") action a() {}\n'
                         '    @name(".absolute_t") table t { key = { hdr.eth.dst: exact; } '
                         'actions = { a; top; } }\n'
                         '    table u { key = { hdr.eth.src: exact @name("eth_src"); } '
                         'actions = { NoAction; } }',
                  body="        t.apply();\n        u.apply();")
    checked = compile_file(str(path))
    ing = checked.pipeline["ingress"]
    by_name = {d.name: d for d in ing.locals}
    assert checked.control_plane_name(by_name["a"]) == "I.renamed"
    assert checked.control_plane_name(by_name["t"]) == "absolute_t"
    assert checked.control_plane_name(by_name["u"]) == "I.u"
    assert checked.key_name(by_name["u"].key[0]) == "eth_src"
    top = next(d for d in checked.program.declarations if getattr(d, "name", "") == "top")
    assert checked.control_plane_name(top) == "top_act"
    assert checked.enclosing_block(by_name["t"]) is ing


def test_table_apply_results(v1prog):
    path = v1prog(locals="    table t { key = { hdr.eth.dst: exact; } actions = { NoAction; } }",
                  body="        if (t.apply().hit) { meta.b8 = 1; }\n"
                       "        if (t.apply().miss) { meta.b8 = 2; }")
    # the language allows applying t twice; p4c's BMv2 back end does not (test_fe_bmv2_limits)
    ing = compile_file(str(path), target=None).pipeline["ingress"]
    conds = [s.cond for s in _stmts(ing)]
    assert [c.name for c in conds] == ["hit", "miss"]
    assert all(c.kind == "apply_result" and c.type == T.BOOL for c in conds)
    assert conds[0].expr.kind == "table_apply" and conds[0].expr.decl.name == "t"


def test_v1model_version_20200408_generic_index(tmp_path):
    path = tmp_path / "v2.p4"
    path.write_text((PROGRAMS / "basic_l3.p4").read_text())
    checked = compile_file(str(path), defines={"V1MODEL_VERSION": "20200408"})
    std = next(d for d in checked.program.declarations if getattr(d, "name", "") ==
               "standard_metadata_t")
    assert std.type.field_type("egress_spec") == T.BitsType(9)
    reg = next(d for d in checked.program.declarations if getattr(d, "name", "") == "register")
    assert [tp.name for tp in reg.type_params] == ["T", "I"]


def test_sub_control_instance_and_apply(v1prog):
    path = v1prog(decls="control Sub(inout headers_t h, in bit<8> op) {\n"
                        "    apply { if (op[7:4] == 1) { h.eth.etype[3:0] = op[3:0]; } }\n}",
                  locals="    Sub() sub;",
                  body="        sub.apply(hdr, meta.b8);\n        sub.apply(hdr, 8w0x12);")
    checked = compile_file(str(path))
    ing = checked.pipeline["ingress"]
    sub = ing.locals[0]
    assert isinstance(sub, ast.InstanceDecl) and sub.type_ref.decl.name == "Sub"
    calls = _calls(ing.body)
    assert [c.kind for c in calls] == ["control_apply", "control_apply"]
    assert calls[0].decl is sub
    assert [p.direction for p in calls[0].signature.params] == ["inout", "in"]
    assert calls[1].args[1].value.value == 0x12
    assert checked.control_plane_name(sub) == "I.sub"
    inner = next(d for d in checked.program.declarations if getattr(d, "name", "") == "Sub")
    reg_path = v1prog(decls="control Sub2(inout meta_t m) {\n    register<bit<8>>(2) r;\n"
                            "    apply { r.write(0, m.b8); } }",
                      locals="    Sub2() s2;", body="        s2.apply(meta);")
    checked2 = compile_file(str(reg_path))
    sub2 = next(d for d in checked2.program.declarations if getattr(d, "name", "") == "Sub2")
    reg = sub2.locals[0]
    assert checked2.control_plane_name(reg) == "Sub2.r"
    assert checked2.control_plane_name(reg, prefix="I.s2") == "I.s2.r"
    assert inner.type.params[1].direction == "in"


def test_dots_fill_remaining_fields_with_defaults(v1prog):
    path = v1prog(decls="struct inner_t { bit<4> a; bool b; }\n"
                        "struct s_t { bit<8> x; bit<16> y; eth_t h; inner_t inner; }",
                  locals="    s_t v;",
                  body="        v = { y = 5, ... };\n        v = { 7, ... };")
    ing = compile_file(str(path)).pipeline["ingress"]
    named, positional = (s.rhs for s in _stmts(ing))
    assert [f.name for f in named.fields] == ["x", "y", "h", "inner"]
    assert [f.value.value for f in named.fields[:2]] == [0, 5]
    assert isinstance(named.fields[2].value, ast.InvalidHeader)
    assert named.fields[3].value.type.name == "inner_t"
    assert [f.value.value for f in named.fields[3].value.fields] == [0, False]
    assert positional.items[0].value == 7 and positional.items[1].value == 0
    assert not any(isinstance(n, ast.Dots) for n in ing.body.walk())


def test_switch_on_serializable_enum_value(v1prog):
    path = v1prog(decls="enum bit<8> Kind { A = 1, B = 2, C = 3 }",
                  locals="    Kind k;",
                  body="        k = (Kind)meta.b8;\n"
                       "        switch (k) {\n"
                       "            Kind.A:\n"
                       "            Kind.B: { meta.b16 = 1; }\n"
                       "            default: { meta.b16 = 2; }\n"
                       "        }")
    ing = compile_file(str(path)).pipeline["ingress"]
    cast = _stmts(ing)[0].rhs
    assert isinstance(cast, ast.Cast) and cast.type.name == "Kind"
    sw = _stmts(ing)[1]
    assert [c.label.value for c in sw.cases[:2]] == [1, 2]
    assert sw.cases[0].body is None and sw.cases[1].body is not None
    assert isinstance(sw.cases[2].label, ast.DefaultExpr)


def test_priority_in_const_entries_is_rejected_as_p4c_does(v1prog, find_line):
    path = v1prog(locals="    table t { key = { hdr.eth.etype: ternary; } actions = { NoAction; }\n"
                         "        const entries = { priority = 5: 0x800 &&& 0xf00: NoAction(); } }")
    line = find_line(path, "priority = 5")
    with pytest.raises(CompileError) as info:
        compile_file(str(path))
    assert str(info.value).splitlines()[0] == (
        f"{path}:{line}:38: error: a table with 'const' entries cannot have priorities (use "
        f"'entries', or @priority as BMv2 reads it)")
