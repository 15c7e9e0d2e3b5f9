"""Translate a checked P4-16 program (v1model) into Python source, ``exec`` it once, and
collect the control-plane objects (tables, externs) it uses.

Why generated code: the per-packet path then runs as straight-line Python with locals,
int arithmetic and attribute access, not as a walk over the AST. Design choices:
- every ``bit<W>``/``int<W>`` value is a non-negative int masked to W (two's complement
  pattern for ``int<W>``); bool is bool; error is its code; enum is its member name;
- headers/structs/unions are generated classes (codegen.TypeClasses);
- a parser is one function: a loop over numbered states, ``d`` the packet bytes and ``o``
  the byte offset as locals;
- a control (per instance) is one function; actions are inlined where a table or a direct
  call runs them (a ``return`` in an action becomes ``break`` out of a one-shot loop);
  tables are runtime ``Table`` objects whose ``apply`` returns the action index and args;
- copy-in/copy-out: aggregates are passed by reference, scalar out/inout parameters are
  returned and assigned back by the caller.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from p4rt.entries import ActionCall, EntryError, Exact, Lpm, MatchKind, Optional, Range, TableEntry, Ternary
from p4switch.exec import hashes, runtime
from p4switch.exec.bits import bytes_of_bits, div_s, mod_s, sat_add_s, sat_sub_s, shr_s, to_signed
from p4switch.exec.codegen import Lines, TypeClasses, attr, is_aggregate, is_signed, scalar_width, underlying
from p4switch.exec.externs import Counter, DirectCounter, DirectMeter, Meter, Register, ValueSet
from p4switch.exec.tables import (
    DEFAULT_ONLY,
    TABLE_AND_DEFAULT,
    TABLE_ONLY,
    ActionInfo,
    ActionProfile,
    KeyField,
    Table,
)
from p4switch.frontend import ast as A
from p4switch.frontend import types as T
from p4switch.frontend.pretty import expr_text

PARSER_LOOP_LIMIT = 1024

# generated code that names a value already computed: a literal or a temporary (``_r4[0]``)
_STABLE = re.compile(r"-?\d+|True|False|None|_[A-Za-z]\w*(\[\d+\])?")


class UnsupportedError(ValueError):
    """A construct the executor does not implement; raised at load time with a location."""

    def __init__(self, node: A.Node | None, message: str) -> None:
        loc = getattr(node, "loc", None)
        super().__init__(f"{loc}: {message}" if loc else message)


@dataclass
class Compiled:
    """What the compiler hands to LoadedProgram."""

    source: str
    namespace: dict
    stages: dict[str, Callable]
    hdr_cls: type
    meta_cls: type
    sm_cls: type
    tables: dict[str, Table] = field(default_factory=dict)
    action_profiles: dict[str, ActionProfile] = field(default_factory=dict)
    counters: dict[str, Any] = field(default_factory=dict)
    meters: dict[str, Any] = field(default_factory=dict)
    registers: dict[str, Register] = field(default_factory=dict)
    value_sets: dict[str, ValueSet] = field(default_factory=dict)
    actions: dict[str, ActionInfo] = field(default_factory=dict)
    field_lists: dict[int, list[tuple[str, ...]]] = field(default_factory=dict)
    error_codes: dict[str, int] = field(default_factory=dict)


def _const_value(v: Any) -> Any:
    """A folded constructor argument value as a plain Python value."""
    if isinstance(v, A.Expression):
        return v.value
    return v


def _dynamic_indices(e: A.Expression) -> list[A.ArrayIndex]:
    """Header-stack indices of an l-value known only at run time, in evaluation order."""
    if isinstance(e, (A.Member, A.Slice)):
        return _dynamic_indices(e.expr)
    if isinstance(e, A.ArrayIndex):
        found = _dynamic_indices(e.expr)
        if not isinstance(underlying(e.expr.type), T.TupleType) and not (
                e.index.is_const and e.index.value is not None):
            found.append(e)
        return found
    return []


def _root_decl(e: A.Expression) -> Any:
    """The variable or parameter an l-value is part of (``h`` for ``h.s[i].f``)."""
    while isinstance(e, (A.Member, A.ArrayIndex, A.Slice)):
        e = e.expr
    return e.decl if isinstance(e, A.NameRef) else None


def _names_used(ad: A.ActionDecl) -> set[int]:
    """ids of the declarations an action's body (and the actions it calls) refers to."""
    used: set[int] = set()
    todo, seen = [ad], set()
    while todo:
        a = todo.pop()
        if id(a) in seen:
            continue
        seen.add(id(a))
        for n in a.body.walk():
            if isinstance(n, A.NameRef) and n.decl is not None:
                used.add(id(n.decl))
            elif isinstance(n, A.MethodCall) and n.kind == "action" and isinstance(n.decl, A.ActionDecl):
                todo.append(n.decl)
    return used


def _has_ann(decl: Any, name: str) -> bool:
    return A.find_annotation(getattr(decl, "annotations", None) or [], name) is not None


class _Scope:
    """Names of one generated Python function: P4 declaration -> Python identifier."""

    def __init__(self, parent: "_Scope | None" = None) -> None:
        self.names: dict[int, str] = {} if parent is None else dict(parent.names)
        self.counter = parent.counter if parent else itertools.count()

    def bind(self, decl: Any, hint: str) -> str:
        name = f"v{next(self.counter)}_{hint}"
        self.names[id(decl)] = name
        return name

    def tmp(self, hint: str = "t") -> str:
        return f"_{hint}{next(self.counter)}"

    def get(self, decl: Any) -> str | None:
        return self.names.get(id(decl))

    packet_out: str | None = None


@dataclass
class _BlockRef:
    """A parser/control instance passed as a constructor argument: its generated function."""

    fname: str
    decl: Any


