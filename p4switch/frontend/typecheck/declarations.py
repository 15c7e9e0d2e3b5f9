"""Declarations, in program order: each gets its type and enters its scope; controls and
parsers check their locals and bodies (``statements.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.typecheck.scopes import MatchKindMember, Scope

# Built-in parser states every parser may transition to.
ACCEPT = ast.ParserState("accept")
REJECT = ast.ParserState("reject")


class Declarations:
    """One ``decl_<Class>`` handler per declaration class."""

    def check_declaration(self, d: ast.Node, scope: Scope) -> None:
        handler: Callable | None = getattr(self, "decl_" + type(d).__name__, None)
        if handler is None:
            raise self.err(d, f"unexpected {type(d).__name__} here")
        handler(d, scope)

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
            mk = MatchKindMember(m, loc=d.loc)
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

    def decl_TableDecl(self, d: ast.TableDecl, scope: Scope) -> None:
        self.check_table(d, scope)
        self.declare(scope, d.name, d)
