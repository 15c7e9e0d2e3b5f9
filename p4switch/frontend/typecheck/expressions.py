"""Type inference of expressions: one ``x_<Class>`` handler per expression class sets
``.type`` (and ``.decl`` of names, from the reference map); ``expr`` then lets constant
folding fold the typed node (``constfold.py``), so the types that need values have them.
"""

from __future__ import annotations

import difflib

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError
from p4switch.frontend.typecheck.constfold import MAX_WIDTH, SIZE_METHODS
from p4switch.frontend.typecheck.scopes import MatchKindMember

_CMP = {"<", ">", "<=", ">="}
_EQ = {"==", "!="}


class Expressions:
    """Typing expressions (``expr``) and reading them as constants."""

    def expr(self, e: ast.Expression, expected: T.P4Type | None = None
             ) -> ast.Expression:
        """Type-check ``e`` (``expected`` guides int literal widths and list expressions);
        returns the node to use in its place (same node unless rewritten)."""
        handler = getattr(self, "x_" + type(e).__name__, None)
        if handler is None:
            raise self.err(e, f"unexpected {type(e).__name__} in an expression")
        out = handler(e, expected)
        out = out if out is not None else e
        self.folding.fold(out)
        return out

    def const_int(self, e: ast.Expression | None, what: str) -> int:
        if e is None:
            raise CompileError(f"missing {what}")
        return self.folding.require_int(self.expr(e), what)

    def x_IntLiteral(self, e: ast.IntLiteral, expected):
        if e.width is not None:
            if e.width <= 0:
                raise self.err(e, f"invalid width {e.width} in literal {e.text}")
            t = T.BitsType(e.width, e.signed)
            if not e.signed and e.value >= (1 << e.width) or e.signed and not (
                    -(1 << (e.width - 1)) <= e.value < (1 << (e.width - 1))):
                raise self.err(e, f"value {e.text} does not fit in {t}")
            e.type = t
        else:
            e.type = T.INT

    def x_BoolLiteral(self, e, expected):
        e.type = T.BOOL

    def x_StringLiteral(self, e, expected):
        e.type = T.STRING

    def x_DontCare(self, e, expected):
        e.type = T.DONT_CARE

    def x_DefaultExpr(self, e, expected):
        e.type = T.DONT_CARE

    def x_InvalidHeader(self, e, expected):
        if not isinstance(expected, (T.HeaderType, T.HeaderUnionType)):
            raise self.err(e, "{#} needs a header or header_union type from its context")
        e.type = expected

    def x_NameRef(self, e: ast.NameRef, expected):
        d = self.refs.decl(e)
        e.decl = d
        if isinstance(d, ast.ConstDecl):
            e.type = d.type
        elif isinstance(d, MatchKindMember):
            e.type = self.match_kind_type
        elif isinstance(d, (ast.VarDecl, ast.Parameter, ast.InstanceDecl, ast.TableDecl,
                            ast.ActionDecl, ast.ValueSetDecl)):
            e.type = d.type
        elif isinstance(d, (ast.ExternFunctionDecl, ast.FunctionDecl)):
            e.type = d.type
        elif isinstance(d, ast.ParserState):
            e.type = T.STATE
        else:
            raise self.err(e, f"'{e.name}' is a type, not a value")

    def x_TypeExpression(self, e: ast.TypeExpression, expected):
        e.type = self.resolve_type(e.type_ref)

    def x_Member(self, e: ast.Member, expected):
        if isinstance(e.expr, ast.TypeExpression):
            t = self.resolve_type(e.expr.type_ref)
            e.expr.type = t
            if isinstance(t, T.ErrorType):
                if e.name not in t.members:
                    raise self.err(e.name_loc or e, f"error.{e.name} is not declared")
                e.kind = "error"
                e.decl = e.name
                e.type = t
                return
            if isinstance(t, T.EnumType):
                if e.name not in t.members:
                    raise self.err(e.name_loc or e, f"'{e.name}' is not a member of enum {t.name}")
                e.kind = "enum"
                e.decl = next(m for m in t.decl.members if m.name == e.name)
                e.type = t
                return
            if isinstance(t, T.SerEnumType):
                if e.name not in t.members:
                    raise self.err(e.name_loc or e, f"'{e.name}' is not a member of enum {t.name}")
                e.kind = "enum"
                e.decl = next(m for m in t.decl.members if m.name == e.name)
                e.type = t
                return
            e.kind = "method"
            e.type = t
            return
        e.expr = self.expr(e.expr)
        t = e.expr.type
        if isinstance(t, T.NewType):
            t = t.underlying if isinstance(t.underlying, T.StructLikeType) else t
        if isinstance(t, T.StructLikeType):
            ft = t.field_type(e.name)
            if ft is not None:
                e.kind = "field"
                e.type = ft
                return
            if isinstance(t, (T.HeaderType, T.HeaderUnionType)) and e.name in (
                    "isValid", "setValid", "setInvalid", *SIZE_METHODS):
                e.kind = "method"
                return
            close = difflib.get_close_matches(e.name, t.field_names(), n=1, cutoff=0.75)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise self.err(e.name_loc or e, f"{t} has no field '{e.name}'{hint}")
        if isinstance(t, T.StackType):
            if e.name in ("next", "last"):
                if not self.in_parser:
                    raise self.err(e, f"'{e.name}' of a header stack is only allowed in parsers")
                e.kind = "stack"
                e.type = t.elem
                return
            if e.name in ("lastIndex", "size"):
                if e.name == "lastIndex" and not self.in_parser:
                    raise self.err(e, "'lastIndex' of a header stack is only allowed in parsers")
                e.kind = "stack"
                if e.name == "size":
                    e.type = T.BitsType(32)
                else:
                    e.type = T.BitsType(32)
                return
            if e.name in ("push_front", "pop_front"):
                e.kind = "method"
                return
            raise self.err(e, f"header stack has no member '{e.name}'")
        if isinstance(t, T.TableApplyResultType):
            ft = t.field_type(e.name)
            if ft is None:
                raise self.err(e, f"table apply result has no member '{e.name}'")
            if e.name == "action_run" and e is not self.switch_subject:
                raise self.err(e, "'action_run' may only be used as the expression of a switch statement")
            e.kind = "apply_result"
            e.type = ft
            return
        if isinstance(t, (T.ExternType, T.TableType, T.ControlType, T.ParserType)):
            e.kind = "method"
            return
        raise self.err(e, f"a value of type {t} has no member '{e.name}'")

    def x_ArrayIndex(self, e: ast.ArrayIndex, expected):
        e.expr = self.expr(e.expr)
        t = e.expr.type
        e.index = self.expr(e.index)
        if not isinstance(t, T.StackType):
            raise self.err(e, f"cannot index a value of type {t}")
        it = e.index.type
        if it == T.INT:
            if e.index.value < 0 or e.index.value >= t.size:
                raise self.err(e.index, f"index {e.index.value} is out of range for stack of "
                                        f"size {t.size}")
            e.index = self.coerce(e.index, T.BitsType(32), "index")
        elif not isinstance(T.underlying(it), T.BitsType):  # int<W> too, as p4c accepts
            raise self.err(e.index, f"stack index must be an integer, not {it}")
        e.type = t.elem

    def x_Slice(self, e: ast.Slice, expected):
        e.expr = self.expr(e.expr)
        hi = self.const_int(e.hi, "slice bound")
        lo = self.const_int(e.lo, "slice bound")
        t = T.underlying(e.expr.type)
        if not isinstance(t, (T.BitsType, T.IntType)):
            raise self.err(e, f"cannot slice a value of type {e.expr.type}")
        if hi < lo or lo < 0 or (isinstance(t, T.BitsType) and hi >= t.width):
            raise self.err(e, f"invalid slice [{hi}:{lo}] of {e.expr.type}")
        e.hi_value, e.lo_value = hi, lo
        rt = T.BitsType(hi - lo + 1)
        e.type = rt

    def x_Unary(self, e: ast.Unary, expected):
        e.expr = self.expr(e.expr, expected if e.op != "!" else T.BOOL)
        t = e.expr.type
        if e.op == "!":
            if t != T.BOOL:
                raise self.err(e, f"'!' needs a bool operand, not {t}")
            e.type = T.BOOL
            return
        if e.op == "~":
            if t == T.INT and expected is not None and isinstance(expected, T.BitsType):
                e.expr = self.coerce(e.expr, expected, "operand of '~'")
                t = expected
            if not isinstance(t, T.BitsType):
                if t == T.INT:
                    raise self.err(e, "'~' needs an operand of known width; cast the constant")
                raise self.err(e, f"'~' needs a bit<> or int<> operand, not {t}")
            e.type = t
            return
        if not (isinstance(t, T.BitsType) or t == T.INT):
            raise self.err(e, f"unary '{e.op}' needs a numeric operand, not {t}")
        e.type = t

    def x_Binary(self, e: ast.Binary, expected):
        op = e.op
        if op in ("&&", "||"):
            e.left = self.expr(e.left, T.BOOL)
            e.right = self.expr(e.right, T.BOOL)
            for side in (e.left, e.right):
                if side.type != T.BOOL:
                    raise self.err(side, f"'{op}' needs bool operands, not {side.type}")
            e.type = T.BOOL
            return
        if op in ("<<", ">>"):
            e.left = self.expr(e.left, expected)
            e.right = self.expr(e.right)
            lt, rt = e.left.type, e.right.type
            if not (rt == T.INT or isinstance(rt, T.BitsType) and not rt.signed):
                raise self.err(e.right, f"shift amount must be an unsigned integer, not {rt}")
            if rt == T.INT and e.right.value < 0:
                raise self.err(e.right, "shift amount must not be negative")
            if lt == T.INT and not e.right.is_const:  # as p4c: the context does not say
                raise self.err(e.left, "the width of a shifted constant must be known when "
                                       "the shift amount is not constant; cast it")
            if not (isinstance(lt, T.BitsType) or lt == T.INT):
                raise self.err(e.left, f"cannot shift a value of type {lt}")
            if rt == T.INT:
                e.right = self.coerce(e.right, T.BitsType(max(e.right.value.bit_length(), 1)),
                                      "shift amount") if lt != T.INT else e.right
            if op == "<<":
                if lt == T.INT and e.left.is_const and e.right.is_const and \
                        abs(e.left.value).bit_length() + e.right.value > MAX_WIDTH:
                    raise self.err(e, f"the result of this shift is wider than the {MAX_WIDTH} "
                                      f"bits this implementation supports")
            e.type = lt
            return
        if op == "++":
            e.left = self.expr(e.left)
            e.right = self.expr(e.right)
            lt, rt = T.underlying(e.left.type), T.underlying(e.right.type)
            for side, st in ((e.left, lt), (e.right, rt)):
                if not isinstance(st, T.BitsType):
                    raise self.err(side, f"'++' needs operands of known width (bit<> or int<>), "
                                         f"not {side.type}")
            e.type = T.BitsType(lt.width + rt.width, lt.signed)
            return
        # arithmetic, bitwise, comparisons: operands of one type, int constants adapt
        e.left = self.expr(e.left, expected if op not in _CMP | _EQ else None)
        e.right = self.expr(e.right, e.left.type if e.left.type != T.INT else expected
                            if op not in _CMP | _EQ else None)
        # a serializable enum mixed with its underlying type (or an int) acts as that type
        for side in ("left", "right"):
            mine, other = getattr(e, side), getattr(e, "right" if side == "left" else "left")
            if isinstance(mine.type, T.SerEnumType) and other.type != mine.type and (
                    other.type == T.INT or other.type == mine.type.underlying):
                setattr(e, side, self.coerce(mine, mine.type.underlying, f"operand of '{op}'"))
        if op in ("/", "%"):  # p4c: not defined on negative numbers (int constants)
            for side in (e.left, e.right):
                if side.type == T.INT and side.is_const and side.value < 0:
                    raise self.err(e, f"'{op}' is not defined on negative numbers")
        lt, rt = e.left.type, e.right.type
        if lt == T.INT and rt != T.INT:
            e.left = self.coerce(e.left, rt, f"operand of '{op}'")
        elif rt == T.INT and lt != T.INT:
            e.right = self.coerce(e.right, lt, f"operand of '{op}'")
        elif isinstance(e.left, (ast.ListExpression, ast.StructExpression, ast.InvalidHeader)) \
                and op in _EQ:
            e.left = self.coerce(e.left, rt, f"operand of '{op}'")
        elif isinstance(e.right, (ast.ListExpression, ast.StructExpression, ast.InvalidHeader)) \
                and op in _EQ:
            e.right = self.coerce(e.right, lt, f"operand of '{op}'")
        lt, rt = e.left.type, e.right.type
        if lt != rt:
            if isinstance(lt, T.BitsType) and isinstance(rt, T.BitsType):
                raise self.err(e, f"'{op}': operands have different types {lt} and {rt}; "
                                  f"insert a cast")
            raise self.err(e, f"'{op}': operands have different types {lt} and {rt}")
        t = lt
        if op in _EQ:
            if not _comparable(t):
                raise self.err(e, f"'{op}': values of type {t} cannot be compared")
            e.type = T.BOOL
            return
        num = T.underlying(t)
        if not (isinstance(num, T.BitsType) or num == T.INT):
            raise self.err(e, f"'{op}' is not defined for values of type {t}")
        if op in _CMP:
            e.type = T.BOOL
            return
        if op in ("/", "%") and e.right.is_const and e.right.value == 0:
            raise self.err(e.right, "division by zero")
        if isinstance(num, T.BitsType) and num.signed and op in ("/", "%"):
            raise self.err(e, f"'{op}' is not defined for signed values")
        e.type = t

    def x_Ternary(self, e: ast.Ternary, expected):
        e.cond = self.expr(e.cond, T.BOOL)
        if e.cond.type != T.BOOL:
            raise self.err(e.cond, f"condition must be bool, not {e.cond.type}")
        e.then = self.expr(e.then, expected)
        e.else_ = self.expr(e.else_, expected if e.then.type == T.INT else e.then.type)
        tt, et = e.then.type, e.else_.type
        if tt == T.INT and et != T.INT:
            e.then = self.coerce(e.then, et, "'?:' branch")
        elif et == T.INT and tt != T.INT:
            e.else_ = self.coerce(e.else_, tt, "'?:' branch")
        elif tt == T.INT and et == T.INT and not e.cond.is_const:
            if expected is not None and isinstance(T.underlying(expected), T.BitsType):
                e.then = self.coerce(e.then, expected, "'?:' branch")
                e.else_ = self.coerce(e.else_, expected, "'?:' branch")
            else:
                raise self.err(e, "'?:' with integer constants in both branches needs a width; "
                                  "cast one branch")
        if e.then.type != e.else_.type:
            raise self.err(e, f"'?:' branches have different types {e.then.type} and "
                              f"{e.else_.type}")
        e.type = e.then.type

    def x_Cast(self, e: ast.Cast, expected):
        if e.implicit:
            return
        t = self.resolve_type(e.type_ref)
        e.expr = self.expr(e.expr, t)
        src = e.expr.type
        e.type = t
        if src == t:
            return
        if isinstance(e.expr, (ast.ListExpression, ast.StructExpression)):
            e.expr = self.coerce(e.expr, t, "cast")
            return
        if not _castable(src, t):
            raise self.err(e, f"cannot cast a value of type {src} to {t}")

    def x_ListExpression(self, e: ast.ListExpression, expected):
        if isinstance(expected, T.ListType):
            e.items = [self.coerce(self.expr(i, expected.elem), expected.elem,
                                   "list element") for i in e.items]
            e.type = expected
            return
        if isinstance(expected, (T.StructLikeType, T.TupleType)):
            types = list(expected.elems) if isinstance(expected, T.TupleType) else [
                f.type for f in expected.fields]
            dots = bool(e.items) and isinstance(e.items[-1], ast.Dots)
            if len(types) == len(e.items) or dots:
                e.items = [i if isinstance(i, ast.Dots) else self.expr(i, ft)
                           for i, ft in zip(e.items, types + [T.DONT_CARE])]
                return self._retype_list(e, expected, "list expression")
        e.items = [self.expr(i) for i in e.items]
        e.type = T.TupleType(tuple(i.type for i in e.items))

    def x_StructExpression(self, e: ast.StructExpression, expected):
        target = expected
        if e.type_ref is not None:
            target = self.resolve_type(e.type_ref)
        if isinstance(target, (T.StructType, T.HeaderType)):
            for f in e.fields:
                f.value = self.expr(f.value, target.field_type(f.name))
            return self._retype_struct(e, target, "struct initializer")
        if e.has_dots:
            raise self.err(e, "'...' needs the struct type from the context")
        for f in e.fields:
            f.value = self.expr(f.value)
        e.type = T.StructType(None, [T.Field(f.name, f.value.type) for f in e.fields])  # type: ignore[arg-type]

    def x_Mask(self, e, expected):
        raise self.err(e, "'&&&' is only allowed in select cases and table entries")

    def x_Range(self, e, expected):
        raise self.err(e, "'..' is only allowed in select cases and table entries")

    def x_Dots(self, e, expected):
        raise self.err(e, "'...' is only allowed at the end of a typed list or struct "
                          "initializer")

    def x_SelectExpression(self, e, expected):
        raise self.err(e, "select is only allowed in a transition")


def _comparable(t: T.P4Type) -> bool:
    """Whether ``==``/``!=`` are defined on values of type ``t``: data, not externs, tables,
    their apply results, blocks, functions or unbound type variables (as p4c)."""
    return not isinstance(t, (T.VoidType, T.ExternType, T.TableType, T.TableApplyResultType,
                              T.BlockType, T.SpecializedType, T.FunctionType, T.ActionType,
                              T.TypeVar, T.StateType, T.SetType))


def _castable(src: T.P4Type, t: T.P4Type) -> bool:
    """Whether P4 allows the explicit cast ``(t) x`` of an ``x`` of type ``src``."""
    sb, tb = T.underlying(src), T.underlying(t)
    if isinstance(tb, T.BitsType):
        return isinstance(sb, T.BitsType) or sb == T.INT or (
            sb == T.BOOL and tb.width == 1 and not tb.signed)
    if t == T.BOOL:
        return isinstance(sb, T.BitsType) and sb.width == 1 and not sb.signed or sb == T.INT
    if isinstance(t, T.NewType) and src == t.underlying:
        return True
    return t == T.INT and isinstance(sb, T.BitsType)