class ProgramCompiler:
    def __init__(self, checked: Any) -> None:
        self.checked = checked
        self.program: A.Program = checked.program
        self.out = Lines()
        et = self.program.error_type
        self.errors = {n: i for i, n in enumerate(et.members)} if et else {}
        for n in ("NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
                  "ParserTimeout", "ParserInvalidArgument"):
            self.errors.setdefault(n, len(self.errors))
        self.types = TypeClasses(Lines(), self.errors)
        self.ns: dict[str, Any] = {
            "ParserError": runtime.ParserError,
            "ExitControl": runtime.ExitControl,
            "AssertionFailed": runtime.AssertionFailed,
            "Stack": runtime.Stack,
            "assign_into": runtime.assign_into,
            "pack_bits": bytes_of_bits,
            "_s": to_signed,
            "sat_add_s": sat_add_s,
            "sat_sub_s": sat_sub_s,
            "shr_s": shr_s,
            "div_s": div_s,
            "mod_s": mod_s,
            "hash_with_base": hashes.hash_with_base,
        }
        self.objects: dict[int, str] = {}  # id(InstanceDecl or TableDecl) -> namespace name
        self.obj_counter = itertools.count()
        self.result = Compiled("", self.ns, {}, object, object, object, error_codes=self.errors)
        self.action_names: dict[int, str] = {}
        self.functions: dict[int, tuple[str, list[A.Parameter], bool]] = {}
        self.generated_blocks: dict[tuple[int, str], str] = {}
        # (id(constructor parameter), prefix of the block instance) -> the block passed to it
        self.block_params: dict[tuple[int, str], _BlockRef] = {}
        self.table_actions: dict[int, list[A.ActionDecl]] = {}
        # table -> action -> arguments of its directional parameters (``a(meta)`` in the list)
        self.table_action_args: dict[int, dict[int, list[A.Expression]]] = {}
        # field lists of old-style resubmit(data)/recirculate(data)/clone3(t, s, data): ids
        # -2, -3, ... (-1 is "no list"), merged with the @field_list ones
        self.data_field_lists: dict[int, list[tuple[str, ...]]] = {}

    # ---- names ---------------------------------------------------------------------------
    def cp_name(self, decl: Any, prefix: str) -> str:
        """P4Info name of ``decl`` inside the block at instance path ``prefix`` ("" at top
        level). The front end owns the rule, so P4Info and the executor always agree; only an
        instance made up here for an inline ``implementation = action_selector(...)`` has no
        enclosing block the front end knows of."""
        if prefix and self.checked.enclosing_block(decl) is None:
            return f"{prefix}.{decl.name}"
        return self.checked.control_plane_name(decl, prefix or None)

    def add_object(self, obj: Any, hint: str) -> str:
        name = f"O{next(self.obj_counter)}_{''.join(c if c.isalnum() else '_' for c in hint)}"
        self.ns[name] = obj
        return name

    # ---- entry point -----------------------------------------------------------------------
    def compile(self) -> Compiled:
        pipeline = self.checked.pipeline
        stages = {}
        for decl in self.program.declarations:
            if isinstance(decl, A.ActionDecl):
                self.action_names[id(decl)] = self.cp_name(decl, "")
                self.action_info(decl, "")
            elif isinstance(decl, A.InstanceDecl):
                self.instantiate(decl, "")
        for decl in self.program.declarations:
            if isinstance(decl, A.FunctionDecl):
                self.gen_function(decl)
        order = ["parser", "verify_checksum", "ingress", "egress", "compute_checksum", "deparser"]
        for stage in order:
            decl = pipeline[stage]
            if isinstance(decl, A.InstanceDecl):
                decl = decl.type.decl if hasattr(decl.type, "decl") else decl
            prefix = self.checked.control_plane_name(decl)
            if isinstance(decl, A.ParserDecl):
                stages[stage] = self.gen_parser(decl, prefix)
            else:
                stages[stage] = self.gen_control(decl, prefix)
        pdecl = pipeline["parser"]
        if isinstance(pdecl, A.InstanceDecl):
            pdecl = pdecl.type.decl
        ptypes = [p.type for p in pdecl.params]
        hdr_t, meta_t, sm_t = (underlying(t) for t in ptypes[1:4])
        hdr_c, meta_c, sm_c = self.types.cls(hdr_t), self.types.cls(meta_t), self.types.cls(sm_t)
        self.result.field_lists = self._field_lists(meta_t)
        src = self.types.out.text() + self.out.text()
        self.result.source = src
        code = compile(src, "<p4-generated>", "exec")
        exec(code, self.ns)
        self.result.stages = {k: self.ns[v] for k, v in stages.items()}
        self.result.hdr_cls, self.result.meta_cls, self.result.sm_cls = (
            self.ns[hdr_c], self.ns[meta_c], self.ns[sm_c])
        return self.result

    def _field_lists(self, meta_t: T.P4Type) -> dict[int, list[tuple[str, ...]]]:
        out: dict[int, list[tuple[str, ...]]] = {}

        def walk(t: T.P4Type, path: tuple[str, ...]) -> None:
            if not isinstance(t, T.StructLikeType):
                return
            for f in t.fields:
                p = path + (attr(f.name),)
                for a in f.annotations:
                    if a.name == "field_list":
                        for arg in a.args:
                            if arg.value is not None:
                                out.setdefault(int(arg.value), []).append(p)
                if isinstance(underlying(f.type), T.StructType):
                    walk(underlying(f.type), p)

        walk(meta_t, ())
        out.update(self.data_field_lists)
        return out

    def data_field_list(self, data: A.Expression) -> int | None:
        """The metadata fields an old-style ``resubmit(data)``/``recirculate(data)``/
        ``clone3(type, session, data)`` names, as a field list: BMv2 preserves them, the way
        p4c's back end turns the list into a field list (other items are left out, as p4c
        warns). A whole struct stands for all its fields."""
        pdecl = self.checked.pipeline["parser"]
        if isinstance(pdecl, A.InstanceDecl):
            pdecl = pdecl.type.decl
        meta_t = underlying(pdecl.params[2].type)
        paths: list[tuple[str, ...]] = []

        def leaves(t: T.P4Type, path: tuple[str, ...]) -> None:
            if isinstance(t, T.StructType):
                for f in t.fields:
                    leaves(underlying(f.type), path + (attr(f.name),))
            elif path:
                paths.append(path)

        for item in data.items if isinstance(data, A.ListExpression) else [data]:
            names: list[str] = []
            x = item
            while isinstance(x, A.Member):
                names.insert(0, attr(x.name))
                x = x.expr
            if isinstance(x, A.NameRef) and isinstance(x.decl, A.Parameter) and \
                    underlying(x.decl.type) is meta_t:
                leaves(underlying(item.type), tuple(names))
        if not paths:
            return None
        fid = -2 - len(self.data_field_lists)
        self.data_field_lists[fid] = paths
        return fid

    # ---- instances -------------------------------------------------------------------------
    def instantiate(self, decl: A.InstanceDecl, prefix: str, name: str | None = None) -> None:
        """``name`` overrides the control-plane name (inline table-property instances)."""
        t = decl.type
        if not isinstance(t, T.ExternType):
            return  # sub-parsers / sub-controls are generated where they are applied
        name = name or self.cp_name(decl, prefix)
        args = {k: _const_value(v) for k, v in (decl.ctor_args or {}).items()}
        kind = t.name

        def arg(*names: str, default: Any = None) -> Any:
            for n in names:
                if n in args:
                    return args[n]
            vals = list(args.values())
            return vals[0] if vals and default is None else default

        obj: Any
        if kind == "register":
            width = t.type_args[0].bit_width() if t.type_args else 32
            obj = Register(name, int(arg("size")), width)
            self.result.registers[name] = obj
        elif kind == "counter":
            obj = Counter(name, int(arg("size")), self._enum_name(args.get("type", "packets")))
            self.result.counters[name] = obj
        elif kind == "direct_counter":
            obj = DirectCounter(name, self._enum_name(args.get("type", "packets")))
            self.result.counters[name] = obj
        elif kind == "meter":
            obj = Meter(name, int(arg("size")), self._enum_name(args.get("type", "packets")))
            self.result.meters[name] = obj
        elif kind == "direct_meter":
            obj = DirectMeter(name, self._enum_name(args.get("type", "packets")))
            self.result.meters[name] = obj
        elif kind == "action_profile":
            obj = ActionProfile(name, int(arg("size")), {})
            self.result.action_profiles[name] = obj
        elif kind == "action_selector":
            algo = self._enum_name(args.get("algorithm", "crc16"))
            obj = ActionProfile(name, int(args.get("size", 1024)), {},
                                selector_hash=hashes.algorithm(algo))
            self.result.action_profiles[name] = obj
        else:
            obj = None  # Checksum16 and unknown externs: no state
        self.objects[id(decl)] = self.add_object(obj, name)

    @staticmethod
    def _enum_name(v: Any) -> str:
        if isinstance(v, str):
            return v.split(".")[-1]
        return str(getattr(v, "name", v))

    # ---- functions -------------------------------------------------------------------------
    def gen_function(self, decl: A.FunctionDecl) -> None:
        name = f"F{next(self.obj_counter)}_{decl.name}"
        scope = _Scope()
        pnames = [scope.bind(p, p.name) for p in decl.params]
        outs = [scope.get(p) for p in decl.params
                if p.direction in ("out", "inout") and not is_aggregate(underlying(p.type))]
        has_ret = not isinstance(getattr(decl.return_type, "type", T.VOID) or T.VOID, T.VoidType)
        self.functions[id(decl)] = (name, decl.params, has_ret)
        o = Lines()
        o(f"def {name}({', '.join(pnames + ['ctx'])}):")
        with o.indent():
            g = _Gen(self, scope, o, prefix="", outs=outs, has_ret=has_ret)
            for p in decl.params:  # an aggregate out arrives fresh from the caller
                if p.direction == "out" and not is_aggregate(underlying(p.type)):
                    o(f"{scope.get(p)} = {self.types.default(p.type)}")
            g.block(decl.body)
            g.ret_stmt(None)
        o("")
        self.out.lines.extend(o.lines)

    # ---- parsers ---------------------------------------------------------------------------
    def gen_parser(self, decl: A.ParserDecl, prefix: str, ctor_args: dict | None = None) -> str:
        key = (id(decl), prefix)
        if key in self.generated_blocks:
            return self.generated_blocks[key]
        name = f"P{next(self.obj_counter)}_{decl.name}"
        self.generated_blocks[key] = name
        scope = _Scope()
        params = [p for p in decl.params]
        pnames = []
        for p in params:
            if isinstance(p.type, T.ExternType) and p.type.name == "packet_in":
                scope.names[id(p)] = "<pkt>"
                continue
            pnames.append(scope.bind(p, p.name))
        for loc in decl.locals:
            if isinstance(loc, A.InstanceDecl):
                self.instantiate(loc, prefix)
            elif isinstance(loc, A.ValueSetDecl):
                width = scalar_width(loc.elem_type.type)
                if width is None:
                    raise UnsupportedError(loc, "value_set of a struct type is not supported")
                vs = ValueSet(self.cp_name(loc, prefix), int(loc.size.value), width)
                self.result.value_sets[vs.name] = vs
                self.objects[id(loc)] = self.add_object(vs, vs.name)
        states = {s.name: i for i, s in enumerate(decl.states)}
        o = Lines()
        outs = [scope.get(p) for p in params
                if p.direction in ("out", "inout") and not is_aggregate(underlying(p.type))
                and scope.get(p) != "<pkt>"]
        o(f"def {name}(d, o, {', '.join(pnames + ['ctx'])}):")
        with o.indent():
            g = _Gen(self, scope, o, prefix=prefix, outs=outs)
            self.bind_ctor_params(decl, scope, o, ctor_args, prefix)
            for loc in decl.locals:
                if isinstance(loc, A.VarDecl):
                    g.var_decl(loc)
            o(f"st = {states.get('start', 0)}")
            o("loops = 0")
            o("try:")
            with o.indent():
                o("while True:")
                with o.indent():
                    for i, s in enumerate(decl.states):
                        o(("if" if i == 0 else "elif") + f" st == {i}:")
                        g.state_index = i
                        with o.indent():
                            for stmt in s.statements:
                                g.stmt(stmt)
                            g.transition(s.transition, states)
                    o("else:")
                    with o.indent():
                        # a sub-parser's scalar out/inout parameters come back after the offset
                        o("return " + (f"(o, {', '.join(outs)},)" if outs else "o"))
            o("except ParserError as e:")
            with o.indent():
                o("if e.off is None: e.off = o")
                o("raise")
        o("")
        self.out.lines.extend(o.lines)
        return name

    # ---- controls --------------------------------------------------------------------------
    def bind_ctor_params(self, decl: Any, scope: _Scope, out: Lines, ctor_args: dict | None,
                         prefix: str) -> None:
        """Constructor parameters of a parser/control instance become constants (or the
        instance passed) inside its generated function."""
        for p in getattr(decl, "ctor_params", []) or []:
            v = _const_value((ctor_args or {}).get(p.name, p.default))
            if isinstance(v, A.InstanceDecl) and id(v) in self.objects:
                scope.names[id(p)] = self.objects[id(v)]
                continue
            if isinstance(v, _BlockRef):  # a parser/control instance: `c.apply()` calls it
                self.block_params[(id(p), prefix)] = v
                continue
            if isinstance(v, bool) or isinstance(v, int):
                w = scalar_width(p.type)
                name = scope.bind(p, p.name)
                out(f"{name} = {v if isinstance(v, bool) or w is None else int(v) & ((1 << w) - 1)!r}")
                continue
            raise UnsupportedError(decl, f"constructor parameter {p.name} of {decl.name} must be a constant")

    def gen_control(self, decl: A.ControlDecl, prefix: str, ctor_args: dict | None = None) -> str:
        key = (id(decl), prefix)
        if key in self.generated_blocks:
            return self.generated_blocks[key]
        name = f"K{next(self.obj_counter)}_{decl.name}"
        self.generated_blocks[key] = name
        scope = _Scope()
        pnames = []
        for p in decl.params:
            if isinstance(p.type, T.ExternType) and p.type.name == "packet_out":
                pnames.append(scope.bind(p, "out"))
                scope.packet_out = pnames[-1]
                continue
            pnames.append(scope.bind(p, p.name))
        outs = [scope.get(p) for p in decl.params
                if p.direction in ("out", "inout") and not is_aggregate(underlying(p.type))]
        for loc in decl.locals:
            if isinstance(loc, A.ActionDecl):
                self.action_names[id(loc)] = self.cp_name(loc, prefix)
                self.action_info(loc, prefix)
            elif isinstance(loc, A.InstanceDecl):
                self.instantiate(loc, prefix)
        for loc in decl.locals:
            if isinstance(loc, A.TableDecl):
                self.build_table(loc, prefix)
        # sub-blocks are generated before this function's text
        body = Lines()
        body.depth = 1
        g = _Gen(self, scope, body, prefix=prefix, outs=outs)
        self.bind_ctor_params(decl, scope, body, ctor_args, prefix)
        for loc in decl.locals:
            if isinstance(loc, A.VarDecl):
                g.var_decl(loc)
        g.block(decl.body)
        g.ret_stmt(None)
        o = self.out
        o(f"def {name}({', '.join(pnames + ['ctx'])}):")
        o.lines.extend(body.lines)
        o("")
        return name

    def sub_block(self, inst: A.InstanceDecl, prefix: str) -> tuple[str, Any]:
        t = inst.type
        decl = t.decl if hasattr(t, "decl") and t.decl is not None else None
        if decl is None and isinstance(t, T.SpecializedType):
            decl = t.base.decl
        if decl is None:
            raise UnsupportedError(inst, f"cannot resolve the block type of {inst.name}")
        args = dict(inst.ctor_args or {})
        for k, v in args.items():  # an instance of a block declared beside this one
            v = _const_value(v)
            if isinstance(v, A.InstanceDecl) and isinstance(v.type, (T.ControlType, T.ParserType)):
                args[k] = _BlockRef(*self.sub_block(v, prefix))
        return self.gen_block(decl, self.cp_name(inst, prefix), args), decl

    def gen_block(self, decl: A.ParserDecl | A.ControlDecl, prefix: str, ctor_args: dict | None) -> str:
        if isinstance(decl, A.ParserDecl):
            return self.gen_parser(decl, prefix, ctor_args)
        return self.gen_control(decl, prefix, ctor_args)

    def applied_block(self, c: A.MethodCall, prefix: str) -> tuple[str, Any]:
        """The generated function and declaration of the block ``c`` (an ``apply`` call) runs:
        a local instance, a constructor parameter bound to an instance, or ``T.apply()`` of a
        type, which p4c turns into an instance named after the type in the calling block."""
        d = c.decl
        if isinstance(d, (A.ParserDecl, A.ControlDecl)):
            return self.gen_block(d, f"{prefix}.{d.name}", None), d
        if (id(d), prefix) in self.block_params:
            ref = self.block_params[(id(d), prefix)]
            return ref.fname, ref.decl
        if not isinstance(d, A.InstanceDecl):
            d = getattr(c.target.expr, "decl", None)
        if not isinstance(d, A.InstanceDecl):
            raise UnsupportedError(c, f"cannot resolve the {c.target.expr} being applied")
        return self.sub_block(d, prefix)

    # ---- tables ----------------------------------------------------------------------------
    def build_table(self, decl: A.TableDecl, prefix: str) -> None:
        name = self.cp_name(decl, prefix)
        key = []
        for k in decl.key:
            # an error is its code, 32 bits wide in BMv2
            width = 32 if isinstance(underlying(k.expr.type), T.ErrorType) else scalar_width(k.expr.type)
            if width is None:
                raise UnsupportedError(k.expr, f"a table key of type {k.expr.type} is not supported")
            key.append(KeyField(self.checked.key_name(k), MatchKind(k.match_kind), width))
        action_decls: list[A.ActionDecl] = []
        scopes: dict[str, str] = {}
        for ref in decl.actions:
            ad = ref.decl
            action_decls.append(ad)
            an = self.action_name(ad, prefix)
            if _has_ann(ref, "tableonly"):
                scopes[an] = TABLE_ONLY
            elif _has_ann(ref, "defaultonly"):
                scopes[an] = DEFAULT_ONLY
            else:
                scopes[an] = TABLE_AND_DEFAULT
        if decl.default_action is not None:
            default_decl = decl.default_action.decl
            default_call = self.action_call(decl.default_action, prefix)
        else:
            default_decl = self._noaction()
            default_call = ActionCall("NoAction", {})
        if default_decl is not None and all(a is not default_decl for a in action_decls):
            # the implicit NoAction default: p4c adds it to the actions as @defaultonly
            action_decls.append(default_decl)
            scopes[self.action_name(default_decl, prefix)] = DEFAULT_ONLY
        infos = [self.action_info(a, prefix) for a in action_decls]
        size_p = decl.prop("size")
        size = int(size_p.value.value) if size_p is not None and size_p.value.value is not None else 1024
        impl = self._prop_object(decl, "implementation", prefix)
        if decl.prop("implementation") is not None and not isinstance(impl, ActionProfile):
            raise UnsupportedError(decl.prop("implementation"), "a v1model table implementation "
                                   "must be an action_profile or action_selector")
        dcounter = self._prop_object(decl, "counters", prefix)
        dmeter = self._prop_object(decl, "meters", prefix)
        if isinstance(impl, ActionProfile):
            for info in infos:
                impl.actions[info.name] = info
        if isinstance(dcounter, DirectCounter):
            dcounter.table = name
        if isinstance(dmeter, DirectMeter):
            dmeter.table = name
        table = Table(
            name, key, infos, size, default_call,
            default_is_const=decl.default_action_const,
            is_const=decl.entries_const,
            scopes=scopes,
            implementation=impl if isinstance(impl, ActionProfile) else None,
            direct_counter=dcounter if isinstance(dcounter, DirectCounter) else None,
            direct_meter=dmeter if isinstance(dmeter, DirectMeter) else None,
            support_timeout=self._bool_prop(decl, "support_timeout"),
        )
        n = len(decl.entries)
        for i, ent in enumerate(decl.entries):
            match = {}
            for kf, kexpr in zip(key, ent.keys):
                m = self._entry_match(kf, kexpr)
                if m is not None:
                    match[kf.name] = m
            prio = 0
            if table.needs_priority:
                prio = ent.match_priority if ent.match_priority is not None else n - i
            try:
                table.insert_const(TableEntry(match, self.action_call(ent.action, prefix), prio))
            except EntryError as e:  # a duplicate, a priority missing, bits beyond an lpm prefix
                raise UnsupportedError(ent, f"entry {i + 1} of table {decl.name}: {e}") from None
        self.result.tables[name] = table
        self.objects[id(decl)] = self.add_object(table, name)
        self.ns[self.objects[id(decl)] + "_apply"] = table.apply
        self.table_actions[id(decl)] = action_decls
        self.table_action_args[id(decl)] = {
            id(ref.decl): [a.value for a in ref.args] for ref in decl.actions if ref.args}
        if decl.default_action is not None and decl.default_action.decl is not None:
            dref = decl.default_action
            n_dir = sum(1 for p in dref.decl.params if p.direction is not None)
            if n_dir and id(dref.decl) not in self.table_action_args[id(decl)]:
                self.table_action_args[id(decl)][id(dref.decl)] = [a.value for a in dref.args[:n_dir]]

    @staticmethod
    def _bool_prop(decl: A.TableDecl, name: str) -> bool:
        """A table property such as ``support_timeout = true`` (absent: false)."""
        prop = decl.prop(name)
        return bool(prop is not None and prop.value.value)

    def _noaction(self) -> A.ActionDecl | None:
        for d in self.program.declarations:
            if isinstance(d, A.ActionDecl) and d.name == "NoAction":
                return d
        return None

    def _entry_match(self, kf: KeyField, e: A.Expression):
        full = (1 << kf.width) - 1
        if isinstance(e, (A.DontCare, A.DefaultExpr)):
            return None
        if isinstance(e, A.Mask):
            v, m = int(e.value_expr.value) & full, int(e.mask.value) & full
            if kf.match_kind == MatchKind.LPM:
                plen = bin(m).count("1")
                return Lpm(v & m, plen)
            return Ternary(v & m, m)
        if isinstance(e, A.Range):
            return Range(int(e.low.value) & full, int(e.high.value) & full)
        v = e.value
        if isinstance(v, bool):
            v = int(v)
        elif isinstance(v, str):  # error.X
            v = self.errors[v.split(".")[-1]]
        v = int(v) & full
        if kf.match_kind == MatchKind.OPTIONAL:
            return Optional(v)
        return Exact(v)

    def _prop_object(self, decl: A.TableDecl, prop: str, prefix: str) -> Any:
        p = decl.prop(prop)
        if p is None:
            return None
        v = p.value
        if isinstance(v, A.NameRef) and isinstance(v.decl, A.InstanceDecl):
            name = self.objects.get(id(v.decl))
            if name is None:
                self.instantiate(v.decl, prefix)
                name = self.objects[id(v.decl)]
            return self.ns[name]
        if isinstance(v, A.MethodCall):  # inline instantiation: implementation = action_selector(...)
            inst = A.InstanceDecl(f"{decl.name}_{prop}", None, loc=v.loc)
            inst.annotations = []
            inst.type = v.type
            sig = v.signature
            inst.ctor_args = {p.name: a.value.value for p, a in zip(sig.params, v.args)} if sig else {}
            # the property's @name, as in P4Info; an unnamed one (which p4c will not expose
            # over P4Runtime) keeps the made-up "<table>_<property>"
            self.instantiate(inst, prefix, self.checked.inline_instance_name(p))
            return self.ns[self.objects[id(inst)]]
        raise UnsupportedError(p, f"table property {prop} must name an instance")

    def action_name(self, ad: A.ActionDecl, prefix: str) -> str:
        n = self.action_names.get(id(ad))
        if n is None:
            n = self.action_names[id(ad)] = self.cp_name(ad, prefix)
        return n

    def action_info(self, ad: A.ActionDecl, prefix: str) -> ActionInfo:
        name = self.action_name(ad, prefix)
        info = self.result.actions.get(name)
        if info is None:
            params = tuple((self.checked.control_plane_name(p), scalar_width(p.type) or 1)
                           for p in ad.params if p.direction is None)
            info = self.result.actions[name] = ActionInfo(name, params)
        return info

    def action_call(self, ref: A.ActionRef, prefix: str) -> ActionCall:
        ad = ref.decl
        cp = [p for p in ad.params if p.direction is None]
        vals = {}
        data_args = ref.args[len(ad.params) - len(cp):] if len(ref.args) > len(cp) else ref.args
        for p, a in zip(cp, data_args):
            v = a.value.value
            if isinstance(v, bool):
                v = int(v)
            vals[self.checked.control_plane_name(p)] = int(v) & ((1 << (scalar_width(p.type) or 1)) - 1)
        return ActionCall(self.action_name(ad, prefix), vals)


