"""Programs written for the features p4c's own v1model corpus needed and our target lacked
(found by running p4c's testdata/p4_16_samples STF tests; see p4switch/exec/CONFORMANCE.md).
Each ``conformance/NAME.p4`` runs its ``NAME.stf`` with exact output bytes."""

import io
from pathlib import Path

import pytest

from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.frontend import CompileError, ast, compile_file
from p4switch.frontend import types as T
from p4switch.stf import run_stf_file

pytestmark = pytest.mark.slow  # the p4c conformance corpus

HERE = Path(__file__).parent / "conformance"
STFS = sorted(HERE.glob("*.stf"))


@pytest.mark.parametrize("backend", ["python", "mypyc"])  # the generated code run, or compiled (native.py)
@pytest.mark.parametrize("stf", STFS, ids=[s.stem for s in STFS])
def test_conformance_program(stf: Path, backend: str, monkeypatch):
    monkeypatch.setenv("P4SWITCH_BACKEND", backend)
    prog = LoadedProgram.from_file(HERE / (stf.stem + ".p4"), target=None)  # loops are ours, not BMv2's
    assert prog.compiled.backend == backend
    out = io.StringIO()
    res = run_stf_file(prog, stf, out)
    assert res.ok, out.getvalue()
    assert res.packets_sent > 0
    assert not res.stats.get("dropped_internal_error"), "a packet hit a fault in the generated code"


# -- front-end-only programs (p4test accepts them; any architecture, or none) ---------------
def _compile(tmp_path, text: str, name: str = "prog.p4"):
    path = tmp_path / name
    path.write_text(text)
    return path, compile_file(str(path), target=None)  # the language alone, as p4test checks it


OTHER_ARCH = "control ctr(inout bit<16> x);\npackage top(ctr ctrl);\ntop(c()) main;\n"


def test_generic_struct_specializations_are_shared_and_named_like_p4c(tmp_path):
    _, checked = _compile(tmp_path, """
struct P<T> { T lo; T hi; }
header G<T> { bit<8> tag; T data; }
const P<bit<4>> a = { lo = 1, hi = 2 };
const P<bit<4>> b = { lo = 3, hi = 4 };
const P<bool> pb = { lo = true, hi = false };
control c(inout bit<16> x) {
    apply { G<P<bit<4>>> g = { tag = 1, data = a }; x = (bit<16>)(g.data.hi ++ b.lo); }
}
""" + OTHER_ARCH)
    consts = {d.name: d for d in checked.program.declarations if isinstance(d, ast.ConstDecl)}
    assert consts["a"].type is consts["b"].type
    assert str(consts["a"].type) == "P_0" and str(consts["pb"].type) == "P_1"
    assert [f.type for f in consts["a"].type.fields] == [T.BitsType(4), T.BitsType(4)]
    assert consts["pb"].type.fields[0].type == T.BOOL


def test_generic_struct_needs_the_right_number_of_type_arguments(tmp_path):
    with pytest.raises(CompileError) as info:
        _compile(tmp_path, "struct P<T> { T lo; }\nconst P<bit<4>, bit<4>> a = { lo = 1 };\n")
    assert str(info.value).startswith(f"{tmp_path}/prog.p4:2:7: error: 'P' expects 1 type "
                                      f"argument, got 2")


def test_list_type_for_extern_constructor_arguments(tmp_path):
    text = """
struct S { bit<32> a; bit<32> b; }
extern E { E(list<S> data); void run(); }
control c(inout bit<16> x) { E((list<S>){{2, 3}, {4, 5}}) e; apply { e.run(); } }
""" + OTHER_ARCH
    _, checked = _compile(tmp_path, text)
    ctl = next(d for d in checked.program.declarations if isinstance(d, ast.ControlDecl))
    arg = ctl.locals[0].args[0].value
    assert isinstance(arg.type, T.ListType) and arg.value == [[2, 3], [4, 5]]
    with pytest.raises(CompileError) as info:
        _compile(tmp_path, text.replace("{4, 5}", "{4, true}"), "bad.p4")
    assert str(info.value).startswith(f"{tmp_path}/bad.p4:4:54: error: list expression: cannot use a "
                                      f"value of type bool where bit<32> is expected")


