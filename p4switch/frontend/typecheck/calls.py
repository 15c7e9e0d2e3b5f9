"""Method, function, action and constructor calls: overload choice, argument order and
directions, type-argument inference by unification, and the built-in methods.
"""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import plural
from p4switch.frontend.typecheck.constfold import SIZE_METHODS


class Calls:
    """Typing calls."""

    def x_MethodCall(self, e: ast.MethodCall, expected):
        explicit = [self.resolve_type(t) for t in e.type_arg_refs]
        target = e.target
        if isinstance(target, ast.TypeExpression):
            t = self.resolve_type(target.type_ref)
            target.type = t
            if isinstance(t, T.ExternType) and any(
                    isinstance(m, ast.MethodDecl) and m.is_abstract for m in t.extern.decl.methods):
                raise self.err(e, f"extern {t.name} has abstract methods: instantiate it with a "
                                  f"declaration that implements them")
            e.kind = "constructor"
            e.decl = target.type_ref.decl if isinstance(target.type_ref, ast.NamedTypeRef) \
                else None
            e.method_name = getattr(t, "name", str(t))
            e.type, e.ctor_args, sig, ordered = self.instantiate(t, e, e.args, None)
            e.args = [ast.Argument(a, p.name, loc=a.loc) for a, p in zip(ordered, sig.params)]
            e.type_args = {}
            e.signature = sig
            return
        if isinstance(target, ast.NameRef):
            found = self.refs.candidates(target)
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
                return self._finish_call(e, sig, [], explicit)
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
                self._finish_call(e, d.type, d.type.type_params, explicit)
                if d.name == "static_assert" and d.loc.file.endswith("core.p4"):
                    self._static_assert(e)
                return
            raise self.err(target, f"'{target.name}' cannot be called")
        if isinstance(target, ast.Member):
            e.target = target = self.expr(target)
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
                return self._finish_call(e, sig, [], explicit)
            if isinstance(ot, (T.HeaderType, T.HeaderUnionType)):
                e.kind = "header_method" if isinstance(ot, T.HeaderType) else "union_method"
                e.decl = None
                if name == "isValid":
                    sig = T.FunctionType(name, [], [], T.BOOL)
                elif name in SIZE_METHODS:
                    return self._finish_call(e, T.FunctionType(name, [], [], T.INT), [], explicit)
                else:
                    if isinstance(ot, T.HeaderUnionType):
                        raise self.err(e, f"header_union has no method '{name}'")
                    self.require_lvalue(obj, f"call {name}() on")
                    sig = T.FunctionType(name, [], [], T.VOID)
                return self._finish_call(e, sig, [], explicit)
            if isinstance(ot, T.StackType):
                self.require_lvalue(obj, f"call {name}() on")
                e.kind, e.decl = "stack_method", None
                sig = T.FunctionType(name, [], [T.Param("count", "in", T.INT)], T.VOID)
                self._finish_call(e, sig, [], explicit)
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
                return self._finish_call(e, sig, [], explicit)
            if isinstance(ot, (T.ControlType, T.ParserType)):
                if name != "apply":
                    raise self.err(e, f"{ot.name} has no method '{name}'")
                if self.in_action is not None:
                    raise self.err(e, f"{ot.name}.apply() cannot be called from an action")
                e.kind = "control_apply" if isinstance(ot, T.ControlType) else "parser_apply"
                e.decl = obj.decl if isinstance(obj, ast.NameRef) else ot.decl
                sig = T.FunctionType("apply", [], ot.params, T.VOID, ot.decl)
                return self._finish_call(e, sig, [], explicit)
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
                self._finish_call(e, sig, free, explicit)
                if e.kind in ("packet_in", "packet_out") and name in ("extract", "emit"):
                    self._check_packet_arg(e, e.args[0].value, name)
                return
            raise self.err(e, f"cannot call '{name}' on a value of type {ot}")
        if isinstance(target, ast.MethodCall):
            raise self.err(e, "the result of a call cannot be called")
        raise self.err(e, "expression cannot be called")

    def _static_assert(self, e: ast.MethodCall) -> None:
        """core.p4's static_assert: a compile error unless its condition folds to true."""
        check = e.args[0].value
        if not check.is_const:
            raise self.err(check, "static_assert needs a compile-time condition")
        if not check.value:
            msg = e.args[1].value.value if len(e.args) > 1 else "static_assert failed"
            raise self.err(e, msg)

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

    def _finish_call(self, e: ast.MethodCall, sig: T.FunctionType,
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
        ordered, inferred = self.check_args(sig, e.args, e, free)
        for a, p in zip(ordered, sig.params):  # a run-time value needs a width (p4c)
            if isinstance(p.type, T.TypeVar) and inferred.get(p.type) == T.INT:
                raise self.err(a, f"could not infer a width for type argument {p.type.name} of "
                                  f"'{e.method_name}'; give the constant a width")
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

    def check_args(self, sig: T.FunctionType, args: list[ast.Argument],
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
                raise self.err(where, f"'{sig.name}' takes {plural(len(params), 'argument')}, got "
                                      f"{len(args)}")
            by_param = dict(enumerate(args))
        for i, p in enumerate(params):
            if i not in by_param and not p.has_default and not p.optional:
                raise self.err(where, f"'{sig.name}' takes {plural(len(params), 'argument')}, got "
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
            v = self.expr(a.value, hint)
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
            if p.direction is not None and (pt == T.STRING or isinstance(pt, T.ExternType)) \
                    and pt != p.type:  # a type argument makes it one
                raise self.err(v, f"'{p.name}': a parameter of type {pt} cannot have a direction")
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

    def check_arg(self, a: ast.Argument, p: T.Param) -> None:
        v = self.expr(a.value, p.type)
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
            if isinstance(at, (T.BlockType, T.TableType, T.SpecializedType)):  # as p4c
                raise self.err(where, f"an argument cannot have type {at}")
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


def _emittable(t: T.P4Type) -> bool:
    if isinstance(t, (T.HeaderType, T.HeaderUnionType)):
        return True
    if isinstance(t, T.StackType):
        return True
    if isinstance(t, T.StructType):
        return all(_emittable(f.type) for f in t.fields)
    return False


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
