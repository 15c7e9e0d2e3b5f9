"""The ``constant-folding`` pass: the value of every compile-time constant expression.

Input: a typed program (``type-inference``) and its ``ReferenceMap``; a name folds to the
value of the constant it refers to. Output: the ``ConstantMap`` (expression -> value), also
written onto the AST as ``.is_const``/``.value`` (``ast.py`` says what values look like), and
``ConstDecl.value``. One rule per expression class (``c_<Class>``), computing a node's value
from its type and its operands' values: P4's arithmetic on fixed-width and
arbitrary-precision integers (``arith``), casts, slices, concatenation, comparisons, enum and
error members, constant struct fields, header sizes.

Folding on demand: types need values (``bit<W + 1>``, slice bounds, a stack's size, the width
an integer shift amount takes), so type inference folds each expression right after typing it
(``ConstantFolding.fold``), as p4c's TypeInference calls ConstantFolding on widths; a width
never needs more than its operands, already typed and folded. The pass itself (``run``) then
folds the whole typed program bottom-up, so it can run alone on any typed program.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError, SourceLines
from p4switch.frontend.typecheck.resolve import ReferenceMap

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



# header methods folded to the header's size
SIZE_METHODS = ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes")
_CMP: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


class ConstantMap:
    """Expression -> its folded value, for the expressions that are compile-time constants."""

    def __init__(self, values: dict[ast.Expression, Any]) -> None:
        self._values = values

    def __getitem__(self, e: ast.Expression) -> Any:
        return self._values[e]

    def __contains__(self, e: ast.Expression) -> bool:
        return e in self._values

    def __len__(self) -> int:
        return len(self._values)

    def items(self) -> Iterator[tuple[ast.Expression, Any]]:
        return iter(self._values.items())


class ConstantFolding:
    """Folding typed expressions, one node at a time (``fold``) or a whole program (``run``)."""

    def __init__(self, refs: ReferenceMap, sources: SourceLines | None = None) -> None:
        self.refs = refs
        self.sources = sources

    def run(self, program: ast.Program) -> ConstantMap:
        """Fold every expression of a typed program, operands before the expressions using
        them (and a constant's initializer before the names that read it); returns the map."""
        values: dict[ast.Expression, Any] = {}
        nodes = list(_postorder(program))
        # a select case's keyset is a set of values to match, not a value
        keysets = {n.keyset for n in nodes if isinstance(n, ast.SelectCase)}
        for n in nodes:
            if isinstance(n, ast.ConstDecl):
                self.fold_constant(n)
            elif isinstance(n, ast.Expression) and n.type is not None and n not in keysets:
                self.fold(n)
                if n.is_const:
                    values[n] = n.value
        return ConstantMap(values)

    def fold(self, e: ast.Expression) -> None:
        """Fold ``e`` (typed, its operands folded): set ``is_const``/``value`` when constant."""
        rule = getattr(self, "c_" + type(e).__name__, None)
        if rule is None:
            return
        result = rule(e)
        if result is not None:
            e.is_const, e.value = True, result[0]

    def fold_constant(self, d: ast.ConstDecl) -> None:
        """A constant declaration takes its (folded, converted) initializer's value."""
        if not d.init.is_const:
            raise self.err(d.init, f"initializer of constant '{d.name}' is not a compile-time "
                                   f"constant")
        d.value = d.init.value

    def require_int(self, e: ast.Expression, what: str) -> int:
        """The value of ``e``, which must be an integer constant (a width, a bound, a size)."""
        if not e.is_const or not isinstance(e.value, int) or isinstance(e.value, bool):
            raise self.err(e, f"{what} must be a compile-time integer constant")
        return e.value

    def err(self, node: ast.Node, msg: str) -> CompileError:
        return CompileError.at(node.loc, msg, self.sources)

    # -- rules: each returns (value,) for a constant, None otherwise ------------------------
    def c_IntLiteral(self, e: ast.IntLiteral):
        base = T.underlying(e.type)
        return (base.fit(e.value) if isinstance(base, T.BitsType) else e.value,)

    def c_BoolLiteral(self, e: ast.BoolLiteral):
        return (e.value,)

    c_StringLiteral = c_BoolLiteral

    def c_NameRef(self, e: ast.NameRef):
        d = self.refs.decl(e)
        return (d.value,) if isinstance(d, ast.ConstDecl) else None

    def c_Member(self, e: ast.Member):
        if e.kind == "error" or (e.kind == "enum" and isinstance(e.type, T.EnumType)):
            return (e.name,)
        if e.kind == "enum":
            return (e.type.members[e.name],)
        if e.kind == "stack" and e.name == "size":
            return (e.expr.type.size,)
        if e.kind == "field" and e.expr.is_const:
            v = e.expr.value
            if isinstance(v, dict):
                return (v.get(e.name),)
            if isinstance(v, list):
                t = e.expr.type
                t = t.underlying if isinstance(t, T.NewType) else t
                return (v[t.field_names().index(e.name)],)
        return None

    def c_Slice(self, e: ast.Slice):
        if not e.expr.is_const:
            return None
        return ((e.expr.value >> e.lo_value) & e.type.mask,)

    def c_Unary(self, e: ast.Unary):
        if not e.expr.is_const:
            return None
        v, t = e.expr.value, e.type
        if e.op == "!":
            return (not v,)
        if e.op == "~":
            return (t.fit(~v),)
        if e.op == "-":
            return (t.fit(-v) if isinstance(t, T.BitsType) else -v,)
        return (v,)

    def c_Binary(self, e: ast.Binary):
        if not (e.left.is_const and e.right.is_const):
            return None
        a, b, op = e.left.value, e.right.value, e.op
        if op == "&&":
            return (a and b,)
        if op == "||":
            return (a or b,)
        if op in _CMP:
            return (_CMP[op](a, b),)
        if op == "<<":
            lt = e.left.type
            if lt == T.INT:
                return (a << b,)
            return (lt.fit(a << b) if b < lt.width else 0,)
        if op == ">>":
            return (a >> b,)  # Python's >> is arithmetic, as P4's on int<>
        if op == "++":
            lt, rt = T.underlying(e.left.type), T.underlying(e.right.type)
            return (e.type.fit(((a & lt.mask) << rt.width) | (b & rt.mask)),)
        return (arith(op, T.underlying(e.type))(a, b),)

    def c_Ternary(self, e: ast.Ternary):
        if not (e.cond.is_const and e.then.is_const and e.else_.is_const):
            return None
        return (e.then.value if e.cond.value else e.else_.value,)

    def c_Cast(self, e: ast.Cast):
        if not e.expr.is_const:
            return None
        v, src, t = e.expr.value, e.expr.type, e.type
        if src == t or isinstance(e.expr, (ast.ListExpression, ast.StructExpression)):
            return (v,)
        tb = T.underlying(t)
        if isinstance(tb, T.BitsType):
            return (tb.fit(int(v)),)
        if t == T.BOOL:
            return (bool(v),)
        return (v,)  # a new type of its underlying type; bit<> to int

    def c_ListExpression(self, e: ast.ListExpression):
        if not all(i.is_const for i in e.items):
            return None
        return ([i.value for i in e.items],)

    def c_StructExpression(self, e: ast.StructExpression):
        if not all(f.value.is_const for f in e.fields):
            return None
        return ({f.name: f.value.value for f in e.fields},)

    def c_Mask(self, e: ast.Mask):
        return self._keyset(e.value_expr, e.mask)

    def c_Range(self, e: ast.Range):
        return self._keyset(e.low, e.high)

    def _keyset(self, *parts: ast.Expression):
        """A keyset of constants is constant; as a set it has no single value."""
        return (None,) if all(p.is_const for p in parts) else None

    def c_MethodCall(self, e: ast.MethodCall):
        if e.kind == "header_method" and e.method_name in SIZE_METHODS:
            h = e.target.expr.type
            bits = h.bit_width()
            if "min" in e.method_name:
                bits -= sum(f.type.bit_width() for f in h.fields if isinstance(f.type, T.VarbitType))
            return (bits if e.method_name.endswith("Bits") else (bits + 7) // 8,)
        if e.kind == "extern_function" and e.method_name == "static_assert" and \
                e.decl.loc.file.endswith("core.p4") and e.args[0].value.is_const and \
                e.args[0].value.value:
            return (True,)
        return None


def _postorder(root: ast.Node) -> Iterator[ast.Node]:
    """Every node after its children, in source order (iteratively: deep nesting)."""
    stack: list[tuple[ast.Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            yield node
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(list(node.children())))