def test_abstract_methods_implemented_in_an_instance_initializer(tmp_path):
    text = """
extern Virtual { Virtual(); abstract bit<16> f(in bit<16> ix); void run(); }
control c(inout bit<16> p) {
    Virtual() v = { bit<16> f(in bit<16> ix) { return ix + 1; } };
    apply { p = v.f(6); }
}
""" + OTHER_ARCH
    _compile(tmp_path, text)
    with pytest.raises(CompileError) as info:
        _compile(tmp_path, text.replace("bit<16> f(in bit<16> ix) {", "bit<16> g(in bit<16> ix) {"),
                 "wrong.p4")
    assert "'g' is not an abstract method of Virtual" in str(info.value)
    with pytest.raises(CompileError) as info:
        _compile(tmp_path, text.replace("Virtual() v = { bit<16> f(in bit<16> ix) { return ix + 1; } };",
                                        "Virtual() v;"), "missing.p4")
    assert "v: abstract method 'f' of Virtual is not implemented" in str(info.value)
    with pytest.raises(CompileError) as info:
        _compile(tmp_path, text.replace("bit<16> f(in bit<16> ix) { return ix + 1; }",
                                        "bit<16> f(in bit<8> ix) { return (bit<16>)ix; }"), "sig.p4")
    assert "'f' does not match the signature of abstract method Virtual.f" in str(info.value)


