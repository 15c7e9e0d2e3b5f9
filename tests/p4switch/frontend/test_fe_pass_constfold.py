"""The ``constant-folding`` pass (``typecheck/constfold.py``): its arithmetic, the pass run
alone on a typed program (its ``ConstantMap``), and its errors with file:line:col, raised
where type inference asks it for a value (a width, a constant's initializer)."""

from __future__ import annotations

import pytest

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError
from p4switch.frontend.pretty import expr_text
from p4switch.frontend.typecheck.constfold import ConstantFolding, arith, tdiv
from tests.p4switch.frontend.passes_util import at, checked_until

U8, S8 = T.BitsType(8), T.BitsType(8, True)


@pytest.mark.parametrize("op, t, a, b, want", [
    ("+", U8, 250, 10, 4),  # wraps to the width
    ("-", U8, 1, 2, 255),
    ("*", S8, 64, 2, -128),
    ("/", T.INT, -7, 2, -3),  # truncates toward zero
    ("%", T.INT, -7, 2, -1),
    ("|+|", U8, 250, 10, 255),  # saturates
    ("|-|", U8, 1, 2, 0),
    ("|+|", S8, 120, 10, 127),
    ("|-|", S8, -120, 10, -128),
    ("^", U8, 0xF0, 0xFF, 0x0F),
])
def test_arithmetic(op, t, a, b, want):
    assert arith(op, t)(a, b) == want


def test_truncating_division():
    assert [tdiv(7, 2), tdiv(-7, 2), tdiv(7, -2), tdiv(-7, -2)] == [3, -3, -3, 3]


PROGRAM = """const int N = 3;
const bit<(N * 2 + 2)> X = 8w255 |+| 1;
enum bit<4> E { A = 2, B = 3 }
header h_t { bit<8> a; bit<4> b; }
const bool Z = (X[3:0] ++ 4w1) == 8w0xf1;
control C(inout h_t h) {
    apply { h.a = X - (bit<8>)E.B; h.b = h.minSizeInBits() == 12 ? 4w1 : h.b; }
}
"""


def test_the_pass_alone_folds_a_typed_program():
    """Run on a typed program whose folded values were wiped: the map comes from the
    reference map, the types and the rules alone."""
    program, fe = checked_until(PROGRAM, "type-inference")
    for n in program.walk():
        if isinstance(n, ast.Expression) and not isinstance(n, (ast.IntLiteral, ast.BoolLiteral)):
            n.is_const, n.value = False, None
        if isinstance(n, ast.ConstDecl):
            n.value = None
    constants = ConstantFolding(fe.refs).run(program)
    assert {(at(e), expr_text(e)): v for e, v in constants.items() if not isinstance(
        e, ast.IntLiteral)} == {
        ("2:12", "N"): 3, ("2:12", "N * 2"): 6, ("2:12", "N * 2 + 2"): 8,  # the width
        ("2:28", "8w255 |+| 1"): 255,  # saturating
        ("5:17", "X"): 255, ("5:17", "X[3:0]"): 15, ("5:17", "X[3:0] ++ 4w1"): 0xF1,
        ("5:17", "X[3:0] ++ 4w1 == 8w0xf1"): True,
        ("7:19", "X"): 255, ("7:31", "E.B"): 3, ("7:23", "(bit<8>)E.B"): 3,
        ("7:19", "X - (bit<8>)E.B"): 252,
        ("7:42", "h.minSizeInBits()"): 12, ("7:42", "h.minSizeInBits() == 12"): True,
    }  # not the ?: whose else branch is h.b
    assert [d.value for d in program.declarations if isinstance(d, ast.ConstDecl)] == [3, 255, True]


def test_widths_are_folded_on_demand_during_type_inference():
    program, _ = checked_until(PROGRAM, "type-inference")
    x = program.declarations[1]
    assert x.type == U8 and x.value == 255  # bit<(N * 2 + 2)>: N folded when the width was typed


@pytest.mark.parametrize("snippet, message", [
    ("control c(in bit<8> w) { apply { bit<(w)> x = 0; } }",
     "t.p4:1:39: error: type width must be a compile-time integer constant"),
    ("control c(in bit<8> x) { apply { const bit<8> y = x + 1; } }",
     "t.p4:1:51: error: initializer of constant 'y' is not a compile-time constant"),
    ("header h { bit<8> f; }\ncontrol c(inout h[4] s, in bit<8> i) { apply { s[3:i].f = 1; } }",
     "t.p4:2:52: error: slice bound must be a compile-time integer constant"),
])
def test_values_that_must_be_constant(snippet, message):
    with pytest.raises(CompileError) as e:
        checked_until(snippet, "constant-folding")
    assert str(e.value).splitlines()[0] == message
