"""The ``resolve-references`` pass alone, on parsed programs: the reference map it produces
(each name at line:col -> the declaration at line:col) and its errors with file:line:col;
and the scopes it uses (``typecheck/scopes.py``)."""

from __future__ import annotations

import pytest

from p4switch.frontend import ast
from p4switch.frontend.errors import CompileError
from p4switch.frontend.typecheck.resolve import ACCEPT, ResolveReferences, resolve_references
from p4switch.frontend.typecheck.scopes import Scope
from tests.p4switch.frontend.passes_util import at, parsed

PROGRAM = """const bit<8> W = 4;
typedef bit<(W)> T;
header h_t { T f; }
struct s_t { h_t h; }
extern bit<8> f(in bit<8> x);
extern bit<8> f(in bit<8> x, in bit<8> y);
control C(inout s_t s) {
    bit<8> W = 1;
    action a(bit<8> v) { s.h.f = v + W + .W; }
    table t { key = { s.h.f : exact; } actions = { a; } }
    apply { t.apply(); f(W); }
}
parser P(inout s_t s) {
    state start { transition select (s.h.f) { 1 : next; default : accept; } }
    state next { transition start; }
}
"""


def _map(text: str) -> dict[tuple[str, str], list[str]]:
    """(name, line:col) -> [declaration kind name line:col, ...] for every name resolved."""
    r = resolve_references(parsed(text))
    return {(n.name, at(n)): [f"{type(d).__name__} {d.name} {at(d)}" for d in ds]
            for n, ds in r.refs.items()}


def test_every_name_maps_to_its_declaration():
    assert _map(PROGRAM) == {
        ("W", "2:14"): ["ConstDecl W 1:14"],  # in a type's width
        ("T", "3:14"): ["TypedefDecl T 2:18"],
        ("h_t", "4:14"): ["HeaderDecl h_t 3:8"],
        ("s_t", "7:17"): ["StructDecl s_t 4:8"],
        ("s", "9:26"): ["Parameter s 7:21"],
        ("v", "9:34"): ["Parameter v 9:21"],
        ("W", "9:38"): ["VarDecl W 8:12"],  # the local hides the constant
        ("W", "9:42"): ["ConstDecl W 1:14"],  # .W: top level
        ("s", "10:23"): ["Parameter s 7:21"],
        ("a", "10:52"): ["ActionDecl a 9:12"],
        ("t", "11:13"): ["TableDecl t 10:11"],
        ("f", "11:24"): ["ExternFunctionDecl f 5:15", "ExternFunctionDecl f 6:15"],  # overloads
        ("W", "11:26"): ["VarDecl W 8:12"],
        ("s_t", "13:16"): ["StructDecl s_t 4:8"],
        ("s", "14:38"): ["Parameter s 13:20"],
        ("next", "14:51"): ["ParserState next 15:11"],  # states: all declared before bodies
        ("accept", "14:67"): ["ParserState accept 0:0"],  # built in
        ("start", "15:29"): ["ParserState start 14:11"],
    }


def test_accept_and_reject_are_built_in_states():
    program = parsed(PROGRAM)
    r = resolve_references(program)
    accept = next(n for n, _ in r.refs.items() if getattr(n, "name", "") == "accept")
    assert r.refs.decl(accept) is ACCEPT


def test_it_types_nothing():
    program = parsed(PROGRAM)
    resolve_references(program)
    assert all(getattr(n, "type", None) is None for n in program.walk())


@pytest.mark.parametrize("snippet, message", [
    ("const bit<8> a = b;", "t.p4:1:18: error: 'b' is not declared"),
    ("const bit<8> counter_size = 1;\nconst bit<8> b = counter_sise;",
     "t.p4:2:18: error: 'counter_sise' is not declared; did you mean 'counter_size'?"),
    ("const bit<8> a = 1;\nconst bit<8> a = 2;", "t.p4:2:14: error: 'a' is already declared"),
    ("header h { x f; }", "t.p4:1:12: error: 'x' is not a declared type"),
    ("bit<8> f(in bit<8> x) { return f(x); }", "t.p4:1:32: error: 'f' is not declared"),
    ("action a(bit<8> x, bit<8> x) { }", "t.p4:1:27: error: duplicate parameter 'x'"),
    ("control c() { apply { bit<8> y = z; bit<8> z = 1; } }",
     "t.p4:1:34: error: 'z' is not declared"),  # declaration before use
    ("parser p() { state start { transition accept; } state accept { transition reject; } }",
     "t.p4:1:55: error: state 'accept' is built in and cannot be declared"),
    ("parser p() { state start { transition nowhere; } }",
     "t.p4:1:39: error: 'nowhere' is not declared"),
])
def test_unknown_and_duplicate_names(snippet, message):
    with pytest.raises(CompileError) as e:
        resolve_references(parsed(snippet))
    assert str(e.value).splitlines()[0] == message


# -- the scopes the pass fills ---------------------------------------------------------------
def _decl(name: str, cls=ast.ConstDecl) -> ast.Node:
    d = cls.__new__(cls)
    d.name = name
    d.loc = ast.SourceLoc("t.p4", 3, 5)
    return d


@pytest.fixture
def resolver() -> ResolveReferences:
    return ResolveReferences(ast.Program([]))


def test_inner_scopes_shadow_and_top_level_names_skip_them(resolver):
    outer, inner = _decl("x"), _decl("x")
    resolver.declare(resolver.top, "x", outer)
    local = Scope(resolver.top)
    resolver.declare(local, "x", inner)
    assert resolver.lookup(local, ast.NameRef("x")) == [inner]
    assert resolver.lookup(local, ast.NameRef("x", top_level=True)) == [outer]


def test_overloads_share_a_name_other_redeclarations_are_errors(resolver):
    f1, f2 = _decl("f", ast.FunctionDecl), _decl("f", ast.FunctionDecl)
    resolver.declare(resolver.top, "f", f1)
    resolver.declare(resolver.top, "f", f2)
    assert resolver.lookup(resolver.top, ast.NameRef("f")) == [f1, f2]
    resolver.declare(resolver.top, "c", _decl("c"))
    with pytest.raises(CompileError) as e:
        resolver.declare(resolver.top, "c", _decl("c"))
    assert str(e.value).splitlines()[0] == "t.p4:3:5: error: 'c' is already declared"
