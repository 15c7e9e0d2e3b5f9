"""The ``resolve-references`` pass: every name to its declaration, before any typing.

Input: a parsed ``ast.Program``. Output: a ``ReferenceMap`` from each ``NameRef`` (a path
expression: variable, constant, parameter, instance, table, action, function, parser state,
match_kind member) and each ``NamedTypeRef`` (a type name) to the declarations it denotes,
as p4c's ResolveReferences fills its ReferenceMap. Errors: a name not declared (with a near
miss suggested), a name declared twice in one scope, a state named ``accept``/``reject``.

P4 requires declaration before use, so one walk in program order declares each name after the
parts of its declaration that may not see it (a function's body: P4 has no recursion; a
constant's initializer; a struct's fields) and resolves every name where it stands, innermost
scope first, ``.name`` at top level. Members (``h.f``, ``E.A``, ``error.X``, ``t.apply``)
are resolved by type inference: which declaration they mean depends on the type on their left.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from p4switch.frontend import ast
from p4switch.frontend.errors import CompileError, SourceLines
from p4switch.frontend.typecheck.scopes import MatchKindMember, NameResolution, Scope

# Built-in parser states every parser may transition to.
ACCEPT = ast.ParserState("accept")
REJECT = ast.ParserState("reject")


class ReferenceMap:
    """Name (``NameRef``/``NamedTypeRef``) -> the declarations it denotes (more than one for
    overloaded functions and extern methods, in declaration order)."""

    def __init__(self) -> None:
        self._refs: dict[ast.Node, list[Any]] = {}

    def set(self, ref: ast.Node, decls: list[Any]) -> None:
        self._refs[ref] = list(decls)  # overloads declared later are not seen from here

    def decl(self, ref: ast.Node) -> Any:
        """The declaration ``ref`` denotes (the first of an overload set)."""
        return self._refs[ref][0]

    def candidates(self, ref: ast.Node) -> list[Any]:
        return self._refs[ref]

    def __contains__(self, ref: ast.Node) -> bool:
        return ref in self._refs

    def __len__(self) -> int:
        return len(self._refs)

    def items(self) -> Iterator[tuple[ast.Node, list[Any]]]:
        return iter(self._refs.items())

    def copy_tree(self, node: ast.Node) -> ast.Node:
        """A deep copy of ``node`` whose names resolve as the original's do (for a later pass
        that types one expression two ways)."""
        memo: dict[int, Any] = {}
        dup = copy.deepcopy(node, memo)
        for n in node.walk():
            if n in self._refs:
                self._refs[memo[id(n)]] = self._refs[n]
        return dup


class ResolveReferences(NameResolution):
    """The walk that fills a ``ReferenceMap``; ``top`` is the program's top-level scope."""

    def __init__(self, program: ast.Program, sources: SourceLines | None = None) -> None:
        self.program = program
        self.sources = sources
        self.top = Scope()
        self.refs = ReferenceMap()

    def err(self, node: ast.Node | ast.SourceLoc, msg: str) -> CompileError:
        loc = node if isinstance(node, ast.SourceLoc) else node.loc
        return CompileError.at(loc, msg, self.sources)

    def run(self) -> ReferenceMap:
        for d in self.program.declarations:
            self.declaration(d, self.top)
        return self.refs

    # -- names ------------------------------------------------------------------------------
    def name(self, ref: ast.NameRef | ast.NamedTypeRef, scope: Scope) -> None:
        self.refs.set(ref, self.lookup(scope, ref))

    def type_ref(self, tr: ast.TypeRef | None, scope: Scope) -> None:
        if tr is None:
            return
        if isinstance(tr, ast.NamedTypeRef):
            self.name(tr, scope)
            for a in tr.type_args:
                self.type_ref(a, scope)
        elif isinstance(tr, ast.BaseTypeRef):
            self.expr(tr.width, scope)
        elif isinstance(tr, ast.StackTypeRef):
            self.type_ref(tr.elem, scope)
            self.expr(tr.size, scope)
        elif isinstance(tr, ast.TupleTypeRef):
            for e in tr.elems:
                self.type_ref(e, scope)
        elif isinstance(tr, ast.ListTypeRef):
            self.type_ref(tr.elem, scope)

    def expr(self, e: ast.Node | None, scope: Scope) -> None:
        """Resolve the names in an expression (iteratively: generated code nests deeply)."""
        stack = [e] if e is not None else []
        while stack:
            n = stack.pop()
            if isinstance(n, ast.NameRef):
                self.name(n, scope)
            elif isinstance(n, ast.TypeExpression):
                self.type_ref(n.type_ref, scope)
            elif isinstance(n, ast.Cast):
                self.type_ref(n.type_ref, scope)
                stack.append(n.expr)
            elif isinstance(n, ast.StructExpression):
                self.type_ref(n.type_ref, scope)
                stack.extend(f.value for f in reversed(n.fields))
            elif isinstance(n, ast.MethodCall):
                for t in n.type_arg_refs:
                    self.type_ref(t, scope)
                stack.extend(reversed([n.target, *(a.value for a in n.args)]))
            else:
                stack.extend(reversed(list(n.children())))

    # -- declarations -----------------------------------------------------------------------
    def declaration(self, d: ast.Node, scope: Scope) -> None:
        handler = getattr(self, "d_" + type(d).__name__, None)
        if handler is None:
            raise self.err(d, f"unexpected {type(d).__name__} here")
        handler(d, scope)

    def type_params(self, params: list[ast.TypeParam], scope: Scope) -> None:
        for p in params:
            self.declare(scope, p.name, p)

    def params(self, params: list[ast.Parameter], scope: Scope,
               declare_in: Scope | None = None) -> None:
        seen = set()
        for p in params:
            if p.name in seen:
                raise self.err(p, f"duplicate parameter '{p.name}'")
            seen.add(p.name)
            self.type_ref(p.type_ref, scope)
            self.expr(p.default, scope)
            if declare_in is not None:
                self.declare(declare_in, p.name, p)

    def d_ErrorDecl(self, d: ast.ErrorDecl, scope: Scope) -> None:
        pass  # members are reached through the error type (``error.X``)

    def d_MatchKindDecl(self, d: ast.MatchKindDecl, scope: Scope) -> None:
        for m in d.members:
            self.declare(scope, m, MatchKindMember(m, loc=d.loc), d)

    def d_ConstDecl(self, d: ast.ConstDecl, scope: Scope) -> None:
        self.type_ref(d.type_ref, scope)
        self.expr(d.init, scope)
        self.declare(scope, d.name, d)

    def d_VarDecl(self, d: ast.VarDecl, scope: Scope) -> None:
        self.type_ref(d.type_ref, scope)
        self.expr(d.init, scope)
        self.declare(scope, d.name, d)

    def d_TypedefDecl(self, d: ast.TypedefDecl, scope: Scope) -> None:
        self.type_ref(d.type_ref, scope)
        self.declare(scope, d.name, d)

    def _struct_like(self, d: ast.StructLikeDecl, scope: Scope) -> None:
        inner = Scope(scope, scope.owner)
        self.type_params(d.type_params, inner)
        for f in d.fields:
            self.type_ref(f.type_ref, inner)
        self.declare(scope, d.name, d)

    d_HeaderDecl = d_StructDecl = d_HeaderUnionDecl = _struct_like

    def d_EnumDecl(self, d: ast.EnumDecl, scope: Scope) -> None:
        self.type_ref(d.underlying, scope)
        for m in d.members:
            self.expr(m.init, scope)
        self.declare(scope, d.name, d)

    def _function(self, tparams: list[ast.TypeParam], params: list[ast.Parameter],
                  ret: ast.TypeRef | None, scope: Scope, body_scope: Scope | None) -> None:
        self.type_params(tparams, scope)
        self.params(params, scope, body_scope)
        self.type_ref(ret, scope)

    def d_ExternDecl(self, d: ast.ExternDecl, scope: Scope) -> None:
        inner = Scope(scope, d)
        self.type_params(d.type_params, inner)
        self.declare(scope, d.name, d)  # before methods: constructors name the type
        for m in d.methods:
            self._function(m.type_params, m.params, m.return_type, Scope(inner, m), None)

    def d_ExternFunctionDecl(self, d: ast.ExternFunctionDecl, scope: Scope) -> None:
        self._function(d.type_params, d.params, d.return_type, Scope(scope, d), None)
        self.declare(scope, d.name, d)

    def d_FunctionDecl(self, d: ast.FunctionDecl, scope: Scope) -> None:
        body = Scope(scope, d)
        self._function(d.type_params, d.params, d.return_type, body, body)
        self.block(d.body, body)  # before declaring it: P4 has no recursion
        self.declare(scope, d.name, d)

    def d_ActionDecl(self, d: ast.ActionDecl, scope: Scope) -> None:
        body = Scope(scope, d)
        self.params(d.params, body, body)
        self.declare(scope, d.name, d)
        self.block(d.body, body)

    def _block_type(self, d: Any, scope: Scope, with_ctor: bool) -> Scope:
        inner = Scope(scope, d)
        self.type_params(d.type_params, inner)
        self.params(d.params, inner, inner)
        if with_ctor:
            self.params(d.ctor_params, inner, inner)
        return inner

    def d_ParserTypeDecl(self, d: ast.ParserTypeDecl, scope: Scope) -> None:
        self._block_type(d, scope, False)
        self.declare(scope, d.name, d)

    d_ControlTypeDecl = d_ParserTypeDecl

    def d_PackageTypeDecl(self, d: ast.PackageTypeDecl, scope: Scope) -> None:
        inner = Scope(scope, d)
        self.type_params(d.type_params, inner)
        self.params(d.params, inner)
        self.declare(scope, d.name, d)

    def d_ParserDecl(self, d: ast.ParserDecl, scope: Scope) -> None:
        inner = self._block_type(d, scope, True)
        self.declare(scope, d.name, d)
        for local in d.locals:
            self.declaration(local, inner)
        states = Scope(inner, d)
        for s in d.states:
            if s.name in ("accept", "reject"):
                raise self.err(s, f"state '{s.name}' is built in and cannot be declared")
            self.declare(states, s.name, s)
        states.names.setdefault("accept", [ACCEPT])
        states.names.setdefault("reject", [REJECT])
        for s in d.states:
            body = Scope(states, d)
            for st in s.statements:
                self.stmt(st, body)
            if s.transition is not None:
                self.stmt(s.transition, body)

    def d_ControlDecl(self, d: ast.ControlDecl, scope: Scope) -> None:
        inner = self._block_type(d, scope, True)
        self.declare(scope, d.name, d)
        for local in d.locals:
            self.declaration(local, inner)
        self.block(d.body, inner)

    def d_ValueSetDecl(self, d: ast.ValueSetDecl, scope: Scope) -> None:
        self.type_ref(d.elem_type, scope)
        self.expr(d.size, scope)
        self.declare(scope, d.name, d)

    def d_InstanceDecl(self, d: ast.InstanceDecl, scope: Scope) -> None:
        self.type_ref(d.type_ref, scope)
        for a in d.args:
            self.expr(a.value, scope)
        inner = Scope(scope, scope.owner)
        for f in d.initializer:
            self.declaration(f, inner)
        self.declare(scope, d.name, d)

    def d_TableDecl(self, d: ast.TableDecl, scope: Scope) -> None:
        for k in d.key:
            self.expr(k.expr, scope)
        refs = [*d.actions, *([d.default_action] if d.default_action else [])]
        for ref in refs:
            self.action_ref(ref, scope)
        for e in d.entries:
            for k in e.keys:
                self.expr(k, scope)
            self.action_ref(e.action, scope)
            self.expr(e.priority, scope)
            ann = ast.find_annotation(e.annotations, "priority")
            if e.priority is None and ann is not None and ann.args:
                self.expr(ann.args[0], scope)
        for p in d.properties:
            self.expr(p.value, scope)
        self.declare(scope, d.name, d)

    def action_ref(self, ref: ast.ActionRef, scope: Scope) -> None:
        self.name(ref.name, scope)
        for a in ref.args:
            self.expr(a.value, scope)

    # -- statements -------------------------------------------------------------------------
    def block(self, b: ast.BlockStatement, scope: Scope) -> None:
        inner = Scope(scope, scope.owner)
        for s in b.statements:
            self.stmt(s, inner)

    def stmt(self, s: ast.Node, scope: Scope) -> None:
        if isinstance(s, ast.BlockStatement):
            self.block(s, scope)
        elif isinstance(s, ast.IfStatement):
            self.expr(s.cond, scope)
            self.stmt(s.then, Scope(scope, scope.owner))
            if s.else_ is not None:
                self.stmt(s.else_, Scope(scope, scope.owner))
        elif isinstance(s, ast.SwitchStatement):
            self.expr(s.expr, scope)
            for c in s.cases:
                if not isinstance(c.label, ast.DefaultExpr):
                    self.expr(c.label, scope)
                if c.body is not None:
                    self.block(c.body, scope)
        elif isinstance(s, ast.ForStatement):
            inner = Scope(scope, scope.owner)
            for init in s.init:
                self.stmt(init, inner)
            self.expr(s.cond, inner)
            for upd in s.updates:
                self.stmt(upd, inner)
            self.stmt(s.body, Scope(inner, inner.owner))
        elif isinstance(s, ast.ForInStatement):
            inner = Scope(scope, scope.owner)
            self.declaration(s.var, inner)
            self.expr(s.lo, scope)
            self.expr(s.hi, scope)
            self.stmt(s.body, Scope(inner, inner.owner))
        elif isinstance(s, (ast.VarDecl, ast.ConstDecl, ast.InstanceDecl)):
            self.declaration(s, scope)
        elif isinstance(s, ast.TransitionStatement):
            if isinstance(s.target, ast.SelectExpression):
                for e in s.target.exprs:
                    self.expr(e, scope)
                for c in s.target.cases:
                    self.expr(c.keyset, scope)
                    self.name(c.state, scope)
            else:
                self.expr(s.target, scope)
        else:  # assignments, calls, return, exit, break, continue, empty statements
            for child in s.children():
                self.expr(child, scope)


def resolve_references(program: ast.Program, sources: SourceLines | None = None
                       ) -> ResolveReferences:
    """Run the pass alone; returns it (``.refs``, the map; ``.top``, the top-level scope)."""
    r = ResolveReferences(program, sources)
    r.run()
    return r
