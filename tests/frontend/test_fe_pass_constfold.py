"""Constant folding (``typecheck/constfold.py``) alone, and as the typecheck pass applies it."""

from __future__ import annotations

import pytest

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.typecheck.constfold import arith, fold, tdiv
from tests.frontend.passes_util import checked_until

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


def test_fold_only_when_every_operand_is_constant():
    one, two = ast.IntLiteral(1, text="1"), ast.IntLiteral(2, text="2")
    for lit in (one, two):
        lit.is_const, lit.value = True, int(lit.text)
    e = ast.Binary("+", one, two)
    fold(e, T.INT, lambda a, b: a + b, one, two)
    assert e.is_const and e.value == 3 and e.type == T.INT
    two.is_const = False
    e2 = ast.Binary("+", one, two)
    fold(e2, T.INT, lambda a, b: a + b, one, two)
    assert e2.type == T.INT and not e2.is_const


def test_constants_fold_where_types_need_them():
    program, _ = checked_until("const int N = 3;\nconst bit<(N * 2 + 2)> X = 8w255 |+| 1;\n",
                               "typecheck")
    x = program.declarations[1]
    assert x.type == U8 and x.value == 255
