"""Parsing: whole programs (the samples and fabric.p4) and the grammar's tricky corners.

Every sample must come out fully checked: each expression typed and each name resolved,
which is what the executor and the P4Info generator rely on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.frontend import ast, compile_file, compile_source
from p4switch.frontend import types as T
from p4switch.frontend.parser import parse_int_literal

PROGRAMS = Path(__file__).parent / "programs"
REPO = Path(__file__).resolve().parents[3]
SAMPLES = sorted(PROGRAMS.glob("*.p4"))


def _unchecked(program: ast.Program) -> list[str]:
    """Expressions without a type and names without a declaration."""
    bad = []
    for node in program.walk():
        if isinstance(node, ast.Expression) and node.type is None:
            bad.append(f"{type(node).__name__} at {node.loc}")
        if isinstance(node, ast.NameRef) and node.decl is None:
            bad.append(f"unresolved {node.name} at {node.loc}")
    return bad


def test_samples_exist():
    names = {p.name for p in SAMPLES}
    assert {"basic_l3.p4", "stacks_loop.p4", "externs.p4", "types_mix.p4"} <= names


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_compiles_fully_annotated(path):
    checked = compile_file(str(path))
    assert _unchecked(checked.program) == []
    assert set(checked.pipeline) == {"parser", "verify_checksum", "ingress", "egress",
                                     "compute_checksum", "deparser"}
    assert isinstance(checked.pipeline["parser"], ast.ParserDecl)
    assert all(isinstance(checked.pipeline[s], ast.ControlDecl) for s in
               ("verify_checksum", "ingress", "egress", "compute_checksum", "deparser"))
    assert '# 1 "' in checked.source_text or "#line" in checked.source_text


def test_fabric_compiles():
    fabric = REPO / "p4src" / "fabric.p4"
    checked = compile_file(str(fabric), include_dirs=[str(REPO / "p4src" / "include")])
    assert _unchecked(checked.program) == []
    assert checked.pipeline["ingress"].name


def test_basic_l3_structure(sample):
    checked = sample("basic_l3")
    parser = checked.pipeline["parser"]
    assert [s.name for s in parser.states] == ["start", "parse_ethernet", "parse_ipv4"]
    sel = parser.states[1].transition.target
    assert isinstance(sel, ast.SelectExpression)
    assert sel.cases[0].keyset.value == 0x800 and sel.cases[0].keyset.type == T.BitsType(16)
    assert sel.cases[0].state.decl is parser.states[2]
    assert sel.cases[1].state.decl.name == "accept"
    ingress = checked.pipeline["ingress"]
    table = next(d for d in ingress.locals if isinstance(d, ast.TableDecl))
    assert checked.control_plane_name(table) == "MyIngress.ipv4_lpm"
    assert [(checked.key_name(k), k.match_kind) for k in table.key] == [("hdr.ipv4.dstAddr", "lpm")]
    assert [a.decl.name for a in table.actions] == ["ipv4_forward", "drop", "NoAction"]
    assert checked.control_plane_name(table.actions[2].decl) == "NoAction"
    assert checked.control_plane_name(table.actions[1].decl) == "MyIngress.drop"
    assert table.default_action.decl.name == "drop" and not table.default_action_const
    assert table.prop("size").value.value == 1024
    fwd = table.actions[0].decl
    assert [(p.name, p.direction, str(p.type)) for p in fwd.type.control_plane_params()] == [
        ("dstAddr", None, "bit<48>"), ("port", None, "bit<9>")]


def test_annotations_are_parsed_with_arguments(tmp_path):
    text = """
    @controller_header("packet_in") header pin_t { @id(1) bit<9> port; bit<7> pad; }
    @name(".global_t") @pragma foo bar baz
    struct s_t { @field_list(1, 2) bit<8> a; }
    """
    checked = _compile_decls(tmp_path, text)
    decls = {getattr(d, "name", None): d for d in checked.program.declarations}
    pin = decls["pin_t"]
    assert pin.annotation("controller_header").args[0].value == "packet_in"
    assert pin.fields[0].annotations[0].name == "id"
    assert pin.fields[0].annotations[0].args[0].value == 1
    s = decls["s_t"]
    assert s.annotation("name").args[0].value == ".global_t"
    assert s.annotation("pragma").raw == "foo bar baz" and s.annotation("pragma").args == []
    assert [a.value for a in s.fields[0].annotations[0].args] == [1, 2]


def test_unstructured_annotation_body_is_kept_raw(tmp_path):
    text = '@my_tool(key = "a", 1 + ) const bit<8> K = 1;'
    checked = _compile_decls(tmp_path, text)
    k = next(d for d in checked.program.declarations if getattr(d, "name", "") == "K")
    ann = k.annotation("my_tool")
    assert ann.args == [] and ann.raw == 'key = "a", 1 + '


@pytest.mark.parametrize("text,expected", [
    ("5", (5, None, False)), ("8w5", (5, 8, False)), ("8s-1", (-1, 8, True)),
    ("0xFF", (255, None, False)), ("16w0x_ff_00", (0xFF00, 16, False)),
    ("0b1010_1010", (0xAA, None, False)), ("0o17", (15, None, False)), ("0d99", (99, None, False)),
    ("1_000_000", (1000000, None, False)), ("32w0b1", (1, 32, False)),
    ("123456789012345678901234567890", (123456789012345678901234567890, None, False)),
])
def test_int_literal_forms(text, expected):
    assert parse_int_literal(text) == expected


PRECEDENCE = [
    ("1 + 2 * 3", 7),
    ("2 + 3 << 1", 10),          # shifts bind looser than +
    ("8w1 ++ 8w2 + 16w1", 0x0103),  # ++ is at the level of +, left-associative
    ("(16w0xff00 >> 8) & 0xf", 0xf),
    ("16w1 << 4 | 16w1", 17),
    ("16w6 / 4 + 16w6 % 4", 3),
    ("true ? 16w7 : 16w9", 7),
    ("(bit<16>)(8w0xF0 ++ 4w0xA)", 0xF0A),
    ("(bit<16>)16w0xABCD[11:4]", 0xBC),
    ("-16w1", 0xFFFF),
    ("~16w0 |-| 16w1", 0xFFFE),
    ("16w65535 |+| 5", 0xFFFF),
    ("16w65535 + 5", 4),
    ("(bit<16>)(-8s7 >> 1)", 0xFFFC),  # int<> shifts right arithmetically
]


@pytest.fixture(scope="module")
def precedence_consts(tmp_path_factory):
    decls = "\n".join(f"const bit<16> K{i} = {expr};" for i, (expr, _) in enumerate(PRECEDENCE))
    checked = _compile_decls(tmp_path_factory.mktemp("prec"), decls)
    return {d.name: d.value for d in checked.program.declarations if isinstance(d, ast.ConstDecl)}


@pytest.mark.parametrize("index", range(len(PRECEDENCE)), ids=[e for e, _ in PRECEDENCE])
def test_precedence_and_folding(precedence_consts, index):
    assert precedence_consts[f"K{index}"] == PRECEDENCE[index][1]


def test_nested_type_arguments_and_shift_right(tmp_path):
    """``bit<bit<8>>``-style closes and ``>>`` shifts in the same program."""
    text = """
    struct pair_t { bit<8> a; bit<8> b; }
    const bit<8> S = 8w128 >> 3;
    const bit<8> T2 = (8w128 >>3) >> 1;
    """
    checked = _compile_decls(tmp_path, text, locals="register<bit<32>>(4) r;\n"
                             "tuple<bit<8>, tuple<bit<4>, bit<4>>> tt;")
    consts = {d.name: d.value for d in checked.program.declarations if isinstance(d, ast.ConstDecl)}
    assert consts["S"] == 16 and consts["T2"] == 8
    ing = checked.pipeline["ingress"]
    r = next(d for d in ing.locals if d.name == "r")
    assert str(r.type) == "register<bit<32>>"
    tt = next(d for d in ing.locals if d.name == "tt")
    assert str(tt.type) == "tuple<bit<8>, tuple<bit<4>, bit<4>>>"


def test_lookahead_and_generic_calls_in_parser(sample):
    checked = sample("stacks_loop")
    parser = checked.pipeline["parser"]
    after = next(s for s in parser.states if s.name == "after_mpls")
    look = after.transition.target.exprs[0]
    assert look.kind == "packet_in" and look.method_name == "lookahead"
    assert look.type == T.BitsType(4) and look.type_args == {"T": T.BitsType(4)}
    ipv4 = next(s for s in parser.states if s.name == "parse_ipv4")
    extract = ipv4.statements[0].call
    assert extract.kind == "packet_in" and len(extract.args) == 2
    assert extract.args[1].value.type == T.BitsType(32)
    verify = ipv4.statements[1].call
    assert verify.kind == "verify" and verify.args[1].value.value == "NoMatch"


def test_switch_with_fallthrough_and_default(sample):
    checked = sample("externs")
    ing = checked.pipeline["ingress"]
    sw = next(s for s in ing.body.statements if isinstance(s, ast.SwitchStatement))
    labels = [(type(c.label).__name__, c.body is None) for c in sw.cases]
    assert labels == [("NameRef", False), ("NameRef", True), ("DefaultExpr", False)]
    assert [c.action.name for c in sw.cases[:2]] == ["to_cpu", "count_acl"]
    assert isinstance(sw.expr.type, T.ActionEnumType)


def _compile_decls(tmp_path: Path, decls: str, locals: str = ""):
    """Compile a minimal complete program around some declarations."""
    path = tmp_path / "decls.p4"
    path.write_text("#include <v1model.p4>\n" + decls + """
