"""The ``typecheck`` pass alone: names resolved, expressions typed, constants folded, tables
and instances checked; the passes after it have not run."""

from __future__ import annotations

import pytest

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError
from tests.frontend.passes_util import checked_until, control

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


def test_names_types_and_constants():
    program, checker = checked_until(PROGRAM, "typecheck")
    c = control(program, "C")
    action = next(d for d in c.locals if isinstance(d, ast.ActionDecl))
    assign = action.body.statements[0]
    assert assign.lhs.decl is c.params[0]  # x resolved to the control's parameter
    shift = assign.rhs.right.expr
    assert shift.is_const and shift.value == 8 and shift.type == T.BitsType(8)  # folded
    local = c.body.statements[0]
    assert local.type == T.BitsType(8)  # bit<(W + 4)>: width folded from the constant
    assert isinstance(local.init, ast.MethodCall) and local.init.type == T.BitsType(8)
    table = next(d for d in c.locals if isinstance(d, ast.TableDecl))
    assert isinstance(table.type, T.TableType)
    assert [e.action.decl for e in table.entries] == [action, action]
    assert checker.main is None


def test_later_passes_have_not_run():
    program, _ = checked_until(PROGRAM, "typecheck")
    c = control(program, "C")
    action = next(d for d in c.locals if isinstance(d, ast.ActionDecl))
    assert action.annotations[0].args[0].type is None  # annotation-args comes next
    table = next(d for d in c.locals if isinstance(d, ast.TableDecl))
    assert [e.match_priority for e in table.entries] == [None, None]  # entry-priorities


@pytest.mark.parametrize("snippet, message", [
    ("const bit<8> a = b;", "t.p4:1:18: error: 'b' is not declared"),
    ("const bit<8> a = true;", "t.p4:1:18: error: constant 'a': cannot use a value of type bool "
                               "where bit<8> is expected"),
])
def test_the_first_error_stops_the_pass(snippet, message):
    with pytest.raises(CompileError) as e:
        checked_until(snippet, "typecheck")
    assert str(e.value).splitlines()[0] == message
