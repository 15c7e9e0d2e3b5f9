"""Implicit conversions: where P4 lets a value of one type stand for another (int literals
to bit<>, serializable enums to their underlying type, lists and struct expressions to
structs, headers and tuples, ``{#}`` to a header), as explicit ``Cast`` nodes.
"""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend import types as T


class Coercion:
    """Making an expression have the type its context needs."""

    def coerce(self, e: ast.Expression, target: T.P4Type | None, what: str) -> ast.Expression:
        """Make ``e`` have type ``target``, inserting an implicit Cast where P4 allows one."""
        if target is None or isinstance(target, (T.DontCareType, T.TypeVar)):
            return e
        t = e.type
        if t == target or isinstance(t, T.DontCareType):
            return e
        if isinstance(e, ast.ListExpression) and isinstance(target, (T.StructLikeType,
                                                                     T.TupleType)):
            return self._retype_list(e, target, what)
        if isinstance(e, ast.StructExpression) and isinstance(target, (T.StructType,
                                                                       T.HeaderType)):
            return self._retype_struct(e, target, what)
        if isinstance(e, ast.InvalidHeader) and isinstance(target, (T.HeaderType,
                                                                    T.HeaderUnionType)):
            e.type = target
            return e
        if t == T.INT:
            base = T.underlying(target)
            if isinstance(base, T.BitsType) and not isinstance(target, T.SerEnumType):
                if e.is_const and base.fit(e.value) != e.value:
                    self.warn(e, f"{what}: value {e.value} does not fit in {target}; it becomes "
                                 f"{base.fit(e.value)}")
                if isinstance(e, ast.IntLiteral) and target == base:
                    e.type = target
                    self.folding.fold(e)
                    return e
                return self._implicit_cast(e, target)
        if isinstance(t, T.SerEnumType) and target == t.underlying:
            return self._implicit_cast(e, target)
        raise self.err(e, f"{what}: cannot use a value of type {t} where {target} is expected")

    def _implicit_cast(self, e: ast.Expression, target: T.P4Type) -> ast.Cast:
        c = ast.Cast(type_ref=None, expr=e, implicit=True, loc=e.loc)
        c.type = target
        self.folding.fold(c)
        return c

    def _default_value(self, t: T.P4Type, where: ast.Node) -> ast.Expression:
        """The default value of a type, for fields left to ``...``."""
        base = T.underlying(t)
        if isinstance(base, T.BitsType):
            v: ast.Expression = ast.IntLiteral(0, text="0", loc=where.loc)
            v.type = base
            self.folding.fold(v)
            return v if base == t else self._implicit_cast(v, t)
        if base == T.BOOL:
            v = ast.BoolLiteral(False, loc=where.loc)
            v.type = T.BOOL
            self.folding.fold(v)
            return v
        if isinstance(t, (T.HeaderType, T.HeaderUnionType)):
            v = ast.InvalidHeader(loc=where.loc)
            v.type = t
            return v
        if isinstance(t, T.StructType):
            s = ast.StructExpression(fields=[ast.NamedExpression(f.name, self._default_value(
                f.type, where), loc=where.loc) for f in t.fields], loc=where.loc)
            s.type = t
            self.folding.fold(s)
            return s
        raise self.err(where, f"'...' cannot supply a default value of type {t}")

    def _retype_list(self, e: ast.ListExpression, target, what: str) -> ast.Expression:
        if isinstance(target, T.TupleType):
            types = list(target.elems)
        else:
            types = [f.type for f in target.fields]
        if e.items and isinstance(e.items[-1], ast.Dots):
            dots = e.items.pop()
            if len(e.items) > len(types):
                raise self.err(e, f"{what}: {target} needs {len(types)} values, got "
                                  f"{len(e.items)}")
            e.items.extend(self._default_value(t, dots) for t in types[len(e.items):])
        if len(types) != len(e.items):
            raise self.err(e, f"{what}: {target} needs {len(types)} values, got {len(e.items)}")
        e.items = [self.coerce(i, ft, what) for i, ft in zip(e.items, types)]
        e.type = target
        self.folding.fold(e)
        return e

    def _retype_struct(self, e: ast.StructExpression, target, what: str) -> ast.Expression:
        given = {f.name: f for f in e.fields}
        names = target.field_names()
        if e.has_dots:
            for f in target.fields:
                if f.name not in given:
                    nf = ast.NamedExpression(f.name, self._default_value(f.type, e), loc=e.loc)
                    e.fields.append(nf)
                    given[f.name] = nf
            e.has_dots = False
        for f in e.fields:
            if f.name not in names:
                raise self.err(f, f"{what}: {target} has no field '{f.name}'")
        for n in names:
            if n not in given:
                raise self.err(e, f"{what}: field '{n}' of {target} is not initialized")
        for f in e.fields:
            f.value = self.coerce(f.value, target.field_type(f.name), what)
        e.fields.sort(key=lambda f: names.index(f.name))
        e.type = target
        self.folding.fold(e)
        return e