struct h_t { }
struct m_t { }
parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t s) {
    state start { transition accept; } }
control V(inout h_t h, inout m_t m) { apply { } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) { """ + locals + """ apply { } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out p, in h_t h) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
""")
    return compile_file(str(path))


def test_preprocessed_text_round_trips(sample):
    """The device config carries checked.source_text; compiling it again (as the switch
    does) gives the same program and reports errors against the original files."""
    first = sample("externs")
    again = compile_source(first.source_text, "device_config.p4")
    assert [d.name for d in again.pipeline.values()] == [d.name for d in first.pipeline.values()]
    tables = [again.control_plane_name(t) for t in again.declarations(ast.TableDecl)]
    assert tables == ["Ing.acl", "Ing.ecmp", "Ing.learn"]
    acl = again.declarations(ast.TableDecl)[0]
    assert acl.loc.file == str(PROGRAMS / "externs.p4") and acl.loc.line == 67 and acl.loc.col == 11


def test_values_may_reuse_type_names(v1prog):
    """A parameter or local named like a type (v1model's 'counter', 'meter') hides the type
    in its scope, as p4c's scoped lexer does; the type stays usable elsewhere."""
    path = v1prog(decls="action bump(inout bit<32> counter) { counter = counter + 1; }",
                  locals="    counter(8, CounterType.packets) hits;\n"
                         "    action a(bit<8> meter) { meta.b8 = meter; }",
                  body="        bit<32> counter = 5;\n"
                       "        bump(counter);\n"
                       "        meta.b32 = counter;\n"
                       "        hits.count(counter);")
    checked = compile_file(str(path))
    ing = checked.pipeline["ingress"]
    assert str(ing.locals[0].type) == "counter"
    var = ing.body.statements[0]
    assert isinstance(var, ast.VarDecl) and var.name == "counter"
    assert ing.body.statements[2].rhs.decl is var
    a = ing.locals[1]
    assert a.body.statements[0].rhs.decl is a.params[0]


def test_width_expressions_in_type_arguments(tmp_path):
    text = "const int W = 4;\ntypedef bit<(W * 2)> byte_t;\n"
    checked = _compile_decls(tmp_path, text, locals="register<bit<(W + 4)>>(2) r;\nbyte_t b;")
    ing = checked.pipeline["ingress"]
    assert str(ing.locals[0].type) == "register<bit<8>>"
    assert str(ing.locals[1].type) == "bit<8>"