@pytest.mark.parametrize("text, where, message", [
    # p4c: the default action must bind the same arguments as the actions list
    ("control c(inout bit<32> x) {\n    bit<32> y;\n"
     "    action a(inout bit<32> b, bit<32> d) { b = d; }\n"
     "    table t { actions = { a(x); } default_action = a(y, 0); }\n"
     "    apply { t.apply(); }\n}\n" + "control ctr(inout bit<32> x);\npackage top(ctr ctrl);\ntop(c()) main;\n",
     "4:54", "argument 'b' of default action 'a' must be 'x' as bound in the actions list"),
    ("struct S<T> {\n  tuple<T, T> t;\n}\nconst S<_> x = { t = { 0, 0 } };\n",
     "4:7", "'_' cannot be a type argument of 'S'"),
    ("header h { bit<32> f; bool b; }\ncontrol c(inout h x) {\n    apply { x.f <<= x.b; }\n}\n",
     "3:21", "shift amount must be an unsigned integer, not bool"),
    ("parser p() {\n  state start { transition accept; }\n  state accept {}\n}\n",
     "3:9", "state 'accept' is built in and cannot be declared"),
    # p4c's EntryPriorities: once some entries have priorities, the first one must have one
    ("#include <core.p4>\ncontrol c(inout bit<8> x) {\n    action a() { }\n"
     "    table t { key = { x : ternary; } actions = { a; }\n"
     "        entries = { 1 &&& 1 : a(); priority = 5 : 2 &&& 2 : a(); } }\n"
     "    apply { t.apply(); }\n}\n",
     "5:21", "the first entry must have a priority when other entries of the table have one"),
    # p4c checks found missing by p4c's p4_16_errors (default-param, issue2335, issue2354,
    # issue2354-1, string-e, string-e1, issue3522, issue2597, function_e2, issue3847)
    ('extern void f(out bit<32> x = 0);\n',
     '1:27', "'x': out parameters cannot have default values"),
    ('control c() {\n    apply { int x = 0; }\n}\n',
     '2:17', 'cannot declare a variable of type int'),
    ('control c(inout int x) {\n    apply { }\n}\n',
     '1:21', "'x': a parameter of type int cannot have a direction"),
    ('control c() {\n    action a(int x) { }\n    apply { }\n}\n',
     '2:18', "'x': action parameters cannot have type int"),
    ('extern void f(in string s);\n',
     '1:25', "'s': a parameter of type string cannot have a direction"),
    ('struct S {\n    string s;\n}\n',
     '2:12', "field 's' of S cannot have type string"),
    ('header h_t { bit<8> f; }\ncontrol c(inout h_t[2] s, out bit<32> i) {\n    apply { i = s.lastIndex; }\n}\n',
     '3:17', "'lastIndex' of a header stack is only allowed in parsers"),
    ('control d(inout bit<8> x) { apply { } }\ncontrol c(inout bit<8> x) {\n    d() sub;\n'
     '    action a() { sub.apply(x); }\n    apply { a(); }\n}\n',
     '4:18', 'd.apply() cannot be called from an action'),
    ('action a() { }\nvoid f() {\n    a();\n}\n',
     '3:5', 'functions cannot call actions'),
    ('control c() {\n    table t { actions = { } }\n    apply { if (t.apply().action_run == t.apply().action_run) { } }\n}\n',
     '3:17', "'action_run' may only be used as the expression of a switch statement"),
    # div, div1, spec-issue1297-string-cat-err-2-anno
    ("control c(inout bit<8> a) {\n    apply { a = a / -1; }\n}\n", "2:17",
     "'/' is not defined on negative numbers"),
    ("@name(4)\nvoid f() { }\n", "1:1", "@name must contain a string"),
    # p4c: "this implementation does not support bitstrings this large" (each was a crash)
    ("const bit<12301923123132> big = 0;\n", "1:7",
     "bit<12301923123132>: this implementation supports widths up to 2048 bits"),
    ("control c(inout bit<16> x) {\n    apply { x = 1985245330 << 903012108; }\n}\n", "2:17",
     "the result of this shift is wider than the 2048 bits this implementation supports"),
    ("const string s = { t = { 0, 0 } };\n", "1:18",
     "constant 's': cannot use a value of type { tuple<int, int> t } where string is expected"),
    ("parser p(in bit<8> x) {\n    state start { transition select() { 1: accept; } }\n}\n", "2:41",
     "a select without expressions only has 'default' or '_' cases"),
    # p4c's ValidateParsedProgram: an empty actions list is fine, no actions property is not
    ("#include <core.p4>\ncontrol c(inout bit<8> x) {\n    table t { key = { x : exact; } }\n"
     "    apply { t.apply(); }\n}\n",
     "3:11", "table t has no actions property"),
    ("#include <core.p4>\nerror { Oops }\ncontrol C() {\n  apply {\n"
     "    verify(8w0 == 8w1, error.Oops);\n  }\n}\n",
     "5:5", "verify may only be invoked in parsers"),
])
def test_errors_p4c_also_reports(tmp_path, text, where, message):
    with pytest.raises(CompileError) as info:
        _compile(tmp_path, text)
    assert str(info.value).splitlines()[0] == f"{tmp_path}/prog.p4:{where}: error: {message}"


def test_select_without_expressions_takes_its_default(tmp_path):
    """p4c accepts `select () { default: s; }` (issue1291-bmv2 crashed the front end)."""
    text = ("#include <core.p4>\n#include <v1model.p4>\n"
            "header h_t { bit<8> k; }\nstruct headers_t { h_t h; }\nstruct meta_t { }\n"
            "parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {\n"
            "    state start { transition select() { default: parse_h; } }\n"
            "    state parse_h { pkt.extract(hdr.h); transition accept; }\n}\n"
            "control VC(inout headers_t hdr, inout meta_t m) { apply { } }\n"
            "control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {\n"
            "    apply { sm.egress_spec = 2; hdr.h.k = hdr.h.k + 1; }\n}\n"
            "control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }\n"
            "control CC(inout headers_t hdr, inout meta_t m) { apply { } }\n"
            "control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }\n"
            "V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;\n")
    path, _ = _compile(tmp_path, text)
    assert V1Pipeline(LoadedProgram.from_file(path)).process(0, b"\x07\xaa") == [(2, b"\x08\xaa")]


