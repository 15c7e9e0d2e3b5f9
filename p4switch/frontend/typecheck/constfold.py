"""Constant folding: the values of compile-time constant expressions.

Expression typing (``expressions.py``) folds as it types, because types need folded values
(``bit<W + 1>``, slice bounds, shift amounts, stack sizes), as p4c's type inference calls its
constant folding on widths. These are the folding rules themselves: P4's arithmetic on
fixed-width and arbitrary-precision integers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from p4switch.frontend import ast
from p4switch.frontend import types as T

# widest bit<>/int<> (and widest constant a shift may make), as in p4c
MAX_WIDTH = 2048


def arith(op: str, t: T.P4Type) -> Callable:
    """The folding function of binary ``op`` on values of type ``t`` (wrapping to its width,
    saturating for ``|+|``/``|-|``)."""
    fit = t.fit if isinstance(t, T.BitsType) else (lambda v: v)
    if op == "+":
        return lambda a, b: fit(a + b)
    if op == "-":
        return lambda a, b: fit(a - b)
    if op == "*":
        return lambda a, b: fit(a * b)
    if op == "/":
        return lambda a, b: fit(tdiv(a, b))
    if op == "%":
        return lambda a, b: fit(a - b * tdiv(a, b))
    if op == "&":
        return lambda a, b: fit(a & b)
    if op == "|":
        return lambda a, b: fit(a | b)
    if op == "^":
        return lambda a, b: fit(a ^ b)
    if op in ("|+|", "|-|"):
        if not isinstance(t, T.BitsType):
            return lambda a, b: a + b if op == "|+|" else a - b
        lo = -(1 << (t.width - 1)) if t.signed else 0
        hi = (1 << (t.width - 1)) - 1 if t.signed else (1 << t.width) - 1
        if op == "|+|":
            return lambda a, b: max(lo, min(hi, a + b))
        return lambda a, b: max(lo, min(hi, a - b))
    raise AssertionError(op)


def tdiv(a: int, b: int) -> int:
    """Integer division truncating toward zero (as P4 and C do)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def set_const(e: ast.Expression, t: T.P4Type, value: Any) -> None:
    """``e`` is a constant of type ``t`` with ``value``."""
    e.type = t
    e.is_const = True
    e.value = value


def fold(e: ast.Expression, t: T.P4Type, fn: Callable, *operands: ast.Expression) -> None:
    """``e`` has type ``t``; when every operand is constant, it is constant ``fn(values)``."""
    e.type = t
    if all(o.is_const for o in operands):
        e.is_const = True
        e.value = fn(*(o.value for o in operands))