class _Gen:
    """Statement and expression generation inside one Python function."""

    def __init__(self, pc: ProgramCompiler, scope: _Scope, out: Lines, prefix: str,
                 outs: list[str], has_ret: bool = False) -> None:
        self.pc = pc
        self.scope = scope
        self.o = out
        self.prefix = prefix
        self.outs = outs
        self.has_ret = has_ret
        self.in_action = 0
        # per inlined action with a return: [return-flag variable, enclosing loops]; a return
        # inside a loop sets the flag and leaves each loop, then the action's own block
        self.action_returns: list[list] = []
        self.state_index = 0
        self.pre: list[str] = []
        # per inlined action being generated: its copy-outs, which an `exit` also performs
        self.exit_copy_outs: list[list[tuple[A.Expression, str]]] = []
        # id(ArrayIndex) -> temporary holding its index, read before the right-hand side
        self.fixed_index: dict[int, str] = {}

    # ---- statements ------------------------------------------------------------------------
    def flush(self) -> None:
        """Emit the pending side-effect statements (cleared in place: callers may hold the list)."""
        for line in self.pre:
            self.o(line)
        self.pre.clear()

    def block(self, b: A.Node | None) -> None:
        n = len(self.o.lines)
        if b is None:
            pass
        elif isinstance(b, A.BlockStatement):
            for s in b.statements:
                self.stmt(s)
        else:
            self.stmt(b)
        if len(self.o.lines) == n:
            self.o("pass")

    def var_decl(self, d: A.VarDecl) -> None:
        name = self.scope.bind(d, d.name)
        if d.init is not None:
            v = self.rvalue_copy(d.init)
            self.flush()
            self.o(f"{name} = {v}")
        else:
            self.o(f"{name} = {self.pc.types.default(d.type)}")

    def stmt(self, s: A.Node) -> None:
        o = self.o
        if isinstance(s, A.BlockStatement):
            self.block(s)
        elif isinstance(s, A.VarDecl):
            self.var_decl(s)
        elif isinstance(s, (A.ConstDecl, A.EmptyStatement)):
            pass
        elif isinstance(s, A.AssignmentStatement):
            self.assign(s.lhs, s.rhs, s.compound)
        elif isinstance(s, A.MethodCallStatement):
            self.call_stmt(s.call)
        elif isinstance(s, A.IfStatement):
            c = self.expr(s.cond)
            self.flush()
            o(f"if {c}:")
            with o.indent():
                self.block(s.then)
            if s.else_ is not None:
                o("else:")
                with o.indent():
                    self.block(s.else_)
        elif isinstance(s, A.SwitchStatement):
            self.switch(s)
        elif isinstance(s, A.ReturnStatement):
            v = self.expr(s.value) if s.value is not None else None
            self.flush()
            self.ret_stmt(v)
        elif isinstance(s, A.ExitStatement):
            for outs in reversed(self.exit_copy_outs):  # exit still copies out (P4-16 12.5)
                for a, n in outs:
                    self.store(a, n)
            o("raise ExitControl()")
        elif isinstance(s, (A.ForStatement, A.ForInStatement)):
            self.loop(s)
        elif isinstance(s, A.BreakStatement):
            o("break")
        elif isinstance(s, A.ContinueStatement):
            o("continue")
        else:
            raise UnsupportedError(s, f"statement {type(s).__name__} is not supported")

    def loop(self, s: A.ForStatement | A.ForInStatement) -> None:
        """A P4 for loop as a Python loop. C-style loops run their updates at the top of
        every pass but the first, so that ``continue`` (a Python continue) still runs them."""
        o = self.o
        if isinstance(s, A.ForInStatement):
            var = self.scope.bind(s.var, s.var.name)
            lo = self.expr(s.lo)
            if s.hi is not None:
                hi = self.expr(s.hi)
                self.flush()
                o(f"for {var} in range({lo}, {hi} + 1):")
            elif isinstance(s.lo, A.ListExpression):
                self.flush()
                o(f"for {var} in ({''.join(self.expr(e) + ', ' for e in s.lo.items)}):")
            elif isinstance(underlying(s.lo.type), T.StackType):  # each element, as a copy
                self.flush()
                o(f"for {var} in [x.copy() for x in {lo}.h]:")
            else:
                raise UnsupportedError(s.lo, "for-in over this collection is not supported")
        else:
            for st in s.init:
                self.stmt(st)
            first = self.scope.tmp("first")
            o(f"{first} = True")
            o("while True:")
            with o.indent():
                if s.updates:
                    o(f"if not {first}:")
                    with o.indent():
                        for st in s.updates:
                            self.stmt(st)
                o(f"{first} = False")
                if s.cond is not None:
                    c = self.expr(s.cond)
                    self.flush()
                    o(f"if not ({c}): break")
        if self.action_returns:
            self.action_returns[-1][1] += 1
        with o.indent():
            self.block(s.body)
        if self.action_returns:
            self.action_returns[-1][1] -= 1
            o(f"if {self.action_returns[-1][0]}: break")

    def ret_stmt(self, value: str | None) -> None:
        if self.in_action:
            if self.action_returns and self.action_returns[-1][1]:
                self.o(f"{self.action_returns[-1][0]} = True")
            self.o("break")
            return
        items = ([value or "None"] if self.has_ret else []) + self.outs
        if not items:
            self.o("return")
        elif len(items) == 1 and self.has_ret:
            self.o(f"return {items[0]}")
        else:
            self.o(f"return ({', '.join(items)},)")

    def switch(self, s: A.SwitchStatement) -> None:
        o = self.o
        e = s.expr
        if isinstance(e, A.Member) and e.kind == "apply_result" and e.name == "action_run":
            tdecl = e.expr.decl
            ai = self.table_apply(e.expr)
            actions = self.pc.table_actions[id(tdecl)]
            pending: list[str] = []
            first = True
            for c in s.cases:
                if isinstance(c.label, A.DefaultExpr):
                    cond = "True"
                else:
                    ad = c.action if c.action is not None else getattr(c.label, "decl", None)
                    idx = [i for i, a in enumerate(actions) if a is ad]
                    pending.extend(str(i) for i in idx)
                    if c.body is None:
                        continue
                    cond = f"{ai} in ({', '.join(pending)},)" if pending else "False"
                pending = []
                self._case(cond, first, c.body)
                first = False
            return
        v = self.expr(e)
        self.flush()
        t = self.scope.tmp("sw")
        o(f"{t} = {v}")
        pending = []
        first = True
        for c in s.cases:
            if isinstance(c.label, A.DefaultExpr):
                cond = "True"
            else:
                pending.append(self.expr(c.label))
                if c.body is None:
                    continue
                cond = " or ".join(f"{t} == {x}" for x in pending)
            pending = []
            self._case(cond, first, c.body)
            first = False

    def _case(self, cond: str, first: bool, body: A.Node) -> None:
        """One switch case; ``default`` (always last in P4) becomes a plain ``else``."""
        o = self.o
        if cond == "True" and not first:
            o("else:")
        else:
            o(("if " if first else "elif ") + cond + ":")
        with o.indent():
            self.block(body)

    # ---- parser transitions ----------------------------------------------------------------
    def transition(self, tr: A.TransitionStatement | None, states: dict[str, int]) -> None:
        o = self.o
        if tr is None:
            o(f"raise ParserError({self.pc.errors['NoError']})")
            return
        t = tr.target
        if isinstance(t, A.SelectExpression):
            keys = []
            for e in t.exprs:
                v = self.expr(e)
                k = self.scope.tmp("k")
                self.pre.append(f"{k} = {v}")
                keys.append((k, e.type))
            self.flush()
            first = True
            for case in t.cases:
                ks = case.keyset
                elems = ks.items if isinstance(ks, A.ListExpression) and len(keys) > 1 else [ks]
                conds = []
                if len(elems) == 1 and len(keys) > 1 and isinstance(elems[0], (A.DefaultExpr, A.DontCare)):
                    elems = elems * len(keys)
                for (k, kt), el in zip(keys, elems):
                    c = self.keyset_cond(k, kt, el)
                    if c != "True":
                        conds.append(c)
                if not conds:  # a catch-all case: the cases after it can never match
                    if first:
                        self.goto(case.state, states)
                    else:
                        o("else:")
                        with o.indent():
                            self.goto(case.state, states)
                    return
                o(("if " if first else "elif ") + " and ".join(conds) + ":")
                first = False
                with o.indent():
                    self.goto(case.state, states)
            if first:
                self.goto(None, states)
            else:
                o("else:")
                with o.indent():
                    o(f"raise ParserError({self.pc.errors['NoMatch']})")
        else:
            self.goto(t, states)

    def goto(self, target: A.NameRef | None, states: dict[str, int]) -> None:
        o = self.o
        name = target.name if target is not None else "reject"
        if name == "accept":  # a sub-parser's scalar out/inout parameters follow the offset
            o("return " + (f"(o, {', '.join(self.outs)},)" if self.outs else "o"))
        elif name == "reject":
            o("raise ParserError(ctx.sm.parser_error)")
        elif name in states:
            if states[name] <= self.state_index:  # a back edge: bound parser loops (BMv2 has no limit)
                o("loops += 1")
                o(f"if loops > {PARSER_LOOP_LIMIT}: raise ParserError({self.pc.errors['ParserTimeout']})")
            o(f"st = {states[name]}")
            o("continue")
        else:
            raise UnsupportedError(target, f"unknown parser state {name}")

    def keyset_cond(self, k: str, kt: T.P4Type, el: A.Expression) -> str:
        if isinstance(el, (A.DefaultExpr, A.DontCare)):
            return "True"
        if isinstance(el, A.Mask):
            m = self.expr(el.mask)
            v = self.expr(el.value_expr)
            return f"({k} & {m}) == ({v} & {m})"
        if isinstance(el, A.Range):
            return f"{self.expr(el.low)} <= {k} <= {self.expr(el.high)}"
        if isinstance(el, A.NameRef) and isinstance(el.decl, A.ValueSetDecl):
            return f"{self.pc.objects[id(el.decl)]}.contains({k})"
        return f"{k} == {self.expr(el)}"

    # ---- assignment ------------------------------------------------------------------------
    def rvalue_copy(self, e: A.Expression) -> str:
        v = self.expr(e)
        if is_aggregate(underlying(e.type)) and not isinstance(
                e, (A.StructExpression, A.ListExpression, A.InvalidHeader, A.MethodCall)):
            return f"{v}.copy()"
        return v

    def assign(self, lhs: A.Expression, rhs: A.Expression, compound: bool = False) -> None:
        """The l-value is evaluated first, once (run-time stack indices are read before the
        right-hand side runs; ``a[f()] += x`` calls f once), then the right-hand side."""
        twins = _dynamic_indices(rhs.left) if compound else []
        fixed = []
        for i, node in enumerate(_dynamic_indices(lhs)):
            t = self.scope.tmp("ix")
            self.pre.append(f"{t} = {self.expr(node.index)}")
            fixed += [id(node)] + ([id(twins[i])] if i < len(twins) else [])
            self.fixed_index.update((k, t) for k in fixed[-2:])
        try:
            lt = underlying(lhs.type)
            if isinstance(rhs, A.ListExpression) and isinstance(lt, T.StructLikeType):
                v = self.construct(lt, rhs.items)
            elif isinstance(rhs, A.StructExpression) and isinstance(lt, T.StructLikeType):
                v = self.struct_expr(rhs, lt)
            else:
                v = self.rvalue_copy(rhs)
            self.store(lhs, v)
        finally:
            for k in fixed:
                self.fixed_index.pop(k, None)

    def keep_order(self, codes: list[str], kinds: list[bool | None], mark: int) -> None:
        """Operands are evaluated left to right. When the code of a later one needed
        statements (``pre[mark:]``: a call with out arguments, a table apply), the earlier
        operands in ``codes`` are read into temporaries ahead of them. ``kinds``: None to
        leave a code alone (an aggregate passed by reference), True to copy an aggregate."""
        if len(self.pre) == mark:
            return
        frozen = []
        for i, (c, k) in enumerate(zip(codes, kinds)):
            if k is None or _STABLE.fullmatch(c):
                continue
            t = self.scope.tmp("v")
            frozen.append(f"{t} = {c}{'.copy()' if k else ''}")
            codes[i] = t
        self.pre[mark:mark] = frozen

    def operands(self, es: list[A.Expression], copy: bool = False) -> list[str]:
        """Codes of ``es`` evaluated left to right (``rvalue_copy`` for aggregates when ``copy``)."""
        codes: list[str] = []
        kinds: list[bool | None] = []
        for e in es:
            mark = len(self.pre)
            c = self.rvalue_copy(e) if copy else self.expr(e)
            self.keep_order(codes, kinds, mark)
            codes.append(c)
            kinds.append(not copy and is_aggregate(underlying(e.type)))
        return codes

    def store(self, lhs: A.Expression, value: str) -> None:
        """Emit ``lhs = value`` (value already evaluated code)."""
        if isinstance(lhs, A.DontCare):
            self.flush()
            self.o(f"_ = {value}")
            return
        if isinstance(lhs, A.Slice):
            base = lhs.expr
            hi, lo = lhs.hi_value, lhs.lo_value
            m = ((1 << (hi - lo + 1)) - 1) << lo
            cur = self.expr(base)
            t = self.scope.tmp("sl")
            self.pre.append(f"{t} = {value}")
            self.store(base, f"(({cur}) & {~m & ((1 << (scalar_width(base.type) or 0)) - 1)}) | ((({t}) << {lo}) & {m})")
            return
        target = self.lvalue(lhs)
        self.flush()
        if target.endswith(")"):  # a stack element chosen at run time (`s[i]`, `s.next`)
            self.o(f"assign_into({target}, {value})")
            return
        if (isinstance(lhs, A.NameRef) and isinstance(lhs.decl, A.Parameter)
                and lhs.decl.direction in ("out", "inout") and is_aggregate(underlying(lhs.type))):
            # the caller's object, passed by reference: it takes the value in place
            self.o(f"assign_into({target}, {value})")
            return
        self.o(f"{target} = {value}")

    def lvalue(self, e: A.Expression) -> str:
        if isinstance(e, A.NameRef):
            n = self.scope.get(e.decl)
            if n is None:
                raise UnsupportedError(e, f"cannot assign to {e.name}")
            return n
        if isinstance(e, A.Member):
            if e.kind == "stack":
                return self.expr(e)
            return f"{self.expr(e.expr)}.{attr(e.name)}"
        if isinstance(e, A.ArrayIndex):
            return self.e_ArrayIndex(e)
        raise UnsupportedError(e, f"unsupported assignment target {type(e).__name__}")

    # ---- calls -----------------------------------------------------------------------------
    def call_stmt(self, c: A.MethodCall) -> None:
        k = c.kind
        o = self.o
        name = c.method_name
        args = [a.value for a in c.args]
        if k == "table_apply":
            self.table_apply(c)
            return
        if k == "action":
            self.inline_action(c.decl, args)
            return
        if k == "function":
            self.call_function(c, statement=True)
            self.flush()
            return
        if k in ("control_apply", "parser_apply"):
            self.call_block(c, args)
            return
        if k == "verify":
            cond, err = self.expr(args[0]), self.expr(args[1])
            self.flush()
            o(f"if not {cond}: raise ParserError({err})")
            return
        if k == "packet_in":
            self.packet_in_stmt(c, name, args)
            return
        if k == "packet_out":
            self.emit_stmt(args[0])
            return
        if k in ("header_method", "union_method"):
            self.header_method(c, name)
            return
        if k == "stack_method":
            st = self.expr(c.target.expr)
            n = self.expr(args[0])
            self.flush()
            o(f"{st}.{name}({n})")
            return
        if k == "extern_method":
            ext = self._target_extern(c)
            if ext == "packet_in":
                self.packet_in_stmt(c, name, args)
            elif ext == "packet_out":
                self.emit_stmt(args[0])
            else:
                self.extern_method(c, name, args)
            return
        if k == "extern_function":
            if name == "verify":
                cond, err = self.expr(args[0]), self.expr(args[1])
                self.flush()
                o(f"if not {cond}: raise ParserError({err})")
                return
            self.extern_function(c, name, args)
            return
        v = self.expr(c)
        self.flush()
        o(v)

    @staticmethod
    def _target_extern(c: A.MethodCall) -> str | None:
        t = getattr(getattr(c.target, "expr", None), "type", None)
        return t.name if isinstance(t, T.ExternType) else None

    def header_method(self, c: A.MethodCall, name: str) -> None:
        o = self.o
        target = c.target.expr
        h = self.expr(target)
        parent = target.expr if isinstance(target, A.Member) and target.kind == "field" else None
        in_union = parent is not None and isinstance(underlying(parent.type), T.HeaderUnionType)
        self.flush()
        if name == "setValid":
            if in_union:  # the other members become invalid
                o(f"if not {h}.v_: {self.expr(parent)}.inval()")
            o(f"{h}.setv()")
        elif name == "setInvalid":
            if isinstance(underlying(target.type), T.HeaderUnionType):
                o(f"{h}.inval()")
            else:
                o(f"{h}.v_ = False")
        else:
            o(h)

    def packet_in_stmt(self, c: A.MethodCall, name: str, args: list[A.Expression]) -> None:
        o = self.o
        if name == "extract":
            target = args[0]
            parent = target.expr if isinstance(target, A.Member) and target.kind == "field" else None
            union = parent is not None and isinstance(underlying(parent.type), T.HeaderUnionType)
            elem = parent if union else target  # a header, or the union holding it
            stack_next = isinstance(elem, A.Member) and elem.kind == "stack" and elem.name == "next"
            elem_code = self.expr(elem)
            nbits = self.expr(args[1]) if len(args) > 1 else None
            self.flush()
            if stack_next:  # the element at nextIndex (StackOutOfBounds past the end)
                tmp = self.scope.tmp("h")
                o(f"{tmp} = {elem_code}")
                elem_code = tmp
            h = f"{elem_code}.{attr(target.name)}" if union else elem_code
            if union:
                o(f"{elem_code}.inval()")
            o(f"o = {h}.ext(d, o{', ' + nbits if nbits else ''})")
            if stack_next:
                o(f"{self.expr(elem.expr)}.nxt += 1")
        elif name == "advance":
            n = self.expr(args[0])
            self.flush()
            t = self.scope.tmp("adv")
            o(f"{t} = o + (({n}) >> 3)")
            o(f"if {t} > len(d): raise ParserError({self.pc.errors['PacketTooShort']})")
            o(f"o = {t}")
        else:
            v = self.expr(c)
            self.flush()
            o(v)

    def emit_stmt(self, e: A.Expression) -> None:
        out = self._packet_out()
        t = underlying(e.type)
        code = self.expr(e)
        self.flush()
        self._emit(code, t, out)

    def _packet_out(self) -> str:
        if self.scope.packet_out is None:
            raise UnsupportedError(None, "emit outside a deparser")
        return self.scope.packet_out

    def _emit(self, code: str, t: T.P4Type, out: str) -> None:
        o = self.o
        if isinstance(t, T.HeaderType):
            o(f"if {code}.v_: {code}.emit({out})")
        elif isinstance(t, T.HeaderUnionType):
            for f in t.fields:
                o(f"if {code}.{attr(f.name)}.v_: {code}.{attr(f.name)}.emit({out})")
        elif isinstance(t, T.StackType):
            v = self.scope.tmp("e")
            o(f"for {v} in {code}.h:")
            with o.indent():
                self._emit(v, underlying(t.elem), out)
        elif isinstance(t, T.StructType):
            for f in t.fields:
                self._emit(f"{code}.{attr(f.name)}", underlying(f.type), out)
        else:
            raise UnsupportedError(None, f"cannot emit a value of type {t}")

    def call_block(self, c: A.MethodCall, args: list[A.Expression]) -> None:
        fname, decl = self.pc.applied_block(c, self.prefix)
        params = decl.params
        codes = []
        outs = []
        agg_outs = []
        for p, a in zip(params, args):
            if isinstance(p.type, T.ExternType) and p.type.name == "packet_in":
                continue
            if isinstance(p.type, T.ExternType) and p.type.name == "packet_out":
                codes.append(self._packet_out())
                continue
            agg = is_aggregate(underlying(p.type))
            if p.direction == "out" and agg:  # starts fresh (invalid), copied out after
                t = self.scope.tmp("o")
                self.pre.append(f"{t} = {self.pc.types.default(p.type)}")
                codes.append(t)
                agg_outs.append((a, t))
            elif p.direction == "out":
                codes.append(self.pc.types.default(p.type))
            else:
                codes.append(self.expr(a))
            if p.direction in ("out", "inout") and not agg:
                outs.append(a)
        self.flush()
        if isinstance(decl, A.ParserDecl):
            if outs:
                t = self.scope.tmp("r")
                self.o(f"{t} = {fname}(d, o, {', '.join(codes + ['ctx'])})")
                self.o(f"o = {t}[0]")
                for i, a in enumerate(outs):
                    self.store(a, f"{t}[{i + 1}]")
            else:
                self.o(f"o = {fname}(d, o, {', '.join(codes + ['ctx'])})")
        elif not outs:
            self.o(f"{fname}({', '.join(codes + ['ctx'])})")
        else:
            t = self.scope.tmp("r")
            self.o(f"{t} = {fname}({', '.join(codes + ['ctx'])})")
            for i, a in enumerate(outs):
                self.store(a, f"{t}[{i}]")
        for a, tv in agg_outs:
            self.store(a, tv)

    def call_function(self, c: A.MethodCall, statement: bool) -> str:
        """Call a P4 function: scalar out/inout come back in the returned tuple; an ``out``
        aggregate starts as a fresh (invalid) value and is copied out after the call."""
        fname, params, has_ret = self.pc.functions[id(c.decl)]
        args = [a.value for a in c.args]
        codes: list[str] = []
        kinds: list[bool | None] = []
        outs = []
        agg_outs = []
        for p, a in zip(params, args):
            agg = is_aggregate(underlying(p.type))
            mark = len(self.pre)
            if p.direction == "out" and agg:
                c = self.scope.tmp("o")
                self.pre.append(f"{c} = {self.pc.types.default(p.type)}")
                agg_outs.append((a, c))
            elif p.direction == "out":
                c = self.pc.types.default(p.type)
            else:
                c = self.rvalue_copy(a) if p.direction in (None, "in") else self.expr(a)
            self.keep_order(codes, kinds, mark)
            codes.append(c)
            kinds.append(None if agg and p.direction == "inout" else False)
            if p.direction in ("out", "inout") and not agg:
                outs.append(a)
        call = f"{fname}({', '.join(codes + ['ctx'])})"
        if not outs and not agg_outs:
            if statement:
                self.flush()
                self.o(call)
            return call
        t = self.scope.tmp("r")
        self.pre.append(f"{t} = {call}")
        base = 1 if has_ret else 0
        for i, a in enumerate(outs):  # copy-out: still pending, the value may be read before
            self.deferred(self.store, a, f"{t}[{base + i}]")
        for a, tv in agg_outs:
            self.deferred(self.store, a, tv)
        if not has_ret:
            return "None"
        return f"{t}[0]" if outs else t

    # ---- actions and tables ----------------------------------------------------------------
    def inline_action(self, ad: A.ActionDecl, args: list[A.Expression] | None, data: str | None = None,
                      bound: list[A.Expression] | None = None) -> None:
        """Inline action ``ad``: with ``args`` for a direct call, or with the control-plane
        arguments in the tuple variable ``data`` when a table runs it (``bound`` then holds
        the arguments of its directional parameters given in the table's actions list)."""
        o = self.o
        outs = []
        cp_params = [p for p in ad.params if p.direction is None]
        if args is not None:
            pairs = list(zip(ad.params, args))
        else:
            pairs = list(zip([p for p in ad.params if p.direction is not None], bound or []))
        # an inout aggregate is passed by reference unless the body can also reach it by
        # another name (the control's own `hdr`, another argument): then copy-in/copy-out
        roots = [id(_root_decl(a)) for p, a in pairs if p.direction in ("out", "inout")]
        reached = _names_used(ad) if pairs else set()
        if pairs:
            for p, a in pairs:
                n = self.scope.bind(p, p.name)
                if p.direction == "out":  # a fresh value, copied out after the body
                    self.flush()
                    o(f"{n} = {self.pc.types.default(p.type)}")
                    if is_aggregate(underlying(p.type)):
                        outs.append((a, n))
                elif p.direction == "inout":
                    v = self.expr(a)
                    self.flush()
                    r = id(_root_decl(a))
                    if is_aggregate(underlying(p.type)) and (r in reached or roots.count(r) > 1):
                        o(f"{n} = {v}.copy()")
                        outs.append((a, n))
                    else:
                        o(f"{n} = {v}")
                else:
                    v = self.rvalue_copy(a)
                    self.flush()
                    o(f"{n} = {v}")
                if p.direction in ("out", "inout") and not is_aggregate(underlying(p.type)):
                    outs.append((a, n))
        if args is None:
            names = [self.scope.bind(p, p.name) for p in cp_params]
            if len(names) == 1:
                o(f"{names[0]} = {data}[0]")
            elif names:
                o(f"{', '.join(names)} = {data}")
        has_return = any(isinstance(n, A.ReturnStatement) for n in ad.body.walk())
        if has_return:
            flag = self.scope.tmp("returned")
            o(f"{flag} = False")
            self.action_returns.append([flag, 0])
            o("while True:")
            o.depth += 1
        self.in_action += 1
        self.exit_copy_outs.append(outs)
        self.block(ad.body)
        self.exit_copy_outs.pop()
        self.in_action -= 1
        if has_return:
            self.action_returns.pop()
            o("break")
            o.depth -= 1
        for a, n in outs:
            self.store(a, n)

    def table_apply(self, c: A.MethodCall) -> str:
        """Apply a table and run the chosen action; returns the variable holding the action
        index and leaves the hit flag in ``self.last_hit``."""
        tdecl = c.decl if isinstance(c.decl, A.TableDecl) else c.target.expr.decl
        obj = self.pc.objects[id(tdecl)]
        keys = []
        for k in tdecl.key:
            v = self.expr(k.expr)
            if isinstance(underlying(k.expr.type), T.BoolType):
                v = f"int({v})"
            keys.append(v)
        ai, ar, hit = self.scope.tmp("ai"), self.scope.tmp("ar"), self.scope.tmp("hit")
        key = "(" + "".join(k + ", " for k in keys) + ")"
        self.flush()
        o = self.o
        table: Table = self.pc.ns[obj]
        if table.plain:
            # no direct counter/meter/profile: look the entry up inline, no apply() call
            r = self.scope.tmp("r")
            if table.exact_index is not None:
                single = keys[0] if len(keys) == 1 else key
                o(f"{r} = {obj}.exact_index.get({single})")
            else:
                o(f"{r} = {obj}.find({key})")
            o(f"if {r} is None: {ai}, {ar} = {obj}.default_pair; {hit} = False")
            o(f"else: {ai} = {r}.action; {ar} = {r}.args; {hit} = True")
        else:
            o(f"{ai}, {ar}, {hit} = {obj}_apply({key}, ctx.nbytes, ctx.now)")
        actions = self.pc.table_actions[id(tdecl)]
        bound = self.pc.table_action_args[id(tdecl)]
        for i, ad in enumerate(actions):
            o(("if " if i == 0 else "elif ") + f"{ai} == {i}:")
            with o.indent():
                self.inline_action(ad, None, ar, bound.get(id(ad)))
        self.last_hit = hit
        return ai

    # ---- externs ---------------------------------------------------------------------------
    def extern_method(self, c: A.MethodCall, name: str, args: list[A.Expression]) -> None:
        o = self.o
        target = c.target.expr
        inst = target.decl
        obj = self.pc.objects.get(id(inst))
        ext = inst.type.name
        if ext == "register":
            if name == "read" and len(args) == 2:
                idx = self.expr(args[1])
                self.store(args[0], f"{obj}.p_read({idx})")
            elif name == "write":
                i, v = self.expr(args[0]), self.expr(args[1])
                self.flush()
                o(f"{obj}.p_write({i}, {v})")
            else:
                self.flush()
                o(self.expr(c))
        elif ext == "counter":
            i = self.expr(args[0])
            self.flush()
            o(f"{obj}.count({i}, ctx.nbytes)")
        elif ext == "direct_counter":
            pass  # counted by the table on every hit (BMv2)
        elif ext == "meter":
            i = self.expr(args[0])
            w = scalar_width(args[1].type) or 2
            self.store(args[1], f"({obj}.p_execute({i}, ctx.nbytes, ctx.now) & {(1 << w) - 1})")
        elif ext == "direct_meter":
            self.store(args[0], f"{obj}.color")
        else:
            raise UnsupportedError(c, f"extern method {ext}.{name} is not supported")

    def extern_function(self, c: A.MethodCall, name: str, args: list[A.Expression]) -> None:
        o = self.o
        if name == "mark_to_drop":
            sm = self.expr(args[0]) if args else "ctx.sm"
            self.flush()
            o(f"{sm}.egress_spec = 511")
            o(f"{sm}.mcast_grp = 0")
        elif name == "hash":
            algo = self._algo(args[1], c)
            base, mx = self.expr(args[2]), self.expr(args[4])
            data = self.pack(args[3])
            w = scalar_width(args[0].type) or 32
            self.store(args[0], f"(hash_with_base({algo}({data}), {base}, {mx}) & {(1 << w) - 1})")
        elif name == "random":
            lo, hi = self.expr(args[1]), self.expr(args[2])
            self.store(args[0], f"ctx.random({lo}, {hi})")
        elif name in ("verify_checksum", "verify_checksum_with_payload"):
            cond = self.expr(args[0])
            algo, data = self._digest_call(args[3], args[1], name.endswith("payload"), c)
            ck = self.expr(args[2])
            self.flush()
            o(f"if {cond} and {algo}({data}) != {ck}: ctx.sm.checksum_error = 1")
        elif name in ("update_checksum", "update_checksum_with_payload"):
            cond = self.expr(args[0])
            algo, data = self._digest_call(args[3], args[1], name.endswith("payload"), c)
            w = scalar_width(args[2].type) or 16
            self.flush()
            o(f"if {cond}:")
            with o.indent():
                self.store(args[2], f"({algo}({data}) & {(1 << w) - 1})")
        elif name in ("clone", "clone3", "clone_preserving_field_list"):
            ct = self.expr(args[0])
            sess = self.expr(args[1])
            fl = self.expr(args[2]) if name == "clone_preserving_field_list" else "None"
            if name == "clone3":
                fl = str(self.pc.data_field_list(args[2]))
            self.flush()
            o(f"ctx.clone_type = {ct}; ctx.clone_session = {sess}; ctx.clone_fl = {fl}")
        elif name in ("resubmit", "resubmit_preserving_field_list"):
            fl = self.expr(args[0]) if name.endswith("list") else "-1"
            if not name.endswith("list") and args:
                fl = str(self.pc.data_field_list(args[0]) or -1)
            self.flush()
            o(f"ctx.resubmit_fl = {fl}")
        elif name in ("recirculate", "recirculate_preserving_field_list"):
            fl = self.expr(args[0]) if name.endswith("list") else "-1"
            if not name.endswith("list") and args:
                fl = str(self.pc.data_field_list(args[0]) or -1)
            self.flush()
            o(f"ctx.recirc_fl = {fl}")
        elif name == "truncate":
            n = self.expr(args[0])
            self.flush()
            o(f"ctx.truncate = {n}")
        elif name in ("assert", "assume"):
            cond = self.expr(args[0])
            self.flush()
            o(f"if not {cond}: raise AssertionFailed({str(c.loc)!r})")
        elif name == "log_msg":
            msg = self.expr(args[0])
            vals = "()"
            if len(args) > 1:
                vals = self._flat_tuple(args[1])
            self.flush()
            o(f"ctx.log_msg({msg}, {vals})")
        elif name == "digest":
            self.digest(c, args)
        else:
            raise UnsupportedError(c, f"extern function {name} is not supported")

    def _digest_call(self, algo_e: A.Expression, data_e: A.Expression, payload: bool,
                     c: A.MethodCall) -> tuple[str, str]:
        """(function name, argument code) computing a checksum/hash of ``data_e``."""
        algo = self._algo(algo_e, c)
        if algo == "H_csum16" and not payload:
            flag = [False]
            data = self.pack(data_e, int_algo=flag)
            if flag[0]:
                self.pc.ns["H_csum16_int"] = hashes.csum16_int
                return "H_csum16_int", data
            return algo, data
        return algo, self.pack(data_e, payload=payload)

    def _algo(self, e: A.Expression, c: A.MethodCall) -> str:
        v = e.value
        if v is None:
            raise UnsupportedError(c, "the hash algorithm must be a constant")
        name = self.pc._enum_name(v)
        key = f"H_{name}"
        if key not in self.pc.ns:
            self.pc.ns[key] = hashes.algorithm(name)
        return key

    def digest(self, c: A.MethodCall, args: list[A.Expression]) -> None:
        data = args[1]
        t = underlying(data.type)
        fields = self.flatten(data)
        if isinstance(t, T.StructType) and t.name:
            dname = self.pc.checked.control_plane_name(t.decl) if t.decl is not None else t.name
            names = [f.name for f in t.fields]
        else:
            dname = f"digest_{len(self.pc.result.actions)}"
            names = [expr_text(x) if isinstance(x, A.Expression) else f"f{i}"
                     for i, x in enumerate(data.items if isinstance(data, A.ListExpression) else [])]
        if len(names) != len(fields):
            names = [f"f{i}" for i in range(len(fields))]
        parts = ", ".join(f"({n!r}, {w}, {v})" for n, (v, w, _) in zip(names, fields))
        self.flush()
        self.o(f"ctx.digests += (({dname!r}, [{parts}]),)")

    def _flat_tuple(self, e: A.Expression) -> str:
        return "(" + "".join(f"{v}, " for v, _, _ in self.flatten(e)) + ")"

    def flatten(self, e: A.Expression, cond: str | None = None) -> list[tuple[str, str, str | None]]:
        """The bit-level fields of a hash/checksum/digest input: (value code, width code,
        validity condition or None). Fields of invalid headers are skipped (BMv2)."""
        t = underlying(e.type)
        if isinstance(e, A.ListExpression):
            out = []
            for it in e.items:
                out.extend(self.flatten(it, cond))
            return out
        if isinstance(e, A.StructExpression):
            out = []
            for f in e.fields:
                out.extend(self.flatten(f.value, cond))
            return out
        code = self.expr(e)
        if cond is None and isinstance(e, A.Member) and e.kind == "field" \
                and isinstance(underlying(e.expr.type), T.HeaderType):
            cond = f"{self.expr(e.expr)}.v_"  # BMv2 leaves out fields of invalid headers
        return self._flatten_code(code, t, cond, e)

    def _flatten_code(self, code: str, t: T.P4Type, cond: str | None, node: A.Node | None = None
                      ) -> list[tuple[str, str, str | None]]:
        if isinstance(t, T.HeaderType):
            c = f"{code}.v_" if cond is None else f"({cond} and {code}.v_)"
            out = []
            for f in t.fields:
                out.extend(self._flatten_code(f"{code}.{attr(f.name)}", underlying(f.type), c, node))
            return out
        if isinstance(t, (T.StructType, T.HeaderUnionType)):
            out = []
            for f in t.fields:
                out.extend(self._flatten_code(f"{code}.{attr(f.name)}", underlying(f.type), cond, node))
            return out
        if isinstance(t, T.StackType):
            out = []
            for i in range(t.size):
                out.extend(self._flatten_code(f"{code}.h[{i}]", underlying(t.elem), cond, node))
            return out
        if isinstance(t, T.TupleType):
            out = []
            for i, et in enumerate(t.elems):
                out.extend(self._flatten_code(f"{code}[{i}]", underlying(et), cond, node))
            return out
        if isinstance(t, T.VarbitType):
            return [(f"{code}[1]", f"{code}[0]", cond)]
        if isinstance(t, T.BoolType):
            return [(f"int({code})", "1", cond)]
        if isinstance(t, T.ErrorType):  # 32-bit codes in BMv2
            return [(code, "32", cond)]
        if isinstance(t, T.EnumType) and not isinstance(t, T.SerEnumType):
            # p4c's v1model mid end gives a plain enum's members 32-bit values in order
            return [(f"{tuple(t.members)!r}.index({code})", "32", cond)]
        w = scalar_width(t)
        if w is None:
            raise UnsupportedError(node, f"cannot use a value of type {t} as hash or checksum data")
        return [(code, str(w), cond)]

    def pack(self, e: A.Expression, payload: bool = False, int_algo: list | None = None) -> str:
        """Code for the input buffer of a hash or checksum. With ``int_algo`` (csum16 only,
        no payload) it may return the packed int instead, setting ``int_algo[0]``."""
        fields = self.flatten(e)
        conds = {c for _, _, c in fields}
        guard = None
        if len(conds) == 1 and all(w.isdigit() for _, w, _ in fields):
            guard = conds.pop()  # one header: pack statically when it is valid
            fields = [(v, w, None) for v, w, _ in fields]
        static = all(c is None and w.isdigit() for _, w, c in fields)
        if static:
            total = sum(int(w) for _, w, _ in fields)
            pad = (-total) % 8
            parts = []
            shift = total + pad
            for v, w, _ in fields:
                shift -= int(w)
                parts.append(v if shift == 0 else f"({v} << {shift})")
            acc = ' | '.join(parts) or '0'
            if int_algo is not None:  # the checksum reads the packed int directly
                extra = 8 if (total + pad) % 16 else 0
                int_algo[0] = True
                code = f"({acc})" if not extra else f"(({acc}) << 8)"
                if guard is not None:
                    code = f"({code} if {guard} else 0)"
                return code
            code = f"({acc}).to_bytes({(total + pad) // 8}, 'big')"
        else:
            groups = []
            for v, w, c in fields:
                item = f"(({v}, {w}),)"
                groups.append(item if c is None else f"({item} if {c} else ())")
            code = f"pack_bits({' + '.join(groups) or '()'})"
        if guard is not None:
            code = f"({code} if {guard} else b'')"
        if payload:
            code = f"({code} + ctx.payload)"
        return code

    # ---- expressions -----------------------------------------------------------------------
    def literal(self, e: A.Expression) -> str | None:
        if not e.is_const or e.value is None:
            return None
        v = e.value
        t = underlying(e.type) if not isinstance(e.type, T.EnumType) else e.type
        if isinstance(t, T.BoolType):
            return "True" if v else "False"
        if isinstance(t, T.ErrorType):
            if isinstance(v, str):
                return str(self.pc.errors.get(v.split(".")[-1], 0))
            return str(int(v))
        if isinstance(t, T.EnumType):
            return repr(v.split(".")[-1] if isinstance(v, str) else v)
        if isinstance(t, T.BitsType):
            if isinstance(v, str):
                return None
            return str(int(v) & t.mask)
        if isinstance(t, T.IntType) and isinstance(v, int):
            return str(v)
        if isinstance(t, T.StringType):
            return repr(v)
        return None

    def expr(self, e: A.Expression) -> str:
        lit = self.literal(e)
        if lit is not None:
            return lit
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            raise UnsupportedError(e, f"expression {type(e).__name__} is not supported")
        return m(e)

    def e_IntLiteral(self, e: A.IntLiteral) -> str:
        t = underlying(e.type)
        if isinstance(t, T.BitsType):
            return str(e.value & t.mask)
        return str(e.value)

    def e_BoolLiteral(self, e: A.BoolLiteral) -> str:
        return "True" if e.value else "False"

    def e_StringLiteral(self, e: A.StringLiteral) -> str:
        return repr(e.value)

    def e_NameRef(self, e: A.NameRef) -> str:
        d = e.decl
        n = self.scope.get(d)
        if n is not None:
            return n
        if isinstance(d, A.ConstDecl):
            t = underlying(d.type)
            v = d.value
            if isinstance(t, T.BitsType) and isinstance(v, int):
                return str(v & t.mask)
            if isinstance(v, bool):
                return repr(v)
            if isinstance(v, int):
                return str(v)
            if d.init is not None:  # a struct/header/tuple constant: a fresh value each use
                return self.expr(d.init)
        if isinstance(d, A.InstanceDecl) and id(d) in self.pc.objects:
            return self.pc.objects[id(d)]
        raise UnsupportedError(e, f"cannot evaluate {e.name} here")

    def e_Member(self, e: A.Member) -> str:
        k = e.kind
        if k == "apply_result":
            ai = self.deferred(self.table_apply, e.expr)
            if e.name == "hit":
                return self.last_hit
            if e.name == "miss":
                return f"(not {self.last_hit})"
            return ai
        if k == "stack":
            base = self.expr(e.expr)
            oob = self.pc.errors["StackOutOfBounds"]
            if e.name == "next":
                return f"{base}.next_elem({oob})"
            if e.name == "last":
                return f"{base}.last_elem({oob})"
            if e.name == "lastIndex":
                return f"(({base}.nxt - 1) & 0xffffffff)"
            if e.name == "size":
                return str(underlying(e.expr.type).size)
        if k in ("enum", "error"):
            v = e.value if e.value is not None else e.name
            if k == "error":
                return str(self.pc.errors.get(str(v).split(".")[-1], 0))
            t = underlying(e.type) if not isinstance(e.type, T.EnumType) else e.type
            if isinstance(t, T.BitsType):
                return str(int(v) & t.mask)
            return repr(str(v).split(".")[-1])
        bt = underlying(e.expr.type)
        if isinstance(bt, T.StackType) and e.name == "size":
            return str(bt.size)
        return f"{self.expr(e.expr)}.{attr(e.name)}"

    def e_ArrayIndex(self, e: A.ArrayIndex) -> str:
        bt = underlying(e.expr.type)
        if isinstance(bt, T.TupleType):
            return f"{self.expr(e.expr)}[{self.expr(e.index)}]"
        if e.index.is_const and e.index.value is not None:
            return f"{self.expr(e.expr)}.h[{int(e.index.value)}]"
        base = self.expr(e.expr)
        return f"{base}.at({self.fixed_index.get(id(e)) or self.expr(e.index)})"

    def e_Slice(self, e: A.Slice) -> str:
        w = e.hi_value - e.lo_value + 1
        v = self.expr(e.expr)
        if e.lo_value == 0:
            return f"({v} & {(1 << w) - 1})"
        return f"(({v} >> {e.lo_value}) & {(1 << w) - 1})"

    def e_Unary(self, e: A.Unary) -> str:
        v = self.expr(e.expr)
        t = underlying(e.type)
        if e.op == "!":
            return f"(not {v})"
        if e.op == "+":
            return v
        if isinstance(t, T.BitsType):
            if e.op == "~":
                return f"(~{v} & {t.mask})"
            if e.op == "-":
                return f"(-{v} & {t.mask})"
        return f"({e.op}{v})"

    def e_Binary(self, e: A.Binary) -> str:
        op = e.op
        a = self.expr(e.left)
        if op in ("&&", "||"):
            v, lines = self._captured(e.right)
            if not lines:
                return f"({a} {'and' if op == '&&' else 'or'} {v})"
            t = self.scope.tmp("sc")
            self.pre.append(f"{t} = {a}")
            self.pre.append(f"if {'' if op == '&&' else 'not '}{t}:")
            self.pre.extend("    " + x for x in lines)
            self.pre.append(f"    {t} = {v}")
            return t
        mark = len(self.pre)
        b = self.expr(e.right)
        codes = [a]
        self.keep_order(codes, [is_aggregate(underlying(e.left.type))], mark)
        a = codes[0]
        lt = underlying(e.left.type)
        t = underlying(e.type)
        if op == "++":
            rw = scalar_width(e.right.type)
            lv = f"int({a})" if isinstance(lt, T.BoolType) else a
            rv = f"int({b})" if isinstance(underlying(e.right.type), T.BoolType) else b
            return f"(({lv} << {rw}) | {rv})"
        if op in ("==", "!="):
            return f"({a} {op} {b})"
        if op in ("<", "<=", ">", ">="):
            if is_signed(lt):
                w = lt.width
                return f"(_s({a}, {w}) {op} _s({b}, {w}))"
            return f"({a} {op} {b})"
        if not isinstance(t, T.BitsType):
            py = {"/": "//"}.get(op, op)
            return f"({a} {py} {b})"
        w, m, sg = t.width, t.mask, t.signed
        if op in ("+", "-", "*"):
            return f"(({a} {op} {b}) & {m})"
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op == "|+|":
            return f"sat_add_s({a}, {b}, {w})" if sg else f"min({a} + {b}, {m})"
        if op == "|-|":
            return f"sat_sub_s({a}, {b}, {w})" if sg else f"max({a} - {b}, 0)"
        if op == "/":
            return f"div_s({a}, {b}, {w})" if sg else f"({a} // {b})"
        if op == "%":
            return f"mod_s({a}, {b}, {w})" if sg else f"({a} % {b})"
        if op == "<<":
            if e.right.is_const and e.right.value is not None:
                sh = int(e.right.value)
                return "0" if sh >= w else f"(({a} << {sh}) & {m})"
            return f"(({a} << {b}) & {m} if {b} < {w} else 0)"
        if op == ">>":
            if sg:
                return f"shr_s({a}, {b}, {w})"
            return f"({a} >> {b})"
        raise UnsupportedError(e, f"operator {op} is not supported")

    def deferred(self, gen: Callable, *args: Any) -> Any:
        """Run a statement generator inside an expression: the statements it emits become
        pending (``pre``) instead of being written out, so that ``keep_order`` can still read
        operands evaluated before it ahead of them. Returns what ``gen`` returns."""
        saved_o, saved_pre = self.o, self.pre
        self.o, self.pre = Lines(), []
        try:
            result = gen(*args)
            self.flush()
            lines = self.o.lines
        finally:
            self.o, self.pre = saved_o, saved_pre
        self.pre.extend(lines)
        return result

    def _captured(self, e: A.Expression) -> tuple[str, list[str]]:
        """Evaluate ``e`` with its side-effect statements (table applies, calls with out
        arguments) captured instead of emitted: (value code, statement lines)."""
        saved_o, saved_pre = self.o, self.pre
        self.o, self.pre = Lines(), []
        try:
            v = self.expr(e)
            self.flush()
            return v, self.o.lines
        finally:
            self.o, self.pre = saved_o, saved_pre

    def _guarded(self, e: A.Expression, cond: str) -> str:
        """Right operand of && / || and branches of ?: run only when ``cond`` holds; with
        side effects they become statements under that condition."""
        v, lines = self._captured(e)
        if not lines:
            return v
        t = self.scope.tmp("g")
        self.pre.append(f"{t} = None")
        self.pre.append(f"if {cond}:")
        self.pre.extend("    " + x for x in lines)
        self.pre.append(f"    {t} = {v}")
        return t

    def e_Ternary(self, e: A.Ternary) -> str:
        c = self.scope.tmp("c")
        cond = self.expr(e.cond)
        self.pre.append(f"{c} = {cond}")
        a = self._guarded(e.then, c)
        b = self._guarded(e.else_, f"not {c}")
        return f"({a} if {c} else {b})"

    def e_Cast(self, e: A.Cast) -> str:
        t = underlying(e.type)
        st = underlying(e.expr.type)
        if isinstance(e.expr, A.ListExpression) and isinstance(t, T.StructLikeType):
            return self.construct(t, e.expr.items)
        if isinstance(e.expr, A.StructExpression) and isinstance(t, T.StructLikeType):
            return self.struct_expr(e.expr, t)
        v = self.expr(e.expr)
        if isinstance(t, T.BoolType):
            return v if isinstance(st, T.BoolType) else f"({v} != 0)"
        if isinstance(t, T.BitsType):
            if isinstance(st, T.BoolType):
                return f"int({v})"
            if isinstance(st, T.BitsType):
                if st.signed and t.width > st.width:
                    return f"(_s({v}, {st.width}) & {t.mask})"
                if t.width >= st.width:
                    return v
                return f"({v} & {t.mask})"
            return f"({v} & {t.mask})"
        return v

    def e_MethodCall(self, c: A.MethodCall) -> str:
        k = c.kind
        name = c.method_name
        args = [a.value for a in c.args]
        if k in ("header_method", "union_method"):
            target = c.target.expr
            if name == "isValid":
                if isinstance(underlying(target.type), T.HeaderUnionType):
                    return f"{self.expr(target)}.valid()"
                return f"{self.expr(target)}.v_"
            if name in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"):
                bits = underlying(target.type).bit_width()
                return str(bits if name.endswith("Bits") else (bits + 7) // 8)
        if k == "function":
            return self.call_function(c, statement=False)
        if k == "table_apply":
            self.deferred(self.table_apply, c)
            return "None"
        if k == "packet_in" or (k == "extern_method" and self._target_extern(c) == "packet_in"):
            if name == "lookahead":
                t = underlying(c.type)
                if isinstance(t, T.HeaderType):
                    h = self.scope.tmp("la")
                    self.pre.append(f"{h} = {self.pc.types.cls(t)}()")
                    self.pre.append(f"{h}.ext(d, o)")
                    return h
                w = t.bit_width() if isinstance(t, T.StructType) else scalar_width(t) or 0
                nb = (w + 7) // 8
                short = self.pc.errors["PacketTooShort"]
                self.pre.append(f"if o + {nb} > len(d): raise ParserError({short})")
                v = f"(int.from_bytes(d[o:o + {nb}], 'big') >> {nb * 8 - w})"
                if isinstance(t, T.StructType):
                    bits = self.scope.tmp("la")
                    self.pre.append(f"{bits} = {v}")
                    return self.unpack(c, t, bits, w)
                return f"({v} != 0)" if isinstance(t, T.BoolType) else v
            if name == "length":
                return "len(d)"
        if k == "extern_method":
            inst = c.target.expr.decl
            obj = self.pc.objects.get(id(inst))
            if inst.type.name == "register" and name == "read":
                return f"{obj}.p_read({self.expr(args[0])})"
            if inst.type.name == "Checksum16" and name == "get":
                self.pc.ns["H_csum16"] = hashes.csum16
                return f"(H_csum16({self.pack(args[0])}))"
        if k == "extern_function" and name in ("hash",):
            raise UnsupportedError(c, "hash() has no value")
        if k in ("extern_method", "extern_function"):
            self.deferred(self.call_stmt, c)
            return "None"
        raise UnsupportedError(c, f"call {name} is not supported here")

    def unpack(self, c: A.MethodCall, t: T.StructType, bits: str, end: int) -> str:
        """A struct of bit fields whose wire bits end ``end`` bits into the int ``bits``
        (``lookahead<S>()``): the value built field by field, most significant first."""
        codes = []
        for f in t.fields:
            ft = underlying(f.type)
            if isinstance(ft, T.StructType):
                codes.append(self.unpack(c, ft, bits, end))
                end -= ft.bit_width()
                continue
            w = scalar_width(f.type)
            if w is None:
                raise UnsupportedError(c, f"lookahead of a struct with a {f.type} field is not supported")
            end -= w
            v = f"(({bits} >> {end}) & {(1 << w) - 1})"
            codes.append(f"({v} != 0)" if isinstance(ft, T.BoolType) else v)
        return f"{self.pc.types.cls(t)}.mk({', '.join(codes)})"

    def e_ListExpression(self, e: A.ListExpression) -> str:
        t = underlying(e.type)
        if isinstance(t, T.StructLikeType):
            return self.construct(t, e.items)
        return "(" + "".join(c + ", " for c in self.operands(e.items, copy=True)) + ")"

    def e_StructExpression(self, e: A.StructExpression) -> str:
        t = underlying(e.type)
        if isinstance(t, T.StructLikeType):
            return self.struct_expr(e, t)
        return "(" + "".join(c + ", " for c in self.operands([f.value for f in e.fields], copy=True)) + ")"

    def struct_expr(self, e: A.StructExpression, t: T.StructLikeType) -> str:
        by_name = {f.name: f.value for f in e.fields}
        items = [by_name.get(f.name) for f in t.fields]
        return self.construct(t, items)

    def construct(self, t: T.StructLikeType, items: list) -> str:
        cls = self.pc.types.cls(t)
        codes: list[str] = []
        for f, it in zip(t.fields, items):
            ft = underlying(f.type)
            mark = len(self.pre)
            if it is None:
                c = self.pc.types.default(f.type)
            elif isinstance(it, A.ListExpression) and isinstance(ft, T.StructLikeType):
                c = self.construct(ft, it.items)
            elif isinstance(it, A.StructExpression) and isinstance(ft, T.StructLikeType):
                c = self.struct_expr(it, ft)
            else:
                c = self.rvalue_copy(it)
            self.keep_order(codes, [False] * len(codes), mark)
            codes.append(c)
        return f"{cls}.mk({', '.join(codes)})"

    def e_InvalidHeader(self, e: A.InvalidHeader) -> str:
        return self.pc.types.default(e.type)

    def e_DontCare(self, e: A.DontCare) -> str:
        """``_`` as an argument (``extract<H>(_)``): a fresh value of its type, then dropped."""
        t = getattr(e, "type", None)
        return self.pc.types.default(t) if t is not None else "None"

    def e_TypeExpression(self, e: A.TypeExpression) -> str:
        return "None"


def compile_checked(checked: Any) -> Compiled:
    return ProgramCompiler(checked).compile()