def test_typedef_of_a_struct_declaration_declares_both_names(tmp_path):
    _, checked = _compile(tmp_path, "typedef struct Point { int<32> x; int<32> y; } Pt;\n"
                                    "const Pt p = { x = -1, y = 2 };\nconst Point q = p;\n")
    consts = {d.name: d for d in checked.program.declarations if isinstance(d, ast.ConstDecl)}
    assert consts["p"].type is consts["q"].type and str(consts["q"].type) == "Point"
    assert consts["q"].value == {"x": -1, "y": 2}


def test_table_implementation_of_another_architecture(tmp_path):
    """p4c's front end takes any extern as a table implementation; running the program on
    v1model needs an action_profile/action_selector, so the executor refuses it."""
    text = ("#include <core.p4>\n#include <v1model.p4>\nextern tbl { tbl(); }\n"
            "header h_t { bit<8> k; }\nstruct headers_t { h_t h; }\nstruct meta_t { }\n"
            "parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm)"
            " { state start { pkt.extract(hdr.h); transition accept; } }\n"
            "control VC(inout headers_t hdr, inout meta_t m) { apply { } }\n"
            "control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {\n"
            "    table t { key = { hdr.h.k : exact; } actions = { NoAction; } implementation = tbl(); }\n"
            "    apply { t.apply(); }\n}\n"
            "control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }\n"
            "control CC(inout headers_t hdr, inout meta_t m) { apply { } }\n"
            "control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }\n"
            "V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;\n")
    path, _ = _compile(tmp_path, text)
    with pytest.raises(ValueError) as info:
        LoadedProgram.from_file(path)
    assert "a v1model table implementation must be an action_profile or action_selector" in str(info.value)
    with pytest.raises(CompileError) as info:
        _compile(tmp_path, text.replace("implementation = tbl();",
                                        "implementation = direct_counter(CounterType.packets);"),
                 "wrongkind.p4")
    assert "table property 'implementation' must be an instance of action_profile or " \
           "action_selector, not direct_counter" in str(info.value)


V1_TAIL = ("control VC(inout headers_t hdr, inout meta_t m) { apply { } }\n"
           "control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }\n"
           "control CC(inout headers_t hdr, inout meta_t m) { apply { } }\n"
           "control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }\n"
           "V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;\n")
V1_HEAD = ("#include <core.p4>\n#include <v1model.p4>\n"
           "header h_t { bit<8> k; }\nstruct headers_t { h_t h; }\nstruct meta_t { }\n"
           "parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {\n"
           "    state start { pkt.extract(hdr.h); transition accept; }\n}\n")


@pytest.mark.parametrize("table, where, message", [
    # const entries p4c refuses (raised a bare table error out of the executor)
    ("table t { key = { hdr.h.k : exact; } actions = { NoAction; }\n"
     "        const entries = { 1 : NoAction(); 1 : NoAction(); } }", "11:43",
     "entry 2 of table t: table Ing.t: entry exists"),
])
def test_executor_refuses_const_entries_with_a_position(tmp_path, table, where, message):
    text = (V1_HEAD + "control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {\n"
            f"    {table}\n    apply {{ t.apply(); }}\n}}\n" + V1_TAIL)
    path, _ = _compile(tmp_path, text)
    with pytest.raises(ValueError) as info:
        LoadedProgram.from_file(path)
    assert str(info.value) == f"{path}:{where}: {message}"


def test_a_package_named_v1switch_that_is_not_v1models_is_not_run(tmp_path):
    """issue793 declares its own one-parameter V1Switch: the front end accepts it, running it
    is refused with a diagnostic (was a KeyError in the executor)."""
    path, checked = _compile(tmp_path, "control C(inout bit<8> x);\npackage V1Switch(C c);\n"
                                       "control c(inout bit<8> x) { apply { } }\nV1Switch(c()) main;\n")
    with pytest.raises(CompileError) as info:
        LoadedProgram.from_file(path)
    assert str(info.value).startswith(f"{path}:4:15: error: 'main' must be v1model's V1Switch, with 6 "
                                      f"parameters, not a package of 1")
