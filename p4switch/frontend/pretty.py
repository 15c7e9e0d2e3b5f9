"""P4 source text of expressions, as p4c prints them in control-plane names.

Match field names in P4Info and BMv2 are built from the key expression by p4c's rule
(``key_text``): ``hdr.ipv4.dstAddr``, ``hdr.vlan[0].vid``, ``meta.x[7:0]``, ``hdr.ipv4.$valid$``
for ``hdr.ipv4.isValid()``, a struct field's ``@name``, constants in the base they were written
in without leading zeros. The BMv2 back end and the P4Info generator both use this spelling.
"""

from __future__ import annotations

import re

from p4switch.frontend import ast
from p4switch.frontend import types as T

_BASES = {"0x": 16, "0b": 2, "0o": 8}
_DIGITS = "0123456789abcdef"


def key_text(e: ast.Node) -> str:
    """Name p4c's front end gives a table key expression without ``@name`` (its
    KeyNameGenerator); for expressions it cannot name (p4c then demands an ``@name``) the
    source text."""
    if isinstance(e, ast.Member):
        base_type = T.underlying(e.expr.type) if getattr(e.expr, "type", None) is not None else None
        name = e.name
        if isinstance(base_type, (T.HeaderType, T.HeaderUnionType)) and name == "isValid":
            name = "$valid$"
        elif isinstance(base_type, T.StructLikeType):
            for fld in base_type.fields:
                ann = ast.find_annotation(fld.annotations, "name") if fld.name == name else None
                if ann is not None and ann.args and isinstance(ann.args[0], ast.StringLiteral):
                    name = ann.args[0].value
                    if name.startswith("."):
                        return name[1:]
        return f"{key_text(e.expr)}.{name}"
    if isinstance(e, ast.MethodCall) and not e.args and isinstance(e.target, ast.Member):
        target = key_text(e.target)
        if target.endswith("$valid$"):
            return target
    if isinstance(e, ast.ArrayIndex):
        return f"{key_text(e.expr)}[{key_text(e.index)}]"
    if isinstance(e, ast.Slice):
        return f"{key_text(e.expr)}[{key_text(e.hi)}:{key_text(e.lo)}]"
    if isinstance(e, ast.Binary) and e.op == "&":
        return f"{key_text(e.left)} & {key_text(e.right)}"
    if isinstance(e, ast.IntLiteral):
        return _constant_text(e)
    return expr_text(e)


def _constant_text(e: ast.IntLiteral) -> str:
    """A constant as p4c prints it in names: its base's prefix, no width, no leading zeros."""
    spelling = re.sub(r"^\d+[ws]", "", (e.text or "").lower().replace("_", ""))
    base = _BASES.get(spelling[:2], 10)
    value = abs(int(e.value))
    digits = ""
    while True:
        digits = _DIGITS[value % base] + digits
        value //= base
        if value == 0:
            break
    prefix = next((p for p, b in _BASES.items() if b == base), "")
    return ("-" if int(e.value) < 0 else "") + prefix + digits


def expr_text(e: ast.Node) -> str:
    if isinstance(e, ast.NameRef):
        return ("." if e.top_level else "") + e.name
    if isinstance(e, ast.Member):
        return f"{expr_text(e.expr)}.{e.name}"
    if isinstance(e, ast.ArrayIndex):
        return f"{expr_text(e.expr)}[{expr_text(e.index)}]"
    if isinstance(e, ast.Slice):
        return f"{expr_text(e.expr)}[{expr_text(e.hi)}:{expr_text(e.lo)}]"
    if isinstance(e, ast.IntLiteral):
        return e.text or str(e.value)
    if isinstance(e, ast.BoolLiteral):
        return "true" if e.value else "false"
    if isinstance(e, ast.StringLiteral):
        return f'"{e.value}"'
    if isinstance(e, ast.MethodCall):
        args = ", ".join(expr_text(a.value) for a in e.args)
        return f"{expr_text(e.target)}({args})"
    if isinstance(e, ast.TypeExpression):
        return type_ref_text(e.type_ref)
    if isinstance(e, ast.Cast):
        inner = expr_text(e.expr)
        return inner if e.implicit or e.type_ref is None else f"({type_ref_text(e.type_ref)}){inner}"
    if isinstance(e, ast.Unary):
        return f"{e.op}{expr_text(e.expr)}"
    if isinstance(e, ast.Binary):
        return f"{expr_text(e.left)} {e.op} {expr_text(e.right)}"
    if isinstance(e, ast.Ternary):
        return f"{expr_text(e.cond)} ? {expr_text(e.then)} : {expr_text(e.else_)}"
    if isinstance(e, ast.ListExpression):
        return "{" + ", ".join(expr_text(i) for i in e.items) + "}"
    if isinstance(e, ast.StructExpression):
        return "{" + ", ".join(f"{f.name} = {expr_text(f.value)}" for f in e.fields) + "}"
    if isinstance(e, (ast.DontCare, ast.DefaultExpr)):
        return "_" if isinstance(e, ast.DontCare) else "default"
    if isinstance(e, ast.Mask):
        return f"{expr_text(e.value_expr)} &&& {expr_text(e.mask)}"
    if isinstance(e, ast.Range):
        return f"{expr_text(e.low)} .. {expr_text(e.high)}"
    if isinstance(e, ast.InvalidHeader):
        return "{#}"
    return type(e).__name__


def type_ref_text(t: ast.TypeRef | None) -> str:
    if t is None:
        return ""
    if isinstance(t, ast.BaseTypeRef):
        if t.width is not None and t.kind in ("bit", "int", "varbit"):
            return f"{t.kind}<{expr_text(t.width)}>"
        return t.kind
    if isinstance(t, ast.NamedTypeRef):
        if t.type_args:
            return f"{t.name}<" + ", ".join(type_ref_text(a) for a in t.type_args) + ">"
        return t.name
    if isinstance(t, ast.StackTypeRef):
        return f"{type_ref_text(t.elem)}[{expr_text(t.size)}]"
    if isinstance(t, ast.TupleTypeRef):
        return "tuple<" + ", ".join(type_ref_text(a) for a in t.elems) + ">"
    return "_"
