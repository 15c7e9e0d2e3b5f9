"""Elaboration: walk the top-level package, instantiate parsers, controls and externs
with their constructor arguments, and generate one Python function per instance."""

from __future__ import annotations

import itertools
from typing import Any

from p4switch.exec import hashes, native, runtime
from p4switch.exec.bits import bytes_of_bits, div_s, mod_s, sat_add_s, sat_sub_s, shr_s, to_signed
from p4switch.exec.codegen import Lines, TypeClasses, attr, is_aggregate, scalar_width, underlying
from p4switch.exec.compile_base import (
    BlockRef,
    Compiled,
    Scope,
    UnsupportedError,
    const_value,
)
from p4switch.exec.entries import NAMES as ENTRY_NAMES
from p4switch.exec.entries import entry_code
from p4switch.exec.externs import Counter, DirectCounter, DirectMeter, Meter, Register, ValueSet, random_in
from p4switch.exec.inline import inline_controls
from p4switch.exec.objects import RuntimeObjects
from p4switch.exec.stack import Stack
from p4switch.exec.stmtgen import StmtGen
from p4switch.exec.tables import (
    UNSEEN,
    ActionProfile,
)
from p4switch.frontend import ast as A
from p4switch.frontend import types as T


class ProgramCompiler(RuntimeObjects):
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
            "Any": Any,  # the generated code's annotations (``TypeClasses.annotation``)
            "ParserError": runtime.ParserError,
            "ExitControl": runtime.ExitControl,
            "AssertionFailed": runtime.AssertionFailed,
            "Stack": Stack,
            "pack_bits": bytes_of_bits,
            "_s": to_signed,
            "sat_add_s": sat_add_s,
            "sat_sub_s": sat_sub_s,
            "shr_s": shr_s,
            "div_s": div_s,
            "mod_s": mod_s,
            "hash_with_base": hashes.hash_with_base,
            # bound once: ``int.from_bytes`` looked up per header makes a new bound method
            # each time (850 instructions of an IPv4 extraction's 3,400); big-endian is the
            # default of from_bytes and to_bytes since Python 3.11
            "from_bytes": int.from_bytes,
            "UNSEEN": UNSEEN,
            "random_in": random_in,  # what the mypyc backend's native Ctx calls
            "log_message": runtime.log_message,
        }
        # the annotation of a name in ``ns`` for the mypyc backend, where it is not ``Any``
        self.ns_types: dict[str, str] = {}
        self.objects: dict[int, str] = {}  # id(InstanceDecl or TableDecl) -> namespace name
        self.obj_counter = itertools.count()
        self.result = Compiled("", self.ns, {}, object, error_codes=self.errors)
        self.action_names: dict[int, str] = {}
        self.functions: dict[int, tuple[str, list[A.Parameter], bool]] = {}
        self.generated_blocks: dict[tuple[int, str], str] = {}
        # (id(constructor parameter), prefix of the block instance) -> the block passed to it
        self.block_params: dict[tuple[int, str], BlockRef] = {}
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

    def bind(self, name: str, value: Any, annotation: str) -> str:
        """Give the generated code ``value`` as the global ``name``, of type ``annotation``
        when compiled (a typed ``dict`` is probed by mypyc without a method call)."""
        self.ns[name] = value
        self.ns_types[name] = annotation
        return name

    def add_object(self, obj: Any, hint: str) -> str:
        name = f"O{next(self.obj_counter)}_{''.join(c if c.isalnum() else '_' for c in hint)}"
        self.ns[name] = obj
        return name

    # ---- entry point -----------------------------------------------------------------------
    def compile(self, backend: str, only_built: bool = False, opt_level: str = native.OPT_LEVEL) -> Compiled | None:
        """The program's generated code, run by ``backend`` (``python`` or ``mypyc``); with
        ``only_built``, None rather than a build when mypyc's module is not in the cache;
        ``opt_level``, the C compiler's for a build."""
        self.types.native = backend == "mypyc"
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
        field_lists, fl_code = self._field_list_ops(meta_t, meta_c, self._field_lists(meta_t))
        controls = {n for n in self.generated_blocks.values() if n.startswith("K")}
        src = (self.types.out.text() + inline_controls(self.out.text(), controls) + fl_code
               + entry_code(stages, hdr_c, meta_c, sm_c, self.types.native))
        self.result.source = src
        defs = self._run(src, backend, sm_c, only_built, opt_level)
        if defs is None:
            return None
        self.result.entries = {name: defs[name] for name in ENTRY_NAMES}
        self.result.field_lists = {fl: (defs[get], defs[put]) for fl, (get, put) in field_lists.items()}
        self.result.hdr_cls = defs[hdr_c]
        return self.result

    def _run(self, src: str, backend: str, sm_cls: str, only_built: bool, opt_level: str) -> dict[str, Any] | None:
        """Run the generated module with ``self.ns`` (the runtime objects) as its globals;
        returns the globals, now with its classes and functions (None: see ``compile``)."""
        if backend == "mypyc":
            text = native.module_text(src, {k: self.ns_types.get(k, "Any") for k in self.ns}, sm_cls)
            name, built = native.built(text) if only_built else native.build(text, opt_level)
            if built is None:
                return None
            module, self.result.objects = native.load(name, built, self.ns)
            self.result.backend, self.result.module_file = backend, str(built)
            self.result.context_cls = module.Ctx
            return vars(module)
        # Compiled per load, not shared between switches that load the same source: CPython
        # 3.11 keeps its specialising caches in the code object, and switches sharing one (each
        # with its own globals and classes) ran the simulator 5-12 % slower.
        exec(compile(src, "<p4-generated>", "exec"), self.ns)
        return self.ns

    def _field_list_ops(self, meta_t: T.P4Type, meta_c: str, lists: dict[int, list[tuple[str, ...]]]
                        ) -> tuple[dict[int, tuple[str, str]], str]:
        """Per field list, a function reading its fields' values out of the user metadata (of
        class ``meta_c``) as one tuple and one writing such a tuple back (structs and headers
        copied both ways, so a preserved value is never shared): what a clone, resubmit or
        recirculation carries. Straight-line code, because an INT report's clone carries
        twelve fields and walking their paths with getattr cost 28,000 instructions each way;
        the metadata typed, so that compiled each field is a slot access (untyped, the
        twelve fields cost 6,700 instructions a clone, both ways).
        Returns ({field list id: (getter name, setter name)}, their code)."""
        o = Lines()
        names: dict[int, tuple[str, str]] = {}
        for i, (fl, paths) in enumerate(sorted(lists.items())):
            get, put = f"FL{i}_get", f"FL{i}_set"
            names[fl] = (get, put)
            copied = [is_aggregate(self._path_type(meta_t, p)) for p in paths]
            reads = [f"m.{'.'.join(p)}" + (".copy()" if c else "") for p, c in zip(paths, copied)]
            o(f"def {get}(m: {meta_c}) -> tuple:")
            with o.indent():
                o(f"return ({''.join(r + ', ' for r in reads)})")
            o(f"def {put}(m: {meta_c}, v: tuple) -> None:")
            with o.indent():
                for k, (p, c) in enumerate(zip(paths, copied)):
                    o(f"m.{'.'.join(p)} = v[{k}]" + (".copy()" if c else ""))
                o("return")
        return names, o.text()

    @staticmethod
    def _path_type(t: T.P4Type, path: tuple[str, ...]) -> T.P4Type:
        """The type of the field at attribute path ``path`` inside struct type ``t``."""
        for name in path:
            t = underlying(next(f.type for f in t.fields if attr(f.name) == name))
        return t

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
        args = {k: const_value(v) for k, v in (decl.ctor_args or {}).items()}
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

    def typed_param(self, name: str, p: A.Parameter) -> str:
        """``name: type`` of a generated function's parameter (see ``TypeClasses.annotation``;
        a deparser's ``packet_out`` is where the frame is written, ``TypeClasses.out_type``)."""
        if isinstance(p.type, T.ExternType) and p.type.name == "packet_out":
            return f"{name}: {self.types.out_type()}"
        return f"{name}: {self.types.annotation(p.type)}"

    # ---- functions -------------------------------------------------------------------------
    def gen_function(self, decl: A.FunctionDecl) -> None:
        name = f"F{next(self.obj_counter)}_{decl.name}"
        scope = Scope()
        pnames = [scope.bind(p, p.name) for p in decl.params]
        outs = [scope.get(p) for p in decl.params
                if p.direction in ("out", "inout") and not is_aggregate(underlying(p.type))]
        has_ret = not isinstance(getattr(decl.return_type, "type", T.VOID) or T.VOID, T.VoidType)
        self.functions[id(decl)] = (name, decl.params, has_ret)
        o = Lines()
        typed = [self.typed_param(n, p) for n, p in zip(pnames, decl.params)]
        o(f"def {name}({', '.join(typed + ['ctx: Any'])}):")
        with o.indent():
            g = StmtGen(self, scope, o, prefix="", outs=outs, has_ret=has_ret)
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
        scope = Scope()
        params = [p for p in decl.params]
        pnames = []
        typed = []
        for p in params:
            if isinstance(p.type, T.ExternType) and p.type.name == "packet_in":
                scope.names[id(p)] = "<pkt>"
                continue
            pnames.append(scope.bind(p, p.name))
            typed.append(self.typed_param(pnames[-1], p))
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
        # the offset after the last extracted header (an int: compiled, the caller's slice of
        # the payload is then a bytes slice, not a generic one), with a sub-parser's outs. The
        # offset inside is a machine integer compiled: the word reads' ``o + 4`` are then adds,
        # not tagged-int calls (~24 a packet) each converted back for the read
        ret = "tuple" if outs else "int"
        offset = "i64" if self.types.native else "int"
        o(f"def {name}(d: bytes, o: {offset}, {', '.join(typed + ['ctx: Any'])}) -> {ret}:")
        with o.indent():
            g = StmtGen(self, scope, o, prefix=prefix, outs=outs)
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
    def bind_ctor_params(self, decl: Any, scope: Scope, out: Lines, ctor_args: dict | None,
                         prefix: str) -> None:
        """Constructor parameters of a parser/control instance become constants (or the
        instance passed) inside its generated function."""
        for p in getattr(decl, "ctor_params", []) or []:
            v = const_value((ctor_args or {}).get(p.name, p.default))
            if isinstance(v, A.InstanceDecl) and id(v) in self.objects:
                scope.names[id(p)] = self.objects[id(v)]
                continue
            if isinstance(v, BlockRef):  # a parser/control instance: `c.apply()` calls it
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
        scope = Scope()
        pnames = []
        for p in decl.params:
            if isinstance(p.type, T.ExternType) and p.type.name == "packet_out":
                pnames.append(scope.bind(p, "out"))
                scope.packet_out = pnames[-1]
                continue
            pnames.append(scope.bind(p, p.name))
        typed = [self.typed_param(n, p) for n, p in zip(pnames, decl.params)]
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
        g = StmtGen(self, scope, body, prefix=prefix, outs=outs)
        self.bind_ctor_params(decl, scope, body, ctor_args, prefix)
        for loc in decl.locals:
            if isinstance(loc, A.VarDecl):
                g.var_decl(loc)
        g.block(decl.body)
        g.ret_stmt(None)
        o = self.out
        o(f"def {name}({', '.join(typed + ['ctx: Any'])}):")
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
            v = const_value(v)
            if isinstance(v, A.InstanceDecl) and isinstance(v.type, (T.ControlType, T.ParserType)):
                args[k] = BlockRef(*self.sub_block(v, prefix))
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
