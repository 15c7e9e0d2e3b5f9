"""Name resolution, type checking and constant folding of a parsed P4-16 program.

One pass over the declarations in order (P4 requires declaration before use), annotating
the AST in place as ``ast.py`` documents: ``.type`` on expressions and declarations,
``.decl`` on names, folded ``.value``/``.is_const``, explicit ``Cast`` nodes for implicit
conversions, resolved method calls with their signatures and inferred type arguments.
The first error found raises ``CompileError`` at the offending node.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable
from typing import Any

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError, SourceLines
from p4switch.frontend.pretty import expr_text

# Built-in parser states every parser may transition to.
# widest bit<>/int<> (and widest constant a shift may make), as in p4c
MAX_WIDTH = 2048

ACCEPT = ast.ParserState("accept")
REJECT = ast.ParserState("reject")

_ARITH = {"+", "-", "*", "/", "%", "|+|", "|-|"}
_BITWISE = {"&", "|", "^"}
_CMP = {"<", ">", "<=", ">="}
_EQ = {"==", "!="}
# Which keyset forms a table entry may use per match kind (plain values always).
_FORM_NAMES = {"DontCare": "'_' (don't care)", "DefaultExpr": "'default'",
               "Mask": "a mask (&&&)", "Range": "a range (..)"}
_ENTRY_FORMS = {
    "exact": set(),
    "lpm": {"DontCare", "DefaultExpr", "Mask"},
    "ternary": {"DontCare", "DefaultExpr", "Mask"},
    "range": {"DontCare", "DefaultExpr", "Range"},
    "optional": {"DontCare", "DefaultExpr"},
}
_SIZE_METHODS = ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes")


def _fixed_width_struct(t: T.P4Type) -> bool:
    """A struct of bit<>/int<>/bool/serializable enums (or such structs): allowed as a header
    field since P4-16 1.2.2."""
    return isinstance(t, T.StructType) and all(
        isinstance(T.underlying(f.type), (T.BitsType, T.BoolType))
        or _fixed_width_struct(T.underlying(f.type)) for f in t.fields)


class _MatchKindMember(ast.Declaration):
    """A ``match_kind`` member name (``exact``, ``lpm`` ...) in scope."""


class Scope:
    def __init__(self, parent: "Scope | None" = None, owner: ast.Node | None = None) -> None:
        self.parent = parent
        self.owner = owner  # the control/parser/action/function this scope belongs to
        self.names: dict[str, list[Any]] = {}

    def lookup(self, name: str) -> list[Any] | None:
        s: Scope | None = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None


def _overloadable(d: Any) -> bool:
    return isinstance(d, (ast.ExternFunctionDecl, ast.MethodDecl, ast.FunctionDecl))


class Checker:
    def __init__(self, program: ast.Program, sources: SourceLines | None = None) -> None:
        self.program = program
        self.sources = sources
        self.error_type = T.ErrorType()
        self.match_kind_type = T.MatchKindType()
        self.top = Scope()
        self.parents: dict[ast.Node, ast.Node] = {}  # local declaration -> control/parser
        self.main: ast.InstanceDecl | None = None
        self.warnings: list[str] = []  # "file:line:col: warning: message", p4c style
        # context while checking bodies
        self.return_type: T.P4Type | None = None
        # generic struct/header declarations: declaring scope, type class, specializations
        self.generic_structs: dict[ast.StructLikeDecl, tuple[Scope, type, dict]] = {}
        self.in_parser = False
        self.loop_depth = 0  # enclosing for loops: break/continue are allowed inside one
        self.in_action: ast.ActionDecl | None = None
        self.in_function: ast.FunctionDecl | None = None
        self.switch_subject: ast.Expression | None = None

    # ------------------------------------------------------------------------------ errors
    def err(self, node: ast.Node | ast.SourceLoc, msg: str) -> CompileError:
        loc = node if isinstance(node, ast.SourceLoc) else node.loc
        return CompileError.at(loc, msg, self.sources)

    def warn(self, node: ast.Node, msg: str) -> None:
        self.warnings.append(f"{node.loc}: warning: {msg}")

    # ------------------------------------------------------------------------------ scopes
    def declare(self, scope: Scope, name: str, decl: Any, node: ast.Node | None = None) -> None:
        existing = scope.names.get(name)
        if existing:
            if _overloadable(decl) and all(_overloadable(e) for e in existing):
                existing.append(decl)
                return
            if isinstance(decl, ast.ExternDecl) and isinstance(existing[0], ast.ExternDecl) \
                    and not existing[0].methods:
                existing[0] = decl  # forward declaration completed
                return
            raise self.err(node or decl, f"'{name}' is already declared")
        scope.names[name] = [decl]

    def lookup(self, scope: Scope, ref: ast.NameRef | ast.NamedTypeRef) -> list[Any]:
        start = self.top if ref.top_level else scope
        found = start.lookup(ref.name)
        if not found:
            raise self.err(ref, f"'{ref.name}' is not declared{_suggest(ref.name, start)}")
        return found

    # ------------------------------------------------------------------------------ entry
    def check(self) -> None:
        self.program.error_type = self.error_type
        self.program.match_kind_type = self.match_kind_type
        for d in self.program.declarations:
            self.check_declaration(d, self.top)
        self.check_annotation_args()
        mains = self.top.names.get("main")
        if mains and isinstance(mains[0], ast.InstanceDecl):
            self.main = mains[0]

    def check_annotation_args(self) -> None:
        """Type annotation arguments where they are expressions over top-level names
        (``@field_list(CLONE_LIST)``, ``@priority(10)``, ``@name("x")``); arguments that are
        not (``@refers_to(table, field)``) stay untyped: annotations are metadata."""
        for node in self.program.walk():
            anns = getattr(node, "annotations", None)
            if not anns:
                continue
            for a in anns:
                for i, arg in enumerate(a.args):
                    try:
                        a.args[i] = self.expr(self._type_names_in_annotation(arg), self.top)
                    except CompileError:
                        pass
                if a.name == "name" and (len(a.args) != 1 or a.args[0].type != T.STRING):
                    raise self.err(a, "@name must contain a string")

    def _type_names_in_annotation(self, e: ast.Expression) -> ast.Expression:
        """Annotation bodies are parsed apart from the program, so ``E.member`` of an enum
        (``@field_list(FieldLists.resubmit_FL)``) arrives as a value name: make it a type."""
        if isinstance(e, ast.Member) and isinstance(e.expr, ast.NameRef):
            found = self.top.lookup(e.expr.name)
            if found and isinstance(found[0], ast.EnumDecl):
                ref = ast.NamedTypeRef(name=e.expr.name, top_level=e.expr.top_level, loc=e.expr.loc)
                e.expr = ast.TypeExpression(type_ref=ref, loc=e.expr.loc)
        return e

    def check_declaration(self, d: ast.Node, scope: Scope) -> None:
        handler: Callable | None = getattr(self, "decl_" + type(d).__name__, None)
        if handler is None:
            raise self.err(d, f"unexpected {type(d).__name__} here")
        handler(d, scope)

    # ------------------------------------------------------------------------------ types
    def resolve_type(self, tr: ast.TypeRef, scope: Scope) -> T.P4Type:
        t = self._resolve_type(tr, scope)
        tr.type = t
        return t

    def _resolve_type(self, tr: ast.TypeRef, scope: Scope) -> T.P4Type:
        if isinstance(tr, ast.BaseTypeRef):
            k = tr.kind
            if k == "bool":
                return T.BOOL
            if k == "error":
                return self.error_type
            if k == "string":
                return T.STRING
            if k == "void":
                return T.VOID
            if k == "match_kind":
                return self.match_kind_type
            if k == "int" and tr.width is None:
                return T.INT
            w = self.const_int(tr.width, scope, "type width")
            if k == "varbit":
                if w <= 0:
                    raise self.err(tr, f"invalid varbit width {w}")
                return T.VarbitType(w)
            if w <= 0 or (k == "int" and w < 1):
                raise self.err(tr, f"invalid width {w} for {k}<>")
            if w > MAX_WIDTH:
                raise self.err(tr, f"{k}<{w}>: this implementation supports widths up to {MAX_WIDTH} bits")
            return T.BitsType(w, k == "int")
        if isinstance(tr, ast.NamedTypeRef):
            decls = self.lookup(scope, tr)
            d = decls[0]
            tr.decl = d
            args = [self.resolve_type(a, scope) for a in tr.type_args]
            if isinstance(d, ast.TypeParam):
                return d.type
            if isinstance(d, ast.StructLikeDecl) and d.type_params:
                return self.specialize_struct(d, args, tr)
            if isinstance(d, (ast.StructLikeDecl, ast.EnumDecl, ast.TypedefDecl)):
                if args:
                    raise self.err(tr, f"type '{tr.name}' takes no type arguments")
                return d.type
            if isinstance(d, ast.ExternDecl):
                et: T.ExternDeclType = d.type
                if args and len(args) != len(et.type_params):
                    raise self.err(tr, f"extern '{tr.name}' expects "
                                       f"{_n(len(et.type_params), 'type argument')}, got "
                                       f"{len(args)}")
                return T.ExternType(et, tuple(args) if args else tuple(et.type_params))
            if isinstance(d, (ast.ParserTypeDecl, ast.ControlTypeDecl, ast.PackageTypeDecl,
                              ast.ParserDecl, ast.ControlDecl)):
                bt: T.BlockType = d.type
                if args:
                    if len(args) != len(bt.type_params):
                        raise self.err(tr, f"'{tr.name}' expects {len(bt.type_params)} type "
                                           f"arguments, got {len(args)}")
                    return T.SpecializedType(bt, tuple(args))
                return bt
            raise self.err(tr, f"'{tr.name}' is not a type")
        if isinstance(tr, ast.StackTypeRef):
            elem = self.resolve_type(tr.elem, scope)
            if not isinstance(elem, (T.HeaderType, T.HeaderUnionType)):
                raise self.err(tr, f"header stack elements must be headers, not {elem}")
            n = self.const_int(tr.size, scope, "stack size")
            if n <= 0:
                raise self.err(tr.size, f"header stack size must be positive, not {n}")
            return T.StackType(elem, n)
        if isinstance(tr, ast.TupleTypeRef):
            return T.TupleType(tuple(self.resolve_type(e, scope) for e in tr.elems))
        if isinstance(tr, ast.ListTypeRef):
            return T.ListType(self.resolve_type(tr.elem, scope))
        if isinstance(tr, ast.DontCareTypeRef):
            return T.TypeVar("_")
        raise self.err(tr, "unsupported type")

    def declare_type_params(self, params: list[ast.TypeParam], scope: Scope) -> list[T.TypeVar]:
        out = []
        for p in params:
            p.type = T.TypeVar(p.name)
            self.declare(scope, p.name, p)
            out.append(p.type)
        return out

    def make_params(self, params: list[ast.Parameter], scope: Scope,
                    declare_in: Scope | None = None) -> list[T.Param]:
        out = []
        seen = set()
        for p in params:
            if p.name in seen:
                raise self.err(p, f"duplicate parameter '{p.name}'")
            seen.add(p.name)
            t = self.resolve_type(p.type_ref, scope)
            p.type = t
            if p.direction is not None and t in (T.STRING, T.INT):
                raise self.err(p, f"'{p.name}': a parameter of type {t} cannot have a direction")
            if p.default is not None and p.direction in ("out", "inout"):
                raise self.err(p, f"'{p.name}': {p.direction} parameters cannot have default values")
            default = None
            if p.default is not None:
                p.default = self.coerce(self.expr(p.default, scope, t), t, "default value")
                default = p.default.value
            optional = p.annotation("optional") is not None
            out.append(T.Param(p.name, p.direction, t, default, p.default is not None, optional, p))
            if declare_in is not None:
                self.declare(declare_in, p.name, p)
        return out

    # ------------------------------------------------------------------------------ declarations
    def decl_ErrorDecl(self, d: ast.ErrorDecl, scope: Scope) -> None:
        for m in d.members:
            if m in self.error_type.members:
                raise self.err(d, f"error.{m} is already declared")
            self.error_type.members.append(m)
        d.type = self.error_type

    def decl_MatchKindDecl(self, d: ast.MatchKindDecl, scope: Scope) -> None:
        for m in d.members:
            if m in self.match_kind_type.members:
                raise self.err(d, f"match_kind '{m}' is already declared")
            self.match_kind_type.members.append(m)
            mk = _MatchKindMember(m, loc=d.loc)
            mk.type = self.match_kind_type
            self.declare(scope, m, mk, d)
        d.type = self.match_kind_type

    def decl_ConstDecl(self, d: ast.ConstDecl, scope: Scope) -> None:
        t = self.resolve_type(d.type_ref, scope)
        d.type = t
        d.init = self.coerce(self.expr(d.init, scope, t), t, f"constant '{d.name}'")
        if not d.init.is_const:
            raise self.err(d.init, f"initializer of constant '{d.name}' is not a compile-time "
                                   f"constant")
        d.value = d.init.value
        self.declare(scope, d.name, d)

    def decl_TypedefDecl(self, d: ast.TypedefDecl, scope: Scope) -> None:
        t = self.resolve_type(d.type_ref, scope)
        d.type = T.NewType(d.name, t, d) if d.new_type else t
        self.declare(scope, d.name, d)

    def _struct_like(self, d: ast.StructLikeDecl, scope: Scope, cls: type) -> None:
        if d.type_params:
            # generic: checked per specialization (``H<bit<8>>``), in the declaring scope
            self.generic_structs[d] = (scope, cls, {})
            self.declare(scope, d.name, d)
            return
        t = cls(d.name, [], d)
        d.type = t
        self._struct_fields(d, t, scope, cls)
        self.declare(scope, d.name, d)

    def specialize_struct(self, d: ast.StructLikeDecl, args: list[T.P4Type],
                          tr: ast.TypeRef) -> T.P4Type:
        """The struct/header type ``d<args>``, made once per distinct argument list and named
        the way p4c names specializations (``H_0``, ``H_1``, ...)."""
        if len(args) != len(d.type_params):
            raise self.err(tr, f"'{d.name}' expects {_n(len(d.type_params), 'type argument')}, "
                               f"got {len(args)}")
        for a in args:
            if isinstance(a, T.TypeVar) and a.name == "_":
                raise self.err(tr, f"'_' cannot be a type argument of '{d.name}'")
        scope, cls, made = self.generic_structs[d]
        key = tuple(args)
        if key not in made:
            t = made[key] = cls(f"{d.name}_{len(made)}", [], d)
            inner = Scope(scope, scope.owner)
            for tp, a in zip(d.type_params, args):
                alias = ast.TypedefDecl(tp.name, None, loc=tp.loc)
                alias.type = a
                self.declare(inner, tp.name, alias)
            self._struct_fields(d, t, inner, cls)
        return made[key]

    def _struct_fields(self, d: ast.StructLikeDecl, t: T.StructLikeType, scope: Scope,
                       cls: type) -> None:
        seen = set()
        for f in d.fields:
            if f.name in seen:
                raise self.err(f, f"duplicate field '{f.name}' in {d.name}")
            seen.add(f.name)
            ft = self.resolve_type(f.type_ref, scope)
            if cls is T.HeaderType:
                base = T.underlying(ft)
                if not (isinstance(base, (T.BitsType, T.VarbitType, T.BoolType))
                        or _fixed_width_struct(base)):
                    raise self.err(f, f"header field '{f.name}' must be bit<>, int<>, varbit<>, "
                                      f"bool or a serializable enum, not {ft}")
            elif cls is T.HeaderUnionType and not isinstance(ft, T.HeaderType):
                raise self.err(f, f"header_union field '{f.name}' must be a header, not {ft}")
            elif ft in (T.STRING, T.INT):  # compile-time-only types (p4c: type-error)
                raise self.err(f, f"field '{f.name}' of {d.name} cannot have type {ft}")
            t.fields.append(T.Field(f.name, ft, f.annotations))
        if cls is T.HeaderType and sum(isinstance(f.type, T.VarbitType) for f in t.fields) > 1:
            raise self.err(d, f"header {d.name} has more than one varbit field")

    def decl_HeaderDecl(self, d, scope):
        self._struct_like(d, scope, T.HeaderType)

    def decl_StructDecl(self, d, scope):
        self._struct_like(d, scope, T.StructType)

    def decl_HeaderUnionDecl(self, d, scope):
        self._struct_like(d, scope, T.HeaderUnionType)

    def decl_EnumDecl(self, d: ast.EnumDecl, scope: Scope) -> None:
        names = set()
        for m in d.members:
            if m.name in names:
                raise self.err(m, f"duplicate enum member '{m.name}'")
            names.add(m.name)
        if d.underlying is None:
            d.type = T.EnumType(d.name, [m.name for m in d.members], d)
            for m in d.members:
                m.value = m.name
        else:
            u = self.resolve_type(d.underlying, scope)
            if not isinstance(u, T.BitsType):
                raise self.err(d.underlying, f"enum underlying type must be bit<> or int<>, not {u}")
            st = T.SerEnumType(d.name, u, {}, d)
            for m in d.members:
                if m.init is None:
                    raise self.err(m, f"serializable enum member '{m.name}' needs a value")
                m.init = self.coerce(self.expr(m.init, scope, u), u, f"enum member {m.name}")
                if not m.init.is_const:
                    raise self.err(m.init, "enum member value must be a compile-time constant")
                m.value = m.init.value
                st.members[m.name] = m.value
            d.type = st
        self.declare(scope, d.name, d)

    def _function_type(self, name: str, ret: ast.TypeRef | None, tparams: list[ast.TypeParam],
                       params: list[ast.Parameter], scope: Scope, decl: ast.Node,
                       body_scope: Scope | None = None) -> T.FunctionType:
        inner = body_scope or Scope(scope, decl)
        tvs = self.declare_type_params(tparams, inner)
        ps = self.make_params(params, inner, body_scope)
        rt = self.resolve_type(ret, inner) if ret is not None else T.VOID
        return T.FunctionType(name, tvs, ps, rt, decl)

    def decl_ExternDecl(self, d: ast.ExternDecl, scope: Scope) -> None:
        inner = Scope(scope, d)
        tvs = self.declare_type_params(d.type_params, inner)
        et = T.ExternDeclType(d.name, tvs, [], {}, d)
        d.type = et
        self.declare(scope, d.name, d)  # before methods: constructors name the type
        for m in d.methods:
            ft = self._function_type(m.name, m.return_type, m.type_params, m.params, inner, m)
            m.type = ft
            if m.is_constructor:
                if m.name != d.name:
                    raise self.err(m, f"constructor name '{m.name}' does not match extern "
                                      f"'{d.name}'")
                et.constructors.append(ft)
            else:
                et.methods.setdefault(m.name, []).append(ft)

    def decl_ExternFunctionDecl(self, d: ast.ExternFunctionDecl, scope: Scope) -> None:
        d.type = self._function_type(d.name, d.return_type, d.type_params, d.params, scope, d)
        self.declare(scope, d.name, d)

    def decl_FunctionDecl(self, d: ast.FunctionDecl, scope: Scope) -> None:
        body_scope = Scope(scope, d)
        d.type = self._function_type(d.name, d.return_type, d.type_params, d.params, scope, d,
                                     body_scope)
        saved = (self.return_type, self.in_function)
        self.return_type, self.in_function = d.type.return_type, d
        self.check_block(d.body, body_scope)  # before declaring it: P4 has no recursion
        self.return_type, self.in_function = saved
        self.declare(scope, d.name, d)

    def decl_ActionDecl(self, d: ast.ActionDecl, scope: Scope) -> None:
        body_scope = Scope(scope, d)
        params = self.make_params(d.params, body_scope, body_scope)
        seen_dirless = False
        for p in params:
            if p.direction is None and p.type == T.INT:  # no width for the control plane
                raise self.err(p.decl, f"'{p.name}': action parameters cannot have type int")
            if p.direction is None:
                seen_dirless = True
            elif seen_dirless:
                raise self.err(p.decl, "action parameters with a direction must come before "
                                       "directionless (control-plane) parameters")
        d.type = T.ActionType(d.name, params, d)
        self.declare(scope, d.name, d)
        if scope.owner is not None:
            self.parents[d] = scope.owner
        saved = (self.return_type, self.in_action)
        self.return_type, self.in_action = T.VOID, d
        self.check_block(d.body, body_scope)
        self.return_type, self.in_action = saved

    def _block_type(self, cls, d, scope: Scope, with_ctor: bool) -> tuple[T.BlockType, Scope]:
        inner = Scope(scope, d)
        tvs = self.declare_type_params(d.type_params, inner)
        params = self.make_params(d.params, inner, inner)
        ctor = self.make_params(d.ctor_params, inner, inner) if with_ctor else []
        bt = cls(d.name, tvs, params, ctor, d, d.annotations)
        d.type = bt
        return bt, inner

    def decl_ParserTypeDecl(self, d, scope):
        self._block_type(T.ParserType, d, scope, False)
        self.declare(scope, d.name, d)

    def decl_ControlTypeDecl(self, d, scope):
        self._block_type(T.ControlType, d, scope, False)
        self.declare(scope, d.name, d)

    def decl_PackageTypeDecl(self, d: ast.PackageTypeDecl, scope: Scope) -> None:
        inner = Scope(scope, d)
        tvs = self.declare_type_params(d.type_params, inner)
        params = self.make_params(d.params, inner)
        d.type = T.PackageType(d.name, tvs, params, params, d, d.annotations)
        self.declare(scope, d.name, d)

    def decl_ParserDecl(self, d: ast.ParserDecl, scope: Scope) -> None:
        if d.type_params:
            raise self.err(d, "generic parsers are not supported")
        _, inner = self._block_type(T.ParserType, d, scope, True)
        self.declare(scope, d.name, d)
        for local in d.locals:
            self.parents[local] = d
            self.check_declaration(local, inner)
        states = Scope(inner, d)
        for s in d.states:
            if s.name in ("accept", "reject"):
                raise self.err(s, f"state '{s.name}' is built in and cannot be declared")
            self.declare(states, s.name, s)
            self.parents[s] = d
        if not any(s.name == "start" for s in d.states):
            raise self.err(d, f"parser {d.name} has no 'start' state")
        states.names.setdefault("accept", [ACCEPT])
        states.names.setdefault("reject", [REJECT])
        saved = (self.in_parser, self.return_type)
        self.in_parser, self.return_type = True, None
        for s in d.states:
            s.type = T.STATE
            body = Scope(states, d)
            for st in s.statements:
                self.stmt(st, body)
            if s.transition is not None:
                self.check_transition(s.transition, body)
        self.in_parser, self.return_type = saved

    def decl_ControlDecl(self, d: ast.ControlDecl, scope: Scope) -> None:
        if d.type_params:
            raise self.err(d, "generic controls are not supported")
        _, inner = self._block_type(T.ControlType, d, scope, True)
        self.declare(scope, d.name, d)
        saved = self.return_type
        self.return_type = None
        for local in d.locals:
            self.parents[local] = d
            self.check_declaration(local, inner)
        self.return_type = T.VOID
        self.check_block(d.body, inner)
        self.return_type = saved

    def decl_VarDecl(self, d: ast.VarDecl, scope: Scope) -> None:
        t = self.resolve_type(d.type_ref, scope)
        if isinstance(t, (T.ExternType, T.BlockType, T.SpecializedType)) or t == T.INT:
            raise self.err(d, f"cannot declare a variable of type {t}")
        d.type = t
        if d.init is not None:
            d.init = self.coerce(self.expr(d.init, scope, t), t, f"initializer of '{d.name}'")
        self.declare(scope, d.name, d)

    def decl_ValueSetDecl(self, d: ast.ValueSetDecl, scope: Scope) -> None:
        elem = self.resolve_type(d.elem_type, scope)
        self.const_int(d.size, scope, "value_set size")
        d.type = T.SetType(elem)
        self.declare(scope, d.name, d)

    def decl_InstanceDecl(self, d: ast.InstanceDecl, scope: Scope) -> None:
        t = self.resolve_type(d.type_ref, scope)
        d.type, d.ctor_args, sig, ordered = self.instantiate(t, d.type_ref, d.args, scope, d)
        d.args = [ast.Argument(a, p.name, loc=a.loc) for a, p in zip(ordered, sig.params)]
        self.check_initializer(d, scope)
        self.declare(scope, d.name, d)

    def check_initializer(self, d: ast.InstanceDecl, scope: Scope) -> None:
        """An extern instance's ``= { ... }`` block must implement exactly its abstract
        methods, with their signatures."""
        ext = d.type.extern if isinstance(d.type, T.ExternType) else None
        abstract = {m.name: m for m in (ext.decl.methods if ext is not None else [])
                    if isinstance(m, ast.MethodDecl) and m.is_abstract}
        if d.initializer and ext is None:
            raise self.err(d, "only extern instances can have an initializer block")
        inner = Scope(scope, scope.owner)
        done = set()
        for f in d.initializer:
            if not isinstance(f, ast.FunctionDecl):
                self.check_declaration(f, inner)
                continue
            m = abstract.get(f.name)
            if m is None:
                raise self.err(f, f"'{f.name}' is not an abstract method of {ext.name}")
            self.check_declaration(f, inner)
            want = [(p.direction, self.resolve_type(p.type_ref, scope)) for p in m.params]
            got = [(p.direction, p.type) for p in f.params]
            want_ret = self.resolve_type(m.return_type, scope)
            if want != got or f.type.return_type != want_ret:
                raise self.err(f, f"'{f.name}' does not match the signature of abstract method "
                                  f"{ext.name}.{f.name}")
            done.add(f.name)
        missing = sorted(set(abstract) - done)
        if missing:
            raise self.err(d, f"{d.name}: abstract method '{missing[0]}' of {ext.name} is not "
                              f"implemented")

    def decl_TableDecl(self, d: ast.TableDecl, scope: Scope) -> None:
        self.check_table(d, scope)
        self.declare(scope, d.name, d)

    # ------------------------------------------------------------------------------ instances
    def instantiate(self, t: T.P4Type, where: ast.Node, args: list[ast.Argument], scope: Scope,
                    decl: ast.Node | None
                    ) -> tuple[T.P4Type, dict, T.FunctionType, list[ast.Expression]]:
        """Check constructor arguments of an extern/parser/control/package instantiation.
        Returns the instance type, the arguments by parameter name (folded values, or the
        instance/constructor call for parser, control and extern arguments), the
        constructor signature and the argument expressions in parameter order."""
        if isinstance(t, T.ExternType):
            ctors = [c for c in t.extern.constructors if self._arity_ok(c.params, args)]
            if not ctors:
                raise self.err(where, f"extern {t.name} has no constructor taking {len(args)} "
                                      f"arguments")
            env = {tv: a for tv, a in zip(t.extern.type_params, t.type_args)
                   if not isinstance(a, T.TypeVar) or a is not tv}
            free = [tv for tv in t.extern.type_params if tv not in env]
            sig = T.substitute(ctors[0], env)
            ordered, inferred = self.check_args(sig, args, scope, where, free)
            env.update(inferred)
            inst: T.P4Type = T.ExternType(
                t.extern, tuple(env.get(tv, tv) for tv in t.extern.type_params))
        elif isinstance(t, (T.ParserType, T.ControlType)) and isinstance(
                t.decl, (ast.ParserDecl, ast.ControlDecl)):
            sig = T.FunctionType(t.name, [], t.ctor_params, t, t.decl)
            ordered, _ = self.check_args(sig, args, scope, where, [])
            inst = t
        elif isinstance(t, (T.PackageType, T.SpecializedType)):
            pkg = t if isinstance(t, T.PackageType) else t.base
            if not isinstance(pkg, T.PackageType):
                raise self.err(where, f"cannot instantiate {t}")
            env = {}
            if isinstance(t, T.SpecializedType):
                env = dict(zip(pkg.type_params, t.type_args))
            free = [tv for tv in pkg.type_params if tv not in env]
            sig = T.substitute(T.FunctionType(pkg.name, [], pkg.params, pkg, pkg.decl), env)
            ordered, inferred = self.check_args(sig, args, scope, where, free)
            env.update(inferred)
            missing = [tv.name for tv in pkg.type_params if tv not in env]
            if missing:
                raise self.err(where, f"cannot infer type arguments {', '.join(missing)} of "
                                      f"package {pkg.name}")
            inst = T.SpecializedType(pkg, tuple(env[tv] for tv in pkg.type_params))
            sig = T.substitute(sig, env)
        else:
            raise self.err(where, f"cannot instantiate type {t}")
        values = {p.name: self._ctor_value(a) for p, a in zip(sig.params, ordered)}
        return inst, values, sig, ordered

    def _ctor_value(self, e: ast.Expression) -> Any:
        if isinstance(e, ast.MethodCall) and e.kind == "constructor":
            return e
        if isinstance(e, ast.NameRef) and isinstance(e.decl, ast.InstanceDecl):
            return e.decl
        return e.value if e.is_const else e

    # ------------------------------------------------------------------------------ tables
    def check_table(self, d: ast.TableDecl, scope: Scope) -> None:
        for k in d.key:
            k.expr = self.expr(k.expr, scope)
            kt = k.expr.type
            if kt == T.INT or not isinstance(T.underlying(kt), (T.BitsType, T.BoolType)) and \
                    not isinstance(kt, (T.ErrorType, T.EnumType)):
                raise self.err(k.expr, f"table key must be bit<>, int<>, bool, error or an "
                                       f"enum, not {kt}")
            if k.match_kind not in self.match_kind_type.members:
                raise self.err(k.match_kind_loc or k, f"'{k.match_kind}' is not a match_kind")
        if not d.has_actions_property:
            raise self.err(d, f"table {d.name} has no actions property")
        names: dict[str, ast.ActionRef] = {}
        for ref in d.actions:
            self.resolve_action_ref(ref, scope, partial=True)
            if ref.decl.name in names:
                raise self.err(ref, f"action '{ref.decl.name}' appears twice in table {d.name}")
            names[ref.decl.name] = ref
        if d.default_action is not None:
            self.resolve_action_ref(d.default_action, scope, partial=False, table_actions=names)
            if ast.find_annotation(names[d.default_action.decl.name].annotations, "tableonly"):
                raise self.err(d.default_action, f"action '{d.default_action.decl.name}' is "
                                                 f"@tableonly and cannot be the default action")
        for e in d.entries:
            self.check_entry(d, e, scope, names)
            if ast.find_annotation(names[e.action.decl.name].annotations, "defaultonly"):
                raise self.err(e.action, f"action '{e.action.decl.name}' is @defaultonly and "
                                         f"cannot be used in table entries")
        res = T.TableApplyResultType(d, T.ActionEnumType(d, list(names)))
        d.type = T.TableType(d.name, d, res)
        for p in d.properties:
            self.check_table_property(d, p, scope)
        self.assign_entry_priorities(d)

    def assign_entry_priorities(self, d: ast.TableDecl) -> None:
        """Give every entry of a table with ternary/range/optional keys its matching priority
        as ``match_priority``, larger wins (P4Runtime's order), the way p4c orders them:
        ``priority =`` values as written, entries without one taking the previous value minus
        ``priority_delta`` (``largest_priority_wins = false`` flips the order); else
        ``@priority(N)`` as BMv2 reads it (smaller wins; unannotated entries count 1, 2, ...
        by position); else program order (the first entry wins)."""
        if not d.entries or all(k.match_kind in ("exact", "lpm") for k in d.key):
            return
        n = len(d.entries)

        def prop_value(name: str, default: int) -> int:
            p = d.prop(name)
            v = getattr(getattr(p, "value", None), "value", None)
            return int(v) if isinstance(v, (int, bool)) else default

        if any(e.priority is not None for e in d.entries):
            largest_wins = bool(prop_value("largest_priority_wins", 1))
            delta = prop_value("priority_delta", 1)
            if d.entries[0].priority is None:
                raise self.err(d.entries[0], "the first entry must have a priority when other "
                                             "entries of the table have one")
            step = -delta if largest_wins else delta
            current = d.entries[0].priority_value
            values = []
            for e in d.entries:
                if e.priority is not None:
                    current = e.priority_value
                values.append(current)
                current += step
            if not largest_wins:
                top = max(values)
                values = [top + 1 - v for v in values]
        elif any(e.priority_value is not None for e in d.entries):
            bmv2 = [e.priority_value if e.priority_value is not None else i + 1
                    for i, e in enumerate(d.entries)]
            top = max(bmv2)
            values = [top + 1 - v for v in bmv2]
        else:
            values = [n - i for i in range(n)]
        for e, v in zip(d.entries, values):
            e.match_priority = v

    def check_table_property(self, d: ast.TableDecl, p: ast.TableProperty, scope: Scope) -> None:
        if p.name == "size":
            p.value = self.expr(p.value, scope)
            if not p.value.is_const or not isinstance(p.value.value, int) or p.value.value < 0:
                raise self.err(p.value, "table size must be a non-negative constant")
            return
        if p.name == "support_timeout":
            p.value = self.expr(p.value, scope, T.BOOL)
            if p.value.type != T.BOOL:
                raise self.err(p.value, "support_timeout must be true or false")
            return
        p.value = self.expr(p.value, scope)
        if p.name in ("implementation", "counters", "meters"):
            want = {"implementation": ("action_profile", "action_selector"),
                    "counters": ("direct_counter", "counter"),
                    "meters": ("direct_meter", "meter")}[p.name]
            t = p.value.type
            # p4c's front end takes any extern here (other architectures have their own);
            # a v1model table extern of the wrong kind is an error
            v1 = {"action_profile", "action_selector", "direct_counter", "counter",
                  "direct_meter", "meter"}
            if not isinstance(t, T.ExternType) or (t.name in v1 and t.name not in want):
                raise self.err(p.value, f"table property '{p.name}' must be an instance of "
                                        f"{' or '.join(want)}, not {t}")

    def resolve_action_ref(self, ref: ast.ActionRef, scope: Scope, partial: bool,
                           table_actions: dict[str, ast.ActionRef] | None = None,
                           what: str = "default action") -> None:
        """An action named in a table: ``partial`` for the actions list (binds only the
        directional parameters), else default action or entry (``table_actions`` given:
        must be listed there, and may leave out directional parameters bound there)."""
        found = self.lookup(scope, ref.name)
        decl = found[0]
        if not isinstance(decl, ast.ActionDecl):
            raise self.err(ref.name, f"'{ref.name.name}' is not an action")
        ref.decl = decl
        ref.name.decl = decl
        ref.name.type = decl.type
        if table_actions is not None and decl.name not in table_actions:
            raise self.err(ref, f"{what} '{decl.name}' is not in the table's actions list")
        params: list[T.Param] = decl.type.params
        if any(a.name for a in ref.args):
            index = {p.name: i for i, p in enumerate(params)}
            for a in ref.args:
                if not a.name:
                    raise self.err(ref, "cannot mix named and positional arguments")
                if a.name not in index:
                    raise self.err(a, f"action '{decl.name}' has no parameter named '{a.name}'")
            ref.args.sort(key=lambda a: index[a.name])
        if partial:
            # the actions list binds only the data-plane (directional) parameters
            bound = [p for p in params if p.direction is not None]
            if ref.args and len(ref.args) != len(bound):
                raise self.err(ref, f"action '{decl.name}' in an actions list takes "
                                    f"{_n(len(bound), 'argument')}, got {len(ref.args)}")
            for a, p in zip(ref.args, bound):
                a.name = p.name
                self.check_arg(a, p, scope)
            return
        if len(ref.args) != len(params):
            cp = [p for p in params if p.direction is None]
            if table_actions is not None and len(ref.args) == len(cp):
                params = cp  # directional ones bound in the actions list
            else:
                raise self.err(ref, f"action '{decl.name}' takes "
                                    f"{_n(len(params), 'argument')}, got {len(ref.args)}")
        for a, p in zip(ref.args, params):
            if a.name is not None and a.name != p.name:
                raise self.err(a, f"argument '{a.name}' of action '{decl.name}' is missing or "
                                  f"misplaced (expected '{p.name}')")
            a.name = p.name
            self.check_arg(a, p, scope)
            if p.direction is None and not a.value.is_const:
                raise self.err(a.value, f"argument for control-plane parameter '{p.name}' must "
                                        f"be a compile-time constant")
            listed = table_actions[decl.name].args if table_actions is not None else []
            if p.direction is not None and listed:
                bound = next((b for b in listed if b.name == p.name), None)
                if bound is not None and expr_text(bound.value) != expr_text(a.value):
                    raise self.err(a.value, f"argument '{p.name}' of {what} '{decl.name}' must be "
                                            f"'{expr_text(bound.value)}' as bound in the actions "
                                            f"list")

    def check_entry(self, d: ast.TableDecl, e: ast.TableEntry, scope: Scope,
                    names: dict[str, ast.ActionRef]) -> None:
        if len(e.keys) != len(d.key):
            raise self.err(e, f"entry has {len(e.keys)} key values but table {d.name} has "
                              f"{len(d.key)} key fields")
        for i, (k, ke) in enumerate(zip(e.keys, d.key)):
            e.keys[i] = self.keyset_element(k, ke.expr.type, scope)
            allowed = _ENTRY_FORMS.get(ke.match_kind)
            form = type(e.keys[i]).__name__
            if allowed is not None and form in _FORM_NAMES and form not in allowed:
                raise self.err(e.keys[i], f"{_FORM_NAMES[form]} is not allowed for "
                                          f"{ke.match_kind} key field "
                                          f"'{expr_text(ke.expr)}'")
        self.resolve_action_ref(e.action, scope, partial=False, table_actions=names,
                                what="entry action")
        if e.priority is not None:
            if d.entries_const:  # as p4c's EntryPriorities pass
                raise self.err(e.priority, "a table with 'const' entries cannot have priorities "
                                           "(use 'entries', or @priority as BMv2 reads it)")
            e.priority = self.expr(e.priority, scope)
            if not e.priority.is_const or not isinstance(e.priority.value, int):
                raise self.err(e.priority, "entry priority must be an integer constant")
            e.priority_value = e.priority.value
        else:
            ann = e.annotations and ast.find_annotation(e.annotations, "priority")
            if ann and ann.args:
                v = self.expr(ann.args[0], scope)
                e.priority_value = v.value if v.is_const else None

    def keyset_element(self, k: ast.Expression, t: T.P4Type, scope: Scope) -> ast.Expression:
        if isinstance(t, T.SerEnumType):
            # p4c also takes values of the enum's underlying type for a serializable-enum
            # key (``(bit<16>)E.A &&& 0xff00``): the key converts implicitly
            try:
                return self._keyset_element(copy.deepcopy(k), t, scope)
            except CompileError:
                return self._keyset_element(k, t.underlying, scope)
        return self._keyset_element(k, t, scope)

    def _keyset_element(self, k: ast.Expression, t: T.P4Type, scope: Scope) -> ast.Expression:
        if isinstance(k, (ast.DontCare, ast.DefaultExpr)):
            k.type = T.DONT_CARE
            return k
        if isinstance(k, ast.Mask):
            k.value_expr = self.coerce(self.expr(k.value_expr, scope, t), t, "keyset value")
            k.mask = self.coerce(self.expr(k.mask, scope, t), t, "keyset mask")
            k.type = T.SetType(t)
            k.is_const = k.value_expr.is_const and k.mask.is_const
            return k
        if isinstance(k, ast.Range):
            k.low = self.coerce(self.expr(k.low, scope, t), t, "range low bound")
            k.high = self.coerce(self.expr(k.high, scope, t), t, "range high bound")
            k.type = T.SetType(t)
            k.is_const = k.low.is_const and k.high.is_const
            return k
        k = self.expr(k, scope, t)
        if isinstance(k.type, T.SetType):  # value_set
            return k
        return self.coerce(k, t, "keyset value")

    # ------------------------------------------------------------------------------ parser
    def check_transition(self, tr: ast.TransitionStatement, scope: Scope) -> None:
        target = tr.target
        if isinstance(target, ast.NameRef):
            self.resolve_state(target, scope)
            return
        sel: ast.SelectExpression = target
        sel.exprs = [self.expr(e, scope) for e in sel.exprs]
        types = [e.type for e in sel.exprs]
        for e in sel.exprs:
            if not (isinstance(T.underlying(e.type), (T.BitsType, T.BoolType)) or
                    isinstance(e.type, (T.EnumType, T.ErrorType))):
                raise self.err(e, f"cannot select on a value of type {e.type}")
        for c in sel.cases:
            ks = c.keyset
            if not types:  # `select () { default: s; }`: only default/_ can match nothing
                if not isinstance(ks, (ast.DefaultExpr, ast.DontCare)):
                    raise self.err(ks, "a select without expressions only has 'default' or '_' cases")
                ks.type = T.DONT_CARE
            elif len(types) > 1 or (isinstance(ks, ast.ListExpression) and len(ks.items) > 1):
                if isinstance(ks, (ast.DefaultExpr, ast.DontCare)):
                    ks.type = T.DONT_CARE
                elif isinstance(ks, ast.NameRef) and isinstance(
                        (scope.lookup(ks.name) or [None])[0], ast.ValueSetDecl):
                    c.keyset = self.expr(ks, scope)  # a value_set of tuples
                elif not isinstance(ks, ast.ListExpression) or len(ks.items) != len(types):
                    raise self.err(ks, f"select case needs {len(types)} keyset values")
                else:
                    ks.items = [self.keyset_element(k, t, scope) for k, t in zip(ks.items, types)]
                    ks.type = T.TupleType(tuple(types))
            else:
                if isinstance(ks, ast.ListExpression) and len(ks.items) == 1:
                    ks = ks.items[0]
                c.keyset = self.keyset_element(ks, types[0], scope)
            self.resolve_state(c.state, scope)
        sel.type = T.STATE

    def resolve_state(self, ref: ast.NameRef, scope: Scope) -> None:
        found = scope.lookup(ref.name)
        if not found or not isinstance(found[0], ast.ParserState):
            raise self.err(ref, f"'{ref.name}' is not a parser state")
        ref.decl = found[0]
        ref.type = T.STATE

    # ------------------------------------------------------------------------------ statements
    def check_block(self, b: ast.BlockStatement, scope: Scope) -> None:
        inner = Scope(scope, scope.owner)
        for s in b.statements:
            self.stmt(s, inner)

    def stmt(self, s: ast.Node, scope: Scope) -> None:
        if isinstance(s, ast.AssignmentStatement):
            s.lhs = self.expr(s.lhs, scope)
            self.require_lvalue(s.lhs, "assign to")
            s.rhs = self.coerce(self.expr(s.rhs, scope, s.lhs.type), s.lhs.type, "assignment")
        elif isinstance(s, ast.MethodCallStatement):
            s.call = self.expr(s.call, scope)
            if not isinstance(s.call, ast.MethodCall):
                raise self.err(s, "expression is not a call")
        elif isinstance(s, ast.BlockStatement):
            self.check_block(s, scope)
        elif isinstance(s, ast.IfStatement):
            s.cond = self.expr(s.cond, scope, T.BOOL)
            if s.cond.type != T.BOOL:
                raise self.err(s.cond, f"if condition must be bool, not {s.cond.type}")
            self.stmt_in_block(s.then, scope)
            if s.else_ is not None:
                self.stmt_in_block(s.else_, scope)
        elif isinstance(s, ast.SwitchStatement):
            self.check_switch(s, scope)
        elif isinstance(s, ast.ReturnStatement):
            if self.return_type is None:
                raise self.err(s, "return is not allowed here")
            if s.value is not None:
                if self.return_type == T.VOID:
                    raise self.err(s.value, "return with a value in a void context")
                s.value = self.coerce(self.expr(s.value, scope, self.return_type),
                                      self.return_type, "return value")
            elif self.return_type != T.VOID:
                raise self.err(s, f"return needs a value of type {self.return_type}")
        elif isinstance(s, ast.ExitStatement):
            if self.in_parser:
                raise self.err(s, "exit is not allowed in a parser")
        elif isinstance(s, ast.EmptyStatement):
            pass
        elif isinstance(s, ast.ForStatement):
            self.check_for(s, scope)
        elif isinstance(s, ast.ForInStatement):
            self.check_for_in(s, scope)
        elif isinstance(s, (ast.BreakStatement, ast.ContinueStatement)):
            if not self.loop_depth:
                word = "break" if isinstance(s, ast.BreakStatement) else "continue"
                raise self.err(s, f"{word} outside of a for loop")
        elif isinstance(s, (ast.VarDecl, ast.ConstDecl, ast.InstanceDecl)):
            self.check_declaration(s, scope)
        elif isinstance(s, ast.TransitionStatement):
            self.check_transition(s, scope)
        else:
            raise self.err(s, f"unexpected {type(s).__name__} here")

    def check_for(self, s: ast.ForStatement, scope: Scope) -> None:
        if self.in_parser:
            raise self.err(s, "for loops are not allowed in a parser")
        inner = Scope(scope, scope.owner)
        for init in s.init:
            self.stmt(init, inner)
        if s.cond is not None:
            s.cond = self.expr(s.cond, inner, T.BOOL)
            if s.cond.type != T.BOOL:
                raise self.err(s.cond, f"for condition must be bool, not {s.cond.type}")
        for upd in s.updates:
            self.stmt(upd, inner)
        self.loop_body(s.body, inner)

    def check_for_in(self, s: ast.ForInStatement, scope: Scope) -> None:
        if self.in_parser:
            raise self.err(s, "for loops are not allowed in a parser")
        inner = Scope(scope, scope.owner)
        self.check_declaration(s.var, inner)
        t = s.var.type
        if s.hi is not None:
            s.lo = self.coerce(self.expr(s.lo, scope, t), t, "range start")
            s.hi = self.coerce(self.expr(s.hi, scope, t), t, "range end")
        else:
            s.lo = self.expr(s.lo, scope)
            ct = T.underlying(s.lo.type)
            if isinstance(ct, T.StackType):
                if T.underlying(ct.elem) != T.underlying(t):
                    raise self.err(s.var, f"loop variable of type {t} cannot take elements "
                                          f"of {ct}")
            elif isinstance(s.lo, ast.ListExpression):
                s.lo.items = [self.coerce(self.expr(e, scope, t), t, "list element")
                              for e in s.lo.items]
            else:
                raise self.err(s.lo, f"cannot iterate over a value of type {s.lo.type}")
        self.loop_body(s.body, inner)

    def loop_body(self, body: ast.Node, scope: Scope) -> None:
        self.loop_depth += 1
        try:
            self.stmt_in_block(body, scope)
        finally:
            self.loop_depth -= 1

    def stmt_in_block(self, s: ast.Node, scope: Scope) -> None:
        self.stmt(s, Scope(scope, scope.owner))

    def check_switch(self, s: ast.SwitchStatement, scope: Scope) -> None:
        self.switch_subject = s.expr  # where `t.apply().action_run` may stand
        s.expr = self.expr(s.expr, scope)
        t = s.expr.type
        seen: set = set()
        if isinstance(t, T.ActionEnumType):
            for c in s.cases:
                if isinstance(c.label, ast.DefaultExpr):
                    c.label.type = T.DONT_CARE
                elif isinstance(c.label, ast.NameRef):
                    if c.label.name not in t.actions:
                        raise self.err(c.label, f"'{c.label.name}' is not an action of table "
                                                f"{t.table.name}")
                    found = self.lookup(scope, c.label)
                    c.action = found[0]
                    c.label.decl = found[0]
                    c.label.type = t
                    if c.label.name in seen:
                        raise self.err(c.label, f"duplicate switch label '{c.label.name}'")
                    seen.add(c.label.name)
                else:
                    raise self.err(c.label, "switch label must be an action name")
        else:
            if not isinstance(T.underlying(t), T.BitsType) and not isinstance(
                    t, (T.EnumType, T.ErrorType)):
                raise self.err(s.expr, f"cannot switch on a value of type {t}")
            for c in s.cases:
                if isinstance(c.label, ast.DefaultExpr):
                    c.label.type = T.DONT_CARE
                    continue
                c.label = self.coerce(self.expr(c.label, scope, t), t, "switch label")
                if not c.label.is_const:
                    raise self.err(c.label, "switch label must be a compile-time constant")
                if c.label.value in seen:
                    raise self.err(c.label, "duplicate switch label")
                seen.add(c.label.value)
        for i, c in enumerate(s.cases):
            if isinstance(c.label, ast.DefaultExpr) and i != len(s.cases) - 1:
                raise self.err(c.label, "'default' must be the last switch label")
            if c.body is not None:
                self.check_block(c.body, scope)
        if s.cases and s.cases[-1].body is None:
            raise self.err(s.cases[-1], "the last switch label needs a body")

    # ------------------------------------------------------------------------------ lvalues
    def require_lvalue(self, e: ast.Expression, what: str) -> None:
        reason = self._not_lvalue(e)
        if reason:
            raise self.err(e, f"cannot {what} {reason}")
        e.is_lvalue = True

    def _not_lvalue(self, e: ast.Expression) -> str | None:
        if isinstance(e, ast.NameRef):
            d = e.decl
            if isinstance(d, ast.VarDecl):
                return None
            if isinstance(d, ast.Parameter):
                if d.direction in ("out", "inout"):
                    return None
                kind = f"'{d.direction}'" if d.direction else "directionless"
                return f"{kind} parameter '{d.name}'"
            if isinstance(d, ast.ConstDecl):
                return f"constant '{d.name}'"
            return f"'{e.name}' (not a variable)"
        if isinstance(e, ast.Member):
            if e.kind == "field" or (e.kind == "stack" and e.name in ("next", "last")):
                return self._not_lvalue(e.expr)
            return f"'{e.name}' (not a field)"
        if isinstance(e, (ast.ArrayIndex, ast.Slice)):
            return self._not_lvalue(e.expr)
        return "an expression that is not a variable"

    # ------------------------------------------------------------------------------ constants
    def const_int(self, e: ast.Expression | None, scope: Scope, what: str) -> int:
        if e is None:
            raise CompileError(f"missing {what}")
        e2 = self.expr(e, scope)
        if not e2.is_const or not isinstance(e2.value, int) or isinstance(e2.value, bool):
            raise self.err(e, f"{what} must be a compile-time integer constant")
        return e2.value

    # ------------------------------------------------------------------------------ coercion
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
                    e.value = base.fit(e.value)
                    return e
                return self._implicit_cast(e, target, base.fit(e.value) if e.is_const else None)
        if isinstance(t, T.SerEnumType) and target == t.underlying:
            return self._implicit_cast(e, target, e.value if e.is_const else None)
        raise self.err(e, f"{what}: cannot use a value of type {t} where {target} is expected")

    def _implicit_cast(self, e: ast.Expression, target: T.P4Type, value: Any) -> ast.Cast:
        c = ast.Cast(type_ref=None, expr=e, implicit=True, loc=e.loc)
        c.type = target
        c.is_const = e.is_const
        c.value = value
        return c

    def _default_value(self, t: T.P4Type, where: ast.Node) -> ast.Expression:
        """The default value of a type, for fields left to ``...``."""
        base = T.underlying(t)
        if isinstance(base, T.BitsType):
            v: ast.Expression = ast.IntLiteral(0, text="0", loc=where.loc)
            self._const(v, base, 0)
            return v if base == t else self._implicit_cast(v, t, 0)
        if base == T.BOOL:
            v = ast.BoolLiteral(False, loc=where.loc)
            self._const(v, T.BOOL, False)
            return v
        if isinstance(t, (T.HeaderType, T.HeaderUnionType)):
            v = ast.InvalidHeader(loc=where.loc)
            v.type = t
            return v
        if isinstance(t, T.StructType):
            s = ast.StructExpression(fields=[ast.NamedExpression(f.name, self._default_value(
                f.type, where), loc=where.loc) for f in t.fields], loc=where.loc)
            s.type = t
            s.is_const = all(f.value.is_const for f in s.fields)
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
        e.is_const = all(i.is_const for i in e.items)
        e.value = [i.value for i in e.items] if e.is_const else None
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
        e.is_const = all(f.value.is_const for f in e.fields)
        e.value = {f.name: f.value.value for f in e.fields} if e.is_const else None
        return e

    # ------------------------------------------------------------------------------ expressions
    def expr(self, e: ast.Expression, scope: Scope, expected: T.P4Type | None = None
             ) -> ast.Expression:
        """Type-check ``e`` (``expected`` guides int literal widths and list expressions);
        returns the node to use in its place (same node unless rewritten)."""
        handler = getattr(self, "x_" + type(e).__name__, None)
        if handler is None:
            raise self.err(e, f"unexpected {type(e).__name__} in an expression")
        out = handler(e, scope, expected)
        return out if out is not None else e

    def _const(self, e: ast.Expression, t: T.P4Type, value: Any) -> None:
        e.type = t
        e.is_const = True
        e.value = value

    def x_IntLiteral(self, e: ast.IntLiteral, scope, expected):
        if e.width is not None:
            if e.width <= 0:
                raise self.err(e, f"invalid width {e.width} in literal {e.text}")
            t = T.BitsType(e.width, e.signed)
            if not e.signed and e.value >= (1 << e.width) or e.signed and not (
                    -(1 << (e.width - 1)) <= e.value < (1 << (e.width - 1))):
                raise self.err(e, f"value {e.text} does not fit in {t}")
            self._const(e, t, e.value)
        else:
            self._const(e, T.INT, e.value)

    def x_BoolLiteral(self, e, scope, expected):
        self._const(e, T.BOOL, e.value)

    def x_StringLiteral(self, e, scope, expected):
        self._const(e, T.STRING, e.value)

    def x_DontCare(self, e, scope, expected):
        e.type = T.DONT_CARE

    def x_DefaultExpr(self, e, scope, expected):
        e.type = T.DONT_CARE

    def x_InvalidHeader(self, e, scope, expected):
        if not isinstance(expected, (T.HeaderType, T.HeaderUnionType)):
            raise self.err(e, "{#} needs a header or header_union type from its context")
        e.type = expected

    def x_NameRef(self, e: ast.NameRef, scope, expected):
        found = self.lookup(scope, e)
        d = found[0]
        e.decl = d
        if isinstance(d, ast.ConstDecl):
            self._const(e, d.type, d.value)
        elif isinstance(d, (ast.VarDecl, ast.Parameter, ast.InstanceDecl, ast.TableDecl,
                            ast.ActionDecl, ast.ValueSetDecl, _MatchKindMember)):
            e.type = d.type
        elif isinstance(d, (ast.ExternFunctionDecl, ast.FunctionDecl)):
            e.type = d.type
        elif isinstance(d, ast.ParserState):
            e.type = T.STATE
        else:
            raise self.err(e, f"'{e.name}' is a type, not a value")

    def x_TypeExpression(self, e: ast.TypeExpression, scope, expected):
        e.type = self.resolve_type(e.type_ref, scope)

    def x_Member(self, e: ast.Member, scope, expected):
        if isinstance(e.expr, ast.TypeExpression):
            t = self.resolve_type(e.expr.type_ref, scope)
            e.expr.type = t
            if isinstance(t, T.ErrorType):
                if e.name not in t.members:
                    raise self.err(e.name_loc or e, f"error.{e.name} is not declared")
                e.kind = "error"
                e.decl = e.name
                self._const(e, t, e.name)
                return
            if isinstance(t, T.EnumType):
                if e.name not in t.members:
                    raise self.err(e.name_loc or e, f"'{e.name}' is not a member of enum {t.name}")
                e.kind = "enum"
                e.decl = next(m for m in t.decl.members if m.name == e.name)
                self._const(e, t, e.name)
                return
            if isinstance(t, T.SerEnumType):
                if e.name not in t.members:
                    raise self.err(e.name_loc or e, f"'{e.name}' is not a member of enum {t.name}")
                e.kind = "enum"
                e.decl = next(m for m in t.decl.members if m.name == e.name)
                self._const(e, t, t.members[e.name])
                return
            e.kind = "method"
            e.type = t
            return
        e.expr = self.expr(e.expr, scope)
        t = e.expr.type
        if isinstance(t, T.NewType):
            t = t.underlying if isinstance(t.underlying, T.StructLikeType) else t
        if isinstance(t, T.StructLikeType):
            ft = t.field_type(e.name)
            if ft is not None:
                e.kind = "field"
                e.type = ft
                if e.expr.is_const and isinstance(e.expr.value, dict):
                    self._const(e, ft, e.expr.value.get(e.name))
                elif e.expr.is_const and isinstance(e.expr.value, list):
                    self._const(e, ft, e.expr.value[t.field_names().index(e.name)])
                return
            if isinstance(t, (T.HeaderType, T.HeaderUnionType)) and e.name in (
                    "isValid", "setValid", "setInvalid", *_SIZE_METHODS):
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
                    self._const(e, T.BitsType(32), t.size)
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

    def x_ArrayIndex(self, e: ast.ArrayIndex, scope, expected):
        e.expr = self.expr(e.expr, scope)
        t = e.expr.type
        e.index = self.expr(e.index, scope)
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

    def x_Slice(self, e: ast.Slice, scope, expected):
        e.expr = self.expr(e.expr, scope)
        hi = self.const_int(e.hi, scope, "slice bound")
        lo = self.const_int(e.lo, scope, "slice bound")
        t = T.underlying(e.expr.type)
        if not isinstance(t, (T.BitsType, T.IntType)):
            raise self.err(e, f"cannot slice a value of type {e.expr.type}")
        if hi < lo or lo < 0 or (isinstance(t, T.BitsType) and hi >= t.width):
            raise self.err(e, f"invalid slice [{hi}:{lo}] of {e.expr.type}")
        e.hi_value, e.lo_value = hi, lo
        rt = T.BitsType(hi - lo + 1)
        if e.expr.is_const:
            self._const(e, rt, (e.expr.value >> lo) & rt.mask)
        else:
            e.type = rt

    def x_Unary(self, e: ast.Unary, scope, expected):
        e.expr = self.expr(e.expr, scope, expected if e.op != "!" else T.BOOL)
        t = e.expr.type
        if e.op == "!":
            if t != T.BOOL:
                raise self.err(e, f"'!' needs a bool operand, not {t}")
            self._fold(e, T.BOOL, lambda v: not v, e.expr)
            return
        if e.op == "~":
            if t == T.INT and expected is not None and isinstance(expected, T.BitsType):
                e.expr = self.coerce(e.expr, expected, "operand of '~'")
                t = expected
            if not isinstance(t, T.BitsType):
                if t == T.INT:
                    raise self.err(e, "'~' needs an operand of known width; cast the constant")
                raise self.err(e, f"'~' needs a bit<> or int<> operand, not {t}")
            self._fold(e, t, lambda v: t.fit(~v), e.expr)
            return
        if not (isinstance(t, T.BitsType) or t == T.INT):
            raise self.err(e, f"unary '{e.op}' needs a numeric operand, not {t}")
        if e.op == "-":
            self._fold(e, t, lambda v: t.fit(-v) if isinstance(t, T.BitsType) else -v, e.expr)
        else:
            self._fold(e, t, lambda v: v, e.expr)

    def _fold(self, e: ast.Expression, t: T.P4Type, fn: Callable, *operands: ast.Expression
              ) -> None:
        e.type = t
        if all(o.is_const for o in operands):
            e.is_const = True
            e.value = fn(*(o.value for o in operands))

    def x_Binary(self, e: ast.Binary, scope, expected):
        op = e.op
        if op in ("&&", "||"):
            e.left = self.expr(e.left, scope, T.BOOL)
            e.right = self.expr(e.right, scope, T.BOOL)
            for side in (e.left, e.right):
                if side.type != T.BOOL:
                    raise self.err(side, f"'{op}' needs bool operands, not {side.type}")
            fn = (lambda a, b: a and b) if op == "&&" else (lambda a, b: a or b)
            self._fold(e, T.BOOL, fn, e.left, e.right)
            return
        if op in ("<<", ">>"):
            e.left = self.expr(e.left, scope, expected)
            e.right = self.expr(e.right, scope)
            lt, rt = e.left.type, e.right.type
            if not (rt == T.INT or isinstance(rt, T.BitsType) and not rt.signed):
                raise self.err(e.right, f"shift amount must be an unsigned integer, not {rt}")
            if rt == T.INT and e.right.value < 0:
                raise self.err(e.right, "shift amount must not be negative")
            if lt == T.INT and not e.right.is_const:
                if isinstance(T.underlying(expected) if expected else None, T.BitsType):
                    e.left = self.coerce(e.left, expected, "shift operand")
                    lt = e.left.type
                else:
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
                fn = (lambda a, b: lt.fit(a << b) if b < lt.width else 0) if lt != T.INT \
                    else (lambda a, b: a << b)
            else:
                fn = lambda a, b: a >> b  # noqa: E731  (Python >> is arithmetic, as P4's int<>)
            self._fold(e, lt, fn, e.left, e.right)
            return
        if op == "++":
            e.left = self.expr(e.left, scope)
            e.right = self.expr(e.right, scope)
            lt, rt = T.underlying(e.left.type), T.underlying(e.right.type)
            for side, st in ((e.left, lt), (e.right, rt)):
                if not isinstance(st, T.BitsType):
                    raise self.err(side, f"'++' needs operands of known width (bit<> or int<>), "
                                         f"not {side.type}")
            t = T.BitsType(lt.width + rt.width, lt.signed)
            self._fold(e, t, lambda a, b: t.fit(((a & lt.mask) << rt.width) | (b & rt.mask)),
                       e.left, e.right)
            return
        # arithmetic, bitwise, comparisons: operands of one type, int constants adapt
        e.left = self.expr(e.left, scope, expected if op not in _CMP | _EQ else None)
        e.right = self.expr(e.right, scope, e.left.type if e.left.type != T.INT else expected
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
            self._fold(e, T.BOOL, (lambda a, b: a == b) if op == "==" else (lambda a, b: a != b),
                       e.left, e.right)
            return
        num = T.underlying(t)
        if not (isinstance(num, T.BitsType) or num == T.INT):
            raise self.err(e, f"'{op}' is not defined for values of type {t}")
        if op in _CMP:
            fn = {"<": lambda a, b: a < b, ">": lambda a, b: a > b,
                  "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}[op]
            self._fold(e, T.BOOL, fn, e.left, e.right)
            return
        if op in ("/", "%") and e.right.is_const and e.right.value == 0:
            raise self.err(e.right, "division by zero")
        if isinstance(num, T.BitsType) and num.signed and op in ("/", "%"):
            raise self.err(e, f"'{op}' is not defined for signed values")
        self._fold(e, t, _arith(op, num), e.left, e.right)

    def x_Ternary(self, e: ast.Ternary, scope, expected):
        e.cond = self.expr(e.cond, scope, T.BOOL)
        if e.cond.type != T.BOOL:
            raise self.err(e.cond, f"condition must be bool, not {e.cond.type}")
        e.then = self.expr(e.then, scope, expected)
        e.else_ = self.expr(e.else_, scope, expected if e.then.type == T.INT else e.then.type)
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
        if e.cond.is_const and e.then.is_const and e.else_.is_const:
            e.is_const = True
            e.value = e.then.value if e.cond.value else e.else_.value

    def x_Cast(self, e: ast.Cast, scope, expected):
        if e.implicit:
            return
        t = self.resolve_type(e.type_ref, scope)
        e.expr = self.expr(e.expr, scope, t)
        src = e.expr.type
        e.type = t
        if src == t:
            e.is_const, e.value = e.expr.is_const, e.expr.value
            return
        if isinstance(e.expr, (ast.ListExpression, ast.StructExpression)):
            e.expr = self.coerce(e.expr, t, "cast")
            e.is_const, e.value = e.expr.is_const, e.expr.value
            return
        sb, tb = T.underlying(src), T.underlying(t)
        ok = False
        value = None
        if isinstance(tb, T.BitsType):
            if isinstance(sb, T.BitsType) or sb == T.INT:
                ok = True
                value = tb.fit(e.expr.value) if e.expr.is_const else None
            elif sb == T.BOOL and tb.width == 1 and not tb.signed:
                ok = True
                value = int(e.expr.value) if e.expr.is_const else None
            if isinstance(t, T.SerEnumType) and ok and e.expr.is_const:
                value = tb.fit(e.expr.value)
        elif t == T.BOOL:
            if isinstance(sb, T.BitsType) and sb.width == 1 and not sb.signed or sb == T.INT:
                ok = True
                value = bool(e.expr.value) if e.expr.is_const else None
        elif isinstance(t, T.NewType) and src == t.underlying:
            ok, value = True, e.expr.value
        elif t == T.INT and isinstance(sb, T.BitsType):
            ok, value = True, e.expr.value
        if not ok:
            raise self.err(e, f"cannot cast a value of type {src} to {t}")
        e.is_const = e.expr.is_const
        e.value = value

    def x_ListExpression(self, e: ast.ListExpression, scope, expected):
        if isinstance(expected, T.ListType):
            e.items = [self.coerce(self.expr(i, scope, expected.elem), expected.elem,
                                   "list element") for i in e.items]
            e.type = expected
            e.is_const = all(i.is_const for i in e.items)
            e.value = [i.value for i in e.items] if e.is_const else None
            return
        if isinstance(expected, (T.StructLikeType, T.TupleType)):
            types = list(expected.elems) if isinstance(expected, T.TupleType) else [
                f.type for f in expected.fields]
            dots = bool(e.items) and isinstance(e.items[-1], ast.Dots)
            if len(types) == len(e.items) or dots:
                e.items = [i if isinstance(i, ast.Dots) else self.expr(i, scope, ft)
                           for i, ft in zip(e.items, types + [T.DONT_CARE])]
                return self._retype_list(e, expected, "list expression")
        e.items = [self.expr(i, scope) for i in e.items]
        e.type = T.TupleType(tuple(i.type for i in e.items))
        e.is_const = all(i.is_const for i in e.items)
        e.value = [i.value for i in e.items] if e.is_const else None

    def x_StructExpression(self, e: ast.StructExpression, scope, expected):
        target = expected
        if e.type_ref is not None:
            target = self.resolve_type(e.type_ref, scope)
        if isinstance(target, (T.StructType, T.HeaderType)):
            for f in e.fields:
                f.value = self.expr(f.value, scope, target.field_type(f.name))
            return self._retype_struct(e, target, "struct initializer")
        if e.has_dots:
            raise self.err(e, "'...' needs the struct type from the context")
        for f in e.fields:
            f.value = self.expr(f.value, scope)
        e.type = T.StructType(None, [T.Field(f.name, f.value.type) for f in e.fields])  # type: ignore[arg-type]
        e.is_const = all(f.value.is_const for f in e.fields)
        e.value = {f.name: f.value.value for f in e.fields} if e.is_const else None

    def x_Mask(self, e, scope, expected):
        raise self.err(e, "'&&&' is only allowed in select cases and table entries")

    def x_Range(self, e, scope, expected):
        raise self.err(e, "'..' is only allowed in select cases and table entries")

    def x_Dots(self, e, scope, expected):
        raise self.err(e, "'...' is only allowed at the end of a typed list or struct "
                          "initializer")

    def x_SelectExpression(self, e, scope, expected):
        raise self.err(e, "select is only allowed in a transition")

    # ------------------------------------------------------------------------------ calls
    def x_MethodCall(self, e: ast.MethodCall, scope, expected):
        explicit = [self.resolve_type(t, scope) for t in e.type_arg_refs]
        target = e.target
        if isinstance(target, ast.TypeExpression):
            t = self.resolve_type(target.type_ref, scope)
            target.type = t
            e.kind = "constructor"
            e.decl = target.type_ref.decl if isinstance(target.type_ref, ast.NamedTypeRef) \
                else None
            e.method_name = getattr(t, "name", str(t))
            e.type, e.ctor_args, sig, ordered = self.instantiate(t, e, e.args, scope, None)
            e.args = [ast.Argument(a, p.name, loc=a.loc) for a, p in zip(ordered, sig.params)]
            e.type_args = {}
            e.signature = sig
            return
        if isinstance(target, ast.NameRef):
            found = self.lookup(scope, target)
            d = found[0]
            target.decl = d
            if isinstance(d, ast.ActionDecl):
                if self.in_parser:
                    raise self.err(e, "actions cannot be called from a parser")
                if self.in_function is not None:
                    raise self.err(e, "functions cannot call actions")
                target.type = d.type
                e.kind, e.decl, e.method_name = "action", d, d.name
                sig = T.FunctionType(d.name, [], d.type.params, T.VOID, d)
                return self._finish_call(e, sig, scope, [], explicit)
            if isinstance(d, (ast.ExternFunctionDecl, ast.FunctionDecl)):
                cands = [x for x in found if self._arity_ok(x.type.params, e.args)]
                if not cands:
                    raise self.err(e, f"'{d.name}' does not take {len(e.args)} arguments")
                d = self._pick_overload(cands, e)
                target.decl = d
                target.type = d.type
                e.kind = "function" if isinstance(d, ast.FunctionDecl) else (
                    "verify" if d.name == "verify" and d.loc.file.endswith("core.p4")
                    else "extern_function")
                e.decl, e.method_name = d, d.name
                if e.kind == "verify" and not self.in_parser:
                    raise self.err(e, "verify may only be invoked in parsers")
                self._finish_call(e, d.type, scope, d.type.type_params, explicit)
                if d.name == "static_assert" and d.loc.file.endswith("core.p4"):
                    self._static_assert(e)
                return
            raise self.err(target, f"'{target.name}' cannot be called")
        if isinstance(target, ast.Member):
            e.target = target = self.expr(target, scope)
            if target.kind != "method":
                raise self.err(e, f"'{target.name}' is not a method")
            obj = target.expr
            ot = obj.type
            name = target.name
            e.method_name = name
            if isinstance(obj, ast.TypeExpression):
                # direct application T.apply() of a parser/control type
                if name != "apply" or not isinstance(ot, (T.ParserType, T.ControlType)):
                    raise self.err(e, f"'{name}' cannot be called on type {ot}")
                if ot.ctor_params:
                    raise self.err(e, f"{ot.name} takes constructor arguments; instantiate it")
                e.kind, e.decl = "control_apply" if isinstance(ot, T.ControlType) else \
                    "parser_apply", ot.decl
                sig = T.FunctionType("apply", [], ot.params, T.VOID, ot.decl)
                return self._finish_call(e, sig, scope, [], explicit)
            if isinstance(ot, (T.HeaderType, T.HeaderUnionType)):
                e.kind = "header_method" if isinstance(ot, T.HeaderType) else "union_method"
                e.decl = None
                if name == "isValid":
                    sig = T.FunctionType(name, [], [], T.BOOL)
                elif name in _SIZE_METHODS:
                    self._finish_call(e, T.FunctionType(name, [], [], T.INT), scope, [], explicit)
                    bits = ot.bit_width()
                    if "min" in name:
                        bits -= sum(f.type.bit_width() for f in ot.fields
                                    if isinstance(f.type, T.VarbitType))
                    self._const(e, T.INT, bits if name.endswith("Bits") else (bits + 7) // 8)
                    return
                else:
                    if isinstance(ot, T.HeaderUnionType):
                        raise self.err(e, f"header_union has no method '{name}'")
                    self.require_lvalue(obj, f"call {name}() on")
                    sig = T.FunctionType(name, [], [], T.VOID)
                return self._finish_call(e, sig, scope, [], explicit)
            if isinstance(ot, T.StackType):
                self.require_lvalue(obj, f"call {name}() on")
                e.kind, e.decl = "stack_method", None
                sig = T.FunctionType(name, [], [T.Param("count", "in", T.INT)], T.VOID)
                self._finish_call(e, sig, scope, [], explicit)
                if not e.args[0].value.is_const:
                    raise self.err(e.args[0], f"{name} count must be a constant")
                return
            if isinstance(ot, T.TableType):
                if name != "apply":
                    raise self.err(e, f"table has no method '{name}'")
                if self.in_parser:
                    raise self.err(e, "tables cannot be applied in a parser")
                if self.in_action is not None:
                    raise self.err(e, "tables cannot be applied inside an action")
                e.kind, e.decl = "table_apply", ot.decl
                sig = T.FunctionType("apply", [], [], ot.result)
                return self._finish_call(e, sig, scope, [], explicit)
            if isinstance(ot, (T.ControlType, T.ParserType)):
                if name != "apply":
                    raise self.err(e, f"{ot.name} has no method '{name}'")
                if self.in_action is not None:
                    raise self.err(e, f"{ot.name}.apply() cannot be called from an action")
                e.kind = "control_apply" if isinstance(ot, T.ControlType) else "parser_apply"
                e.decl = obj.decl if isinstance(obj, ast.NameRef) else ot.decl
                sig = T.FunctionType("apply", [], ot.params, T.VOID, ot.decl)
                return self._finish_call(e, sig, scope, [], explicit)
            if isinstance(ot, T.ExternType):
                methods = ot.methods.get(name)
                if not methods:
                    raise self.err(target.name_loc or target, f"extern {ot.name} has no method '{name}'")
                cands = [m for m in methods if self._arity_ok(m.params, e.args)]
                if not cands:
                    raise self.err(e, f"method '{name}' of {ot.name} does not take "
                                      f"{len(e.args)} arguments")
                ft = self._pick_overload(cands, e)
                env = {tv: a for tv, a in ot.bindings.items() if a is not tv}
                free = [tv for tv in ot.extern.type_params if tv not in env] + ft.type_params
                sig = T.substitute(ft, env)
                e.kind = ot.name if ot.name in ("packet_in", "packet_out") else "extern_method"
                e.decl = ft.decl
                self._finish_call(e, sig, scope, free, explicit)
                if e.kind in ("packet_in", "packet_out") and name in ("extract", "emit"):
                    self._check_packet_arg(e, e.args[0].value, name)
                return
            raise self.err(e, f"cannot call '{name}' on a value of type {ot}")
        if isinstance(target, ast.MethodCall):
            raise self.err(e, "the result of a call cannot be called")
        raise self.err(e, "expression cannot be called")

    def _static_assert(self, e: ast.MethodCall) -> None:
        """core.p4's static_assert: evaluated here, folded to true or a compile error."""
        check = e.args[0].value
        if not check.is_const:
            raise self.err(check, "static_assert needs a compile-time condition")
        if not check.value:
            msg = e.args[1].value.value if len(e.args) > 1 else "static_assert failed"
            raise self.err(e, msg)
        self._const(e, T.BOOL, True)

    def _check_packet_arg(self, e: ast.MethodCall, v: ast.Expression, name: str) -> None:
        """extract() takes a header (or stack .next); emit() headers, stacks, unions and
        structs of them."""
        t = v.type
        if name == "extract":
            if not isinstance(t, T.HeaderType):
                raise self.err(v, f"extract needs a header, not a value of type {t}")
            if len(e.args) == 1 and t.has_varbit():
                raise self.err(e, f"extract of {t} (with a varbit field) needs the field's "
                                  f"size in bits as a second argument")
            if len(e.args) == 2 and not t.has_varbit():
                raise self.err(e, f"{t} has no varbit field; extract takes one argument")
            return
        if not _emittable(t):
            raise self.err(v, f"emit needs a header, header stack, header_union or a struct of "
                              f"them, not a value of type {t}")

    def _arity_ok(self, params: list[T.Param], args: list[ast.Argument]) -> bool:
        if any(a.name for a in args):
            names = {p.name for p in params}
            if not all(a.name in names for a in args if a.name):
                return False
        required = sum(1 for p in params if not p.has_default and not p.optional)
        return required <= len(args) <= len(params)

    def _pick_overload(self, cands: list, e: ast.MethodCall):
        """Overloads differ by arity in the libraries; prefer the exact parameter count."""
        def params_of(c):
            return c.params if isinstance(c, T.FunctionType) else c.type.params
        exact = [c for c in cands if len(params_of(c)) == len(e.args)]
        if len(exact) > 1:
            # mark_to_drop() vs mark_to_drop(standard_metadata) etc. cannot collide; prefer
            # the later declaration (the non-deprecated one comes last in v1model.p4)
            return exact[-1]
        return (exact or cands)[0]

    def _finish_call(self, e: ast.MethodCall, sig: T.FunctionType, scope: Scope,
                     free: list[T.TypeVar], explicit: list[T.P4Type]) -> None:
        env: dict[T.TypeVar, T.P4Type] = {}
        if explicit:
            tps = sig.type_params if sig.type_params else free
            if len(explicit) != len(tps):
                raise self.err(e, f"'{e.method_name}' expects {len(tps)} type arguments, "
                                  f"got {len(explicit)}")
            env = dict(zip(tps, explicit))
            sig = T.substitute(sig, env)
            free = [tv for tv in free if tv not in env]
        ordered, inferred = self.check_args(sig, e.args, scope, e, free)
        env.update(inferred)
        sig = T.substitute(sig, inferred)
        e.args = [ast.Argument(a, p.name, loc=a.loc) for a, p in zip(ordered, sig.params)]
        e.signature = sig
        e.target.type = sig
        e.type_args = {tv.name: t for tv, t in env.items()}
        rt = sig.return_type
        if isinstance(rt, T.TypeVar):
            raise self.err(e, f"cannot infer the return type of '{e.method_name}'; give type "
                              f"arguments")
        e.type = rt

    def check_args(self, sig: T.FunctionType, args: list[ast.Argument], scope: Scope,
                   where: ast.Node, free: list[T.TypeVar]
                   ) -> tuple[list[ast.Expression], dict[T.TypeVar, T.P4Type]]:
        """Match arguments to parameters (positional or by name), infer the free type
        variables, coerce and direction-check every argument. Returns the argument
        expressions in parameter order (defaults filled in) and the inferred bindings."""
        params = sig.params
        by_param: dict[int, ast.Argument] = {}
        if any(a.name for a in args):
            if not all(a.name for a in args):
                raise self.err(where, "cannot mix named and positional arguments")
            index = {p.name: i for i, p in enumerate(params)}
            for a in args:
                if a.name not in index:
                    raise self.err(a, f"'{sig.name}' has no parameter named '{a.name}'")
                if index[a.name] in by_param:
                    raise self.err(a, f"parameter '{a.name}' given twice")
                by_param[index[a.name]] = a
        else:
            if len(args) > len(params):
                raise self.err(where, f"'{sig.name}' takes {_n(len(params), 'argument')}, got "
                                      f"{len(args)}")
            by_param = dict(enumerate(args))
        for i, p in enumerate(params):
            if i not in by_param and not p.has_default and not p.optional:
                raise self.err(where, f"'{sig.name}' takes {_n(len(params), 'argument')}, got "
                                      f"{len(args)} (missing '{p.name}')")
        # first pass: type the arguments, binding type variables from typed ones
        env: dict[T.TypeVar, T.P4Type] = {}
        typed: dict[int, ast.Expression] = {}
        for i, p in enumerate(params):
            a = by_param.get(i)
            if a is None:
                continue
            pt = T.substitute(p.type, env)
            hint = pt if not _has_free(pt, free) else None
            v = self.expr(a.value, scope, hint)
            typed[i] = v
            if v.type != T.INT and not isinstance(v.type, T.DontCareType):
                self._unify(pt, v.type, env, free, v)
        # second pass: remaining variables bound by int constants stay arbitrary-precision
        ordered: list[ast.Expression] = []
        for i, p in enumerate(params):
            pt = T.substitute(p.type, env)
            if i not in typed:
                default = getattr(p.decl, "default", None)
                if default is None:  # an omitted @optional parameter
                    default = ast.DontCare(loc=where.loc)
                    default.type = T.DONT_CARE
                ordered.append(default)
                continue
            v = typed[i]
            for tv in free:
                if tv not in env and _mentions(pt, tv) and v.type == T.INT:
                    env[tv] = T.INT
            pt = T.substitute(p.type, env)
            if isinstance(v, ast.DontCare):
                if p.direction not in ("out",):
                    raise self.err(v, "'_' can only be passed to an out parameter")
                v.type = pt
                ordered.append(v)
                continue
            if p.direction in ("out", "inout"):
                if v.type != pt and not isinstance(pt, T.TypeVar):
                    raise self.err(v, f"argument for {p.direction} parameter '{p.name}' must "
                                      f"have type {pt}, not {v.type}")
                self.require_lvalue(v, f"pass to {p.direction} parameter '{p.name}'")
            else:
                if isinstance(pt, (T.ParserType, T.ControlType, T.SpecializedType)):
                    pass  # checked by unification
                elif isinstance(pt, T.BlockType) or isinstance(pt, T.ExternType) and \
                        isinstance(v.type, T.ExternType):
                    if v.type != pt and isinstance(pt, T.ExternType) and pt.extern is not \
                            v.type.extern:
                        raise self.err(v, f"argument '{p.name}' must be a {pt}, not {v.type}")
                else:
                    v = self.coerce(v, pt, f"argument '{p.name}' of '{sig.name}'")
            ordered.append(v)
        return ordered, env

    def check_arg(self, a: ast.Argument, p: T.Param, scope: Scope) -> None:
        v = self.expr(a.value, scope, p.type)
        if p.direction in ("out", "inout"):
            if v.type != p.type:
                raise self.err(v, f"argument for {p.direction} parameter '{p.name}' must have "
                                  f"type {p.type}, not {v.type}")
            self.require_lvalue(v, f"pass to {p.direction} parameter '{p.name}'")
        else:
            v = self.coerce(v, p.type, f"argument '{p.name}'")
        a.value = v

    def _unify(self, pt: T.P4Type, at: T.P4Type, env: dict, free: list, where: ast.Node) -> None:
        if isinstance(pt, T.TypeVar) and pt in free:
            if pt in env:
                if env[pt] != at and env[pt] != T.INT:
                    raise self.err(where, f"type {at} does not match {env[pt]} for "
                                          f"{pt.name}")
                env[pt] = at
            else:
                env[pt] = at
            return
        if isinstance(pt, T.TupleType) and isinstance(at, T.TupleType) and \
                len(pt.elems) == len(at.elems):
            for x, y in zip(pt.elems, at.elems):
                self._unify(x, y, env, free, where)
            return
        if isinstance(pt, T.ExternType) and isinstance(at, T.ExternType) and \
                pt.extern is at.extern:
            for x, y in zip(pt.type_args, at.type_args):
                self._unify(x, y, env, free, where)
            return
        if isinstance(pt, T.ListType) and isinstance(at, T.ListType):
            self._unify(pt.elem, at.elem, env, free, where)
            return
        if isinstance(pt, T.StackType) and isinstance(at, T.StackType):
            self._unify(pt.elem, at.elem, env, free, where)
            return
        if isinstance(pt, (T.SpecializedType, T.BlockType)) and isinstance(at, T.BlockType):
            base = pt.base if isinstance(pt, T.SpecializedType) else pt
            if type(base) is not type(at) and not (isinstance(base, T.ParserType) and
                                                  isinstance(at, T.ParserType)):
                kind = "parser" if isinstance(base, T.ParserType) else "control"
                raise self.err(where, f"expected a {kind} of type {pt}, got {at.name}")
            sub = dict(zip(base.type_params, pt.type_args)) if isinstance(
                pt, T.SpecializedType) else {}
            if len(base.params) != len(at.params):
                raise self.err(where, f"{at.name} has {len(at.params)} parameters but "
                                      f"{base.name} needs {len(base.params)}")
            for bp, ap in zip(base.params, at.params):
                if (bp.direction or None) != (ap.direction or None):
                    raise self.err(ap.decl or where, f"parameter '{ap.name}' of {at.name} must be "
                                                     f"'{bp.direction or 'directionless'}' as in "
                                                     f"{base.name}")
                want = T.substitute(bp.type, sub)
                self._unify(want, ap.type, env, free, ap.decl or where)
                want = T.substitute(want, env)
                if not _has_free(want, free) and want != ap.type:
                    raise self.err(ap.decl or where, f"parameter '{ap.name}' of {at.name} has "
                                                     f"type {ap.type}, but {base.name} needs "
                                                     f"{want}")
            return


def _arith(op: str, t: T.P4Type) -> Callable:
    fit = t.fit if isinstance(t, T.BitsType) else (lambda v: v)
    if op == "+":
        return lambda a, b: fit(a + b)
    if op == "-":
        return lambda a, b: fit(a - b)
    if op == "*":
        return lambda a, b: fit(a * b)
    if op == "/":
        return lambda a, b: fit(_tdiv(a, b))
    if op == "%":
        return lambda a, b: fit(a - b * _tdiv(a, b))
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


def _suggest(name: str, scope: Scope) -> str:
    """"; did you mean 'x'?" for a near miss among the names in scope."""
    names: set[str] = set()
    s: Scope | None = scope
    while s is not None:
        names.update(s.names)
        s = s.parent
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.75)
    return f"; did you mean '{close[0]}'?" if close else ""


def _emittable(t: T.P4Type) -> bool:
    if isinstance(t, (T.HeaderType, T.HeaderUnionType)):
        return True
    if isinstance(t, T.StackType):
        return True
    if isinstance(t, T.StructType):
        return all(_emittable(f.type) for f in t.fields)
    return False


def _n(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _tdiv(a: int, b: int) -> int:
    """Integer division truncating toward zero (as P4 and C do)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _mentions(t: T.P4Type, tv: T.TypeVar) -> bool:
    if t is tv:
        return True
    if isinstance(t, T.TupleType):
        return any(_mentions(x, tv) for x in t.elems)
    if isinstance(t, (T.ExternType, T.SpecializedType)):
        return any(_mentions(x, tv) for x in t.type_args)
    if isinstance(t, (T.StackType, T.ListType)):
        return _mentions(t.elem, tv)
    return False


def _has_free(t: T.P4Type, free: list[T.TypeVar]) -> bool:
    return any(_mentions(t, tv) for tv in free)
