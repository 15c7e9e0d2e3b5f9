"""Declarations, in program order: each gets its type; controls and
parsers check their locals and bodies (``statements.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from p4switch.frontend import ast
from p4switch.frontend import types as T


class Declarations:
    """One ``decl_<Class>`` handler per declaration class."""

    def check_declaration(self, d: ast.Node) -> None:
        handler: Callable | None = getattr(self, "decl_" + type(d).__name__, None)
        if handler is None:
            raise self.err(d, f"unexpected {type(d).__name__} here")
        handler(d)

    def decl_ErrorDecl(self, d: ast.ErrorDecl) -> None:
        for m in d.members:
            if m in self.error_type.members:
                raise self.err(d, f"error.{m} is already declared")
            self.error_type.members.append(m)
        d.type = self.error_type

    def decl_MatchKindDecl(self, d: ast.MatchKindDecl) -> None:
        for m in d.members:
            if m in self.match_kind_type.members:
                raise self.err(d, f"match_kind '{m}' is already declared")
            self.match_kind_type.members.append(m)
        d.type = self.match_kind_type

    def decl_ConstDecl(self, d: ast.ConstDecl) -> None:
        t = self.resolve_type(d.type_ref)
        d.type = t
        d.init = self.coerce(self.expr(d.init, t), t, f"constant '{d.name}'")
        self.folding.fold_constant(d)

    def decl_TypedefDecl(self, d: ast.TypedefDecl) -> None:
        t = self.resolve_type(d.type_ref)
        d.type = T.NewType(d.name, t, d) if d.new_type else t

    def _struct_like(self, d: ast.StructLikeDecl, cls: type) -> None:
        if d.type_params:
            # generic: checked per specialization (``H<bit<8>>``)
            self.generic_structs[d] = (cls, {})
            return
        t = cls(d.name, [], d)
        d.type = t
        self._struct_fields(d, t, cls)

    def decl_HeaderDecl(self, d):
        self._struct_like(d, T.HeaderType)

    def decl_StructDecl(self, d):
        self._struct_like(d, T.StructType)

    def decl_HeaderUnionDecl(self, d):
        self._struct_like(d, T.HeaderUnionType)

    def decl_EnumDecl(self, d: ast.EnumDecl) -> None:
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
            u = self.resolve_type(d.underlying)
            if not isinstance(u, T.BitsType):
                raise self.err(d.underlying, f"enum underlying type must be bit<> or int<>, not {u}")
            st = T.SerEnumType(d.name, u, {}, d)
            for m in d.members:
                if m.init is None:
                    raise self.err(m, f"serializable enum member '{m.name}' needs a value")
                m.init = self.coerce(self.expr(m.init, u), u, f"enum member {m.name}")
                if not m.init.is_const:
                    raise self.err(m.init, "enum member value must be a compile-time constant")
                m.value = m.init.value
                st.members[m.name] = m.value
            d.type = st

    def _function_type(self, name: str, ret: ast.TypeRef | None, tparams: list[ast.TypeParam],
                       params: list[ast.Parameter], decl: ast.Node) -> T.FunctionType:
        tvs = self.declare_type_params(tparams)
        ps = self.make_params(params)
        rt = self.resolve_type(ret) if ret is not None else T.VOID
        return T.FunctionType(name, tvs, ps, rt, decl)

    def decl_ExternDecl(self, d: ast.ExternDecl) -> None:
        tvs = self.declare_type_params(d.type_params)
        et = T.ExternDeclType(d.name, tvs, [], {}, d)
        d.type = et
        for m in d.methods:
            ft = self._function_type(m.name, m.return_type, m.type_params, m.params, m)
            m.type = ft
            if m.is_constructor:
                if m.name != d.name:
                    raise self.err(m, f"constructor name '{m.name}' does not match extern "
                                      f"'{d.name}'")
                et.constructors.append(ft)
            else:
                et.methods.setdefault(m.name, []).append(ft)

    def decl_ExternFunctionDecl(self, d: ast.ExternFunctionDecl) -> None:
        d.type = self._function_type(d.name, d.return_type, d.type_params, d.params, d)

    def decl_FunctionDecl(self, d: ast.FunctionDecl) -> None:
        d.type = self._function_type(d.name, d.return_type, d.type_params, d.params, d)
        saved = (self.return_type, self.in_function)
        self.return_type, self.in_function = d.type.return_type, d
        self.check_block(d.body)
        self.return_type, self.in_function = saved

    def decl_ActionDecl(self, d: ast.ActionDecl) -> None:
        params = self.make_params(d.params)
        seen_dirless = False
        for p in params:
            if p.direction is None and p.type == T.INT:  # no width for the control plane
                raise self.err(p.decl, f"'{p.name}': action parameters cannot have type int")
            if isinstance(p.type, T.ExternType):
                raise self.err(p.decl, f"'{p.name}': action parameters cannot have extern types")
            if p.direction is None:
                seen_dirless = True
            elif seen_dirless:
                raise self.err(p.decl, "action parameters with a direction must come before "
                                       "directionless (control-plane) parameters")
        d.type = T.ActionType(d.name, params, d)
        saved = (self.return_type, self.in_action)
        self.return_type, self.in_action = T.VOID, d
        self.check_block(d.body)
        self.return_type, self.in_action = saved

    def _block_type(self, cls, d, with_ctor: bool) -> None:
        tvs = self.declare_type_params(d.type_params)
        params = self.make_params(d.params)
        ctor = self.make_params(d.ctor_params, blocks=True) if with_ctor else []
        d.type = cls(d.name, tvs, params, ctor, d, d.annotations)

    def decl_ParserTypeDecl(self, d):
        self._block_type(T.ParserType, d, False)

    def decl_ControlTypeDecl(self, d):
        self._block_type(T.ControlType, d, False)

    def decl_PackageTypeDecl(self, d: ast.PackageTypeDecl) -> None:
        tvs = self.declare_type_params(d.type_params)
        params = self.make_params(d.params, blocks=True)
        d.type = T.PackageType(d.name, tvs, params, params, d, d.annotations)

    def decl_ParserDecl(self, d: ast.ParserDecl) -> None:
        if d.type_params:
            raise self.err(d, "generic parsers are not supported")
        self._block_type(T.ParserType, d, True)
        for local in d.locals:
            self.parents[local] = d
            self.check_declaration(local)
        for s in d.states:
            self.parents[s] = d
        if not any(s.name == "start" for s in d.states):
            raise self.err(d, f"parser {d.name} has no 'start' state")
        saved = (self.in_parser, self.return_type)
        self.in_parser, self.return_type = True, None
        for s in d.states:
            s.type = T.STATE
            for st in s.statements:
                self.stmt(st)
            if s.transition is not None:
                self.check_transition(s.transition)
        self.in_parser, self.return_type = saved

    def decl_ControlDecl(self, d: ast.ControlDecl) -> None:
        if d.type_params:
            raise self.err(d, "generic controls are not supported")
        self._block_type(T.ControlType, d, True)
        saved = self.return_type
        self.return_type = None
        for local in d.locals:
            self.parents[local] = d
            self.check_declaration(local)
        self.return_type = T.VOID
        self.check_block(d.body)
        self.return_type = saved

    def decl_VarDecl(self, d: ast.VarDecl) -> None:
        t = self.resolve_type(d.type_ref)
        if isinstance(t, (T.ExternType, T.BlockType, T.SpecializedType)) or t == T.INT:
            raise self.err(d, f"cannot declare a variable of type {t}")
        d.type = t
        if d.init is not None:
            d.init = self.coerce(self.expr(d.init, t), t, f"initializer of '{d.name}'")

    def decl_ValueSetDecl(self, d: ast.ValueSetDecl) -> None:
        elem = self.resolve_type(d.elem_type)
        self.const_int(d.size, "value_set size")
        d.type = T.SetType(elem)

    def decl_InstanceDecl(self, d: ast.InstanceDecl) -> None:
        if self.in_function is not None:
            raise self.err(d, f"'{d.name}': instantiations cannot be in a function")
        t = self.resolve_type(d.type_ref)
        if isinstance(t, (T.ParserType, T.ControlType)) and d in self.program.declarations:
            raise self.err(d, f"'{d.name}': a {'parser' if isinstance(t, T.ParserType) else 'control'}"
                              f" cannot be instantiated at top level")
        d.type, d.ctor_args, sig, ordered = self.instantiate(t, d.type_ref, d.args, d)
        d.args = [ast.Argument(a, p.name, loc=a.loc) for a, p in zip(ordered, sig.params)]
        self.check_initializer(d)

    def decl_TableDecl(self, d: ast.TableDecl) -> None:
        self.check_table(d)
