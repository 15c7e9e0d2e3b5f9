"""Extern, parser, control and package instantiation: constructor arguments, inferred type
arguments, and an extern instance's initializer block implementing its abstract methods.
"""

from __future__ import annotations

from typing import Any

from p4switch.frontend import ast
from p4switch.frontend import types as T


class Instances:
    """Checking instantiations."""

    def instantiate(self, t: T.P4Type, where: ast.Node, args: list[ast.Argument],
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
            ordered, inferred = self.check_args(sig, args, where, free)
            env.update(inferred)
            inst: T.P4Type = T.ExternType(
                t.extern, tuple(env.get(tv, tv) for tv in t.extern.type_params))
        elif isinstance(t, (T.ParserType, T.ControlType)) and isinstance(
                t.decl, (ast.ParserDecl, ast.ControlDecl)):
            sig = T.FunctionType(t.name, [], t.ctor_params, t, t.decl)
            ordered, _ = self.check_args(sig, args, where, [])
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
            ordered, inferred = self.check_args(sig, args, where, free)
            env.update(inferred)
            missing = [tv.name for tv in pkg.type_params if tv not in env]
            if missing:
                raise self.err(where, f"cannot infer type arguments {', '.join(missing)} of "
                                      f"package {pkg.name}")
            inst = T.SpecializedType(pkg, tuple(env[tv] for tv in pkg.type_params))
            sig = T.substitute(sig, env)
        else:
            raise self.err(where, f"cannot instantiate type {t}")
        for a in ordered:
            if _run_time(a):
                raise self.err(a, "a constructor argument must be a compile-time constant or "
                                  "an instance")
        values = {p.name: self._ctor_value(a) for p, a in zip(sig.params, ordered)}
        return inst, values, sig, ordered

    def _ctor_value(self, e: ast.Expression) -> Any:
        if isinstance(e, ast.MethodCall) and e.kind == "constructor":
            return e
        if isinstance(e, ast.NameRef) and isinstance(e.decl, ast.InstanceDecl):
            return e.decl
        return e.value if e.is_const else e

    def check_initializer(self, d: ast.InstanceDecl) -> None:
        """An extern instance's ``= { ... }`` block must implement exactly its abstract
        methods, with their signatures."""
        ext = d.type.extern if isinstance(d.type, T.ExternType) else None
        abstract = {m.name: m for m in (ext.decl.methods if ext is not None else [])
                    if isinstance(m, ast.MethodDecl) and m.is_abstract}
        if d.initializer and ext is None:
            raise self.err(d, "only extern instances can have an initializer block")
        done = set()
        for f in d.initializer:
            if not isinstance(f, ast.FunctionDecl):
                self.check_declaration(f)
                continue
            m = abstract.get(f.name)
            if m is None:
                raise self.err(f, f"'{f.name}' is not an abstract method of {ext.name}")
            self.check_declaration(f)
            env = d.type.bindings  # the extern's type parameters as this instance binds them
            want = [(p.direction, T.substitute(p.type, env)) for p in m.params]
            got = [(p.direction, p.type) for p in f.params]
            want_ret = T.substitute(m.type.return_type, env)
            if want != got or f.type.return_type != want_ret:
                raise self.err(f, f"'{f.name}' does not match the signature of abstract method "
                                  f"{ext.name}.{f.name}")
            done.add(f.name)
        missing = sorted(set(abstract) - done)
        if missing:
            raise self.err(d, f"{d.name}: abstract method '{missing[0]}' of {ext.name} is not "
                              f"implemented")



def _run_time(e: ast.Expression) -> bool:
    """Whether a constructor argument reads a run-time value: a variable or a parameter with a
    direction (directionless ones are the enclosing block's constructor parameters, known
    when it is instantiated)."""
    return any(isinstance(n, ast.NameRef) and (isinstance(n.decl, ast.VarDecl) or (
        isinstance(n.decl, ast.Parameter) and n.decl.direction is not None)) for n in e.walk())
