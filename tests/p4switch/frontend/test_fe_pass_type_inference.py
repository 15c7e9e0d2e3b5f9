"""The ``type-inference`` pass, run on what ``resolve-references`` produced: a type for every
expression (the ``TypeMap``), names bound from the reference map, type errors with
file:line:col; the passes after it have not run."""

from __future__ import annotations

import pytest

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError
from p4switch.frontend.passes import FRONT_END
from p4switch.frontend.typecheck.checker import TypeInference
from p4switch.frontend.typecheck.typemap import TypeMap
from tests.p4switch.frontend.passes_util import at, checked_until, control

PROGRAM = """
match_kind { exact, ternary }
const bit<8> W = 4;
extern Reg { Reg(bit<32> size); bit<8> read(in bit<32> i); }
control C(inout bit<8> x) {
    Reg(32w16) r;
    @name("a") action set(bit<8> v) { x = v + (bit<8>)(W << 1); }
    table t {
        key = { x : ternary; }
        actions = { set; }
        const entries = { 8w1 &&& 8w0xff : set(2); 8w2 &&& 8w0xff : set(3); }
    }
    apply { bit<(W + 4)> y = r.read(0); x = y; t.apply(); }
}
"""


def test_every_expression_gets_a_type():
    program, fe = checked_until(PROGRAM, "type-inference")
    types = {(at(e), type(e).__name__): str(t) for e, t in fe.types.items()
             if isinstance(e, ast.Expression) and e.loc.line == 7}
    assert types == {  # action set(bit<8> v) { x = v + (bit<8>)(W << 1); }
        ("7:31", "IntLiteral"): "int", ("7:52", "IntLiteral"): "int",  # the widths
        ("7:39", "NameRef"): "bit<8>", ("7:43", "NameRef"): "bit<8>",
        ("7:43", "Binary"): "bit<8>", ("7:47", "Cast"): "bit<8>",
        ("7:56", "NameRef"): "bit<8>", ("7:56", "Binary"): "bit<8>",
        ("7:61", "IntLiteral"): "bit<1>"}  # a constant shift amount: the width its value needs
    c = control(program, "C")
    local = c.body.statements[0]
    assert local.type == T.BitsType(8)  # bit<(W + 4)>: width folded on demand
    assert fe.types[local.init] == T.BitsType(8)  # r.read(0)
    table = next(d for d in c.locals if isinstance(d, ast.TableDecl))
    assert isinstance(table.type, T.TableType)
    action = next(d for d in c.locals if isinstance(d, ast.ActionDecl))
    assert [e.action.decl for e in table.entries] == [action, action]
    assert action.body.statements[0].lhs.decl is c.params[0]  # from the reference map
    assert fe.typer.main is None


def test_it_runs_on_the_reference_map_alone():
    """Given a reference map, type inference needs no scopes: it reads each name's
    declaration from the map (here one built by the resolve pass, then typed afresh)."""
    program, fe = checked_until(PROGRAM, "resolve-references")
    assert fe.typer is None and all(getattr(n, "type", None) is None for n in program.walk()
                                    if isinstance(n, ast.Expression))
    typer = TypeInference(program, fe.refs)
    typer.run()
    types = TypeMap.of(program)
    names = [n for n in program.walk() if isinstance(n, ast.NameRef)]
    assert names and all(n in types and n.decl is fe.refs.decl(n) for n in names)


def test_later_passes_have_not_run():
    program, fe = checked_until(PROGRAM, "type-inference")
    assert [p.name for p in FRONT_END][:2] == ["resolve-references", "type-inference"]
    assert fe.constants is None
    c = control(program, "C")
    action = next(d for d in c.locals if isinstance(d, ast.ActionDecl))
    assert action.annotations[0].args[0].type is None  # annotation-args comes later
    table = next(d for d in c.locals if isinstance(d, ast.TableDecl))
    assert [e.match_priority for e in table.entries] == [None, None]  # entry-priorities


@pytest.mark.parametrize("snippet, message", [
    ("const bit<8> a = true;", "t.p4:1:18: error: constant 'a': cannot use a value of type bool "
                               "where bit<8> is expected"),
    ("control c(inout bit<8> x, in bit<4> y) { apply { x = x + y; } }",
     "t.p4:1:54: error: '+': operands have different types bit<8> and bit<4>; insert a cast"),
    ("struct s { bit<8> f; }\ncontrol c(inout s v) { apply { v.g = 1; } }",
     "t.p4:2:34: error: s has no field 'g'"),
    ("control c(in bit<8> x) { apply { x = 1; } }",
     "t.p4:1:34: error: cannot assign to 'in' parameter 'x'"),
    ("const bool b = 1w1 == 1;\ncontrol c() { apply { if (8w1) { } } }",
     "t.p4:2:27: error: if condition must be bool, not bit<8>"),
])
def test_type_errors_name_their_place(snippet, message):
    checked_until(snippet, "resolve-references")  # names are fine: these are type errors
    with pytest.raises(CompileError) as e:
        checked_until(snippet, "type-inference")
    assert str(e.value).splitlines()[0] == message
