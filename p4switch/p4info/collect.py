"""Walk a checked program and record what P4Info must show (see ``model.py``).

Follows what p4c's front end leaves for its P4Runtime serializer: only tables and actions that
the pipeline can reach are listed (p4c removes unused declarations); controls instantiated
inside a control are expanded in place and named by instance path (``FabricIngress.routing.
ecmp``), as p4c's inliner does; each control lists the top-level actions it uses first (p4c
copies them into the control); controls come in package order (parser, verify_checksum,
ingress, egress, compute_checksum, deparser), extern instances declared at top level before
them, and every other object in declaration order within its control.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from p4.config.v1 import p4info_pb2, p4types_pb2

from p4rt.bytestrings import padded as padded_bytes
from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.pretty import expr_text
from p4switch.p4info.model import (
    ActionInfo,
    ActionProfileInfo,
    ActionRefInfo,
    Annotations,
    ControllerHeaderInfo,
    CounterlikeInfo,
    DigestInfo,
    MatchFieldInfo,
    MetadataInfo,
    ParamInfo,
    ProgramInfo,
    RegisterInfo,
    TableInfo,
    ValueSetInfo,
)

STAGES = ("parser", "verify_checksum", "ingress", "egress", "compute_checksum", "deparser")
_SKIPPED_ANNOTATIONS = {"name", "id", "brief", "description"}
# Action profile annotations P4Info carries as fields, not as annotations.
_PROFILE_ANNOTATIONS = {"max_group_size", "selector_size_semantics", "max_member_weight"}


class P4InfoError(ValueError):
    """The program uses something P4Info cannot describe; ``node`` locates it."""

    def __init__(self, message: str, node: ast.Node | None = None) -> None:
        super().__init__(message)
        self.node = node


def annotation_text(a: ast.Annotation) -> str:
    """``@name(body)`` the way the annotation was written."""
    if a.raw:
        return f"@{a.name}({a.raw})"
    if a.args:
        return f"@{a.name}(" + ", ".join(expr_text(e) for e in a.args) + ")"
    return f"@{a.name}"


def notes_of(annotations: list[ast.Annotation]) -> Annotations:
    notes = Annotations()
    for a in annotations:
        if a.name == "id":
            notes.at_id = _annotation_int(a)
        elif a.name in ("brief", "description"):
            text = _annotation_string(a)
            setattr(notes, a.name, text)
        if a.name not in _SKIPPED_ANNOTATIONS:
            notes.texts.append(annotation_text(a))
    return notes


def _annotation_int(a: ast.Annotation) -> int:
    if a.args and isinstance(a.args[0].value, int):
        return a.args[0].value
    try:
        return int(a.raw.strip(), 0)
    except ValueError:
        raise P4InfoError(f"@{a.name} needs an integer argument", a) from None


def _annotation_string(a: ast.Annotation) -> str:
    if a.args and isinstance(a.args[0], ast.StringLiteral):
        return a.args[0].value
    return a.raw.strip().strip('"')


def type_name_of(decl: ast.Declaration) -> str:
    a = decl.annotation("name")
    return _annotation_string(a).lstrip(".") if a is not None else decl.name


def translation(t: T.P4Type) -> tuple[str, int | None] | None:
    """``@p4runtime_translation("uri", W)`` of a new type: the URI and the width the controller
    sees (W a number or ``bit<W>``; None for ``string``), or None without the annotation."""
    if not isinstance(t, T.NewType) or t.decl is None:
        return None
    a = t.decl.annotation("p4runtime_translation")
    if a is None:
        return None
    if a.args and isinstance(a.args[0], ast.StringLiteral):
        uri, rest = a.args[0].value, a.raw.split(",", 1)[1] if "," in (a.raw or "") else ""
        if len(a.args) > 1 and isinstance(a.args[1].value, int):
            return uri, a.args[1].value
    else:
        m = re.match(r'\s*"([^"]*)"\s*,(.*)', a.raw or "", re.DOTALL)
        if m is None:
            raise P4InfoError("@p4runtime_translation needs a URI and a width, bit<W> or string", a)
        uri, rest = m.group(1), m.group(2)
    rest = rest.strip()
    if rest == "string":
        return uri, None
    m = re.fullmatch(r"(?:bit\s*<\s*(\d+)\s*>|(\d+))", rest)
    if m is None:
        raise P4InfoError("@p4runtime_translation needs a URI and a width, bit<W> or string", a)
    return uri, int(m.group(1) or m.group(2))


def width_of(t: T.P4Type) -> int:
    """Bit width the control plane sees (a translated new type's, when it has one)."""
    translated = translation(t)
    if translated is not None:
        return translated[1] or 0
    t = T.underlying(t)
    if isinstance(t, T.BoolType):
        return 1
    if isinstance(t, T.ErrorType):
        return 0
    return t.bit_width()


def _value_of(v: Any) -> Any:
    """Constructor arguments arrive folded; enum members may be names or member objects."""
    if isinstance(v, ast.Expression):
        return v.value
    return getattr(v, "name", v)


class _Collector:
    def __init__(self, checked: Any) -> None:
        self.checked = checked
        self.info = ProgramInfo()
        self.used: set[int] = set()
        self.profiles: dict[str, ActionProfileInfo] = {}
        self.seen_actions: set[str] = set()
        self.digest_names: set[str] = set()

    # --- reachability -------------------------------------------------------------------
    def mark_used(self, root: ast.Node) -> None:
        """Everything the pipeline can reach, like p4c's repeated unused-declaration pass."""
        stack = [root]
        while stack:
            node = stack.pop()
            for sub in live_walk(node):
                for decl in self._references(sub):
                    if id(decl) not in self.used:
                        self.used.add(id(decl))
                        sub_control = _control_of(decl)
                        if sub_control is not None:
                            stack.append(sub_control.body)
                        elif isinstance(decl, (ast.ActionDecl, ast.TableDecl, ast.FunctionDecl, ast.InstanceDecl)):
                            stack.append(decl)

    @staticmethod
    def _references(node: ast.Node) -> list[Any]:
        found = []
        for attr in ("decl", "action"):
            target = getattr(node, attr, None)
            if isinstance(target, ast.Declaration):
                found.append(target)
        return found

    # --- naming -----------------------------------------------------------------------------
    def name(self, decl: ast.Node, prefix: str | None = None) -> str:
        """Control-plane name of a declaration local to the block at path ``prefix`` (e.g.
        ``FabricIngress.routing`` for a control instantiated as ``routing`` in FabricIngress),
        or of a top-level one when ``prefix`` is None. The front end holds the rule, so the
        executor names every object the same way."""
        return self.checked.control_plane_name(decl, prefix)

    def action_name(self, action: ast.ActionDecl, prefix: str) -> str:
        """A table's action is either local to the table's control or a top-level one."""
        return self.name(action, None if self.checked.enclosing_block(action) is None else prefix)

    def flatten(self, control: ast.ControlDecl, prefix: str) -> list[tuple[str, ast.Node]]:
        """The control's locals with sub-control instances expanded in place (p4c inlines
        them before generating P4Info): (path of the enclosing block, declaration) pairs."""
        out: list[tuple[str, ast.Node]] = []
        for decl in control.locals:
            sub = _control_of(decl)
            if sub is not None:
                out.extend(self.flatten(sub, self.name(decl, prefix)))
            else:
                out.append((prefix, decl))
        for sub in _directly_applied(control):
            out.extend(self.flatten(sub, f"{prefix}.{sub.name}"))
        return out

    def bodies(self, control: ast.ControlDecl) -> list[ast.Node]:
        """Apply blocks of a control and of every control instantiated or applied in it."""
        found = [control.body]
        for decl in control.locals:
            sub = _control_of(decl)
            if sub is not None:
                found.extend(self.bodies(sub))
        for sub in _directly_applied(control):
            found.extend(self.bodies(sub))
        return found

    # --- top level ------------------------------------------------------------------------
    def run(self) -> ProgramInfo:
        blocks = []
        for stage in STAGES:
            decl = self.checked.pipeline.get(stage)
            if isinstance(decl, ast.InstanceDecl):  # an instance of a control/parser type
                decl = decl.type.decl
            if decl is not None:
                # a control's tables and actions count only if its apply block reaches them
                self.mark_used(decl.body if isinstance(decl, ast.ControlDecl) else decl)
                blocks.append(decl)
        # p4c walks the evaluated program breadth first: instances declared at top level come
        # before the package's blocks, each block's actions before any block's tables
        for decl in self.checked.program.declarations:
            if isinstance(decl, ast.InstanceDecl) and isinstance(decl.type, T.ExternType):
                self.extern_instance(decl, None)
        flat = {id(b): self.flatten(b, self.name(b)) for b in blocks if isinstance(b, ast.ControlDecl)}
        for block in blocks:
            if isinstance(block, ast.ControlDecl):
                self.control_actions(block, flat[id(block)])
        for block in blocks:
            if isinstance(block, ast.ControlDecl):
                self.control_objects(flat[id(block)])
            elif isinstance(block, ast.ParserDecl):
                self.parser_objects(block)
        for prof in self.profiles.values():
            self.info.action_profiles.append(prof)
        for decl in self.checked.program.declarations:
            if isinstance(decl, ast.HeaderDecl) and decl.annotation("controller_header"):
                self.controller_header(decl)
        self.package(self.checked.program)
        return self.info

    def package(self, program: ast.Program) -> None:
        for decl in program.declarations:
            if isinstance(decl, ast.InstanceDecl) and decl.name == "main":
                kept = []
                for a in decl.annotations:
                    if a.name == "pkginfo":
                        for key, value in re.findall(r'(\w+)\s*=\s*"([^"]*)"', a.raw or ""):
                            if key in ("name", "version", "organization", "contact", "url", "arch"):
                                self.info.pkg_fields[key] = value
                    elif a.name == "platform_property":
                        for key, value in re.findall(r'(\w+)\s*=\s*(\d+)', a.raw or ""):
                            if key not in p4info_pb2.PlatformProperties.DESCRIPTOR.fields_by_name:
                                raise P4InfoError(f"@platform_property: unknown property '{key}'", a)
                            self.info.platform_properties[key] = int(value)
                    else:
                        kept.append(a)
                self.info.pkg_annotations = notes_of(kept)

    # --- actions --------------------------------------------------------------------------
    def implicit_default(self, table: ast.TableDecl) -> ast.ActionDecl | None:
        """The ``NoAction`` p4c makes the default of a table that declares none (its front
        end's CreateBuiltins pass), or None when the table declares a default."""
        if table.default_action is not None:
            return None
        for decl in self.checked.program.declarations:
            if isinstance(decl, ast.ActionDecl) and decl.name == "NoAction":
                return decl
        raise P4InfoError(f"table {table.name} has no default action and NoAction is not declared; "
                          "did you include core.p4?", table)

    def control_actions(self, control: ast.ControlDecl, flat: list[tuple[str, ast.Node]]) -> None:
        """Top-level actions the control uses (in order of first use), then its own.

        As p4c's front and mid end leave them: the actions of its applied tables (with their
        parameters), and actions its apply blocks call directly (p4c binds the arguments and
        wraps the call in a hidden table: listed without parameters). An action only called
        from other actions is inlined there and gone."""
        local_ids = {id(d) for _, d in flat}
        bodies = self.bodies(control)
        listed: dict[int, bool] = {}  # action -> listed with its parameters
        order: list[ast.ActionDecl] = []

        def note(action: Any, with_params: bool) -> None:
            if isinstance(action, ast.ActionDecl):
                if id(action) not in listed:
                    order.append(action)
                listed[id(action)] = listed.get(id(action), False) or with_params

        for _, decl in flat:
            if isinstance(decl, ast.TableDecl) and id(decl) in self.used:
                for sub in decl.walk():
                    if isinstance(sub, ast.ActionRef):
                        note(sub.decl, True)
                note(self.implicit_default(decl), True)
        for body in bodies:
            for sub in live_walk(body):
                if isinstance(sub, ast.MethodCall) and sub.kind == "action":
                    note(sub.decl, False)
        for action in order:
            self.used.add(id(action))
        for action in [a for a in order if id(a) not in local_ids]:
            self.action(action, None, listed[id(action)])
            self.extern_calls_in(action.body)
        for prefix, decl in flat:
            if id(decl) in listed:
                self.action(decl, prefix, listed[id(decl)])
                self.extern_calls_in(decl.body)
        for body in bodies:
            self.extern_calls_in(body)

    def action(self, decl: ast.ActionDecl, prefix: str | None, with_params: bool = True) -> None:
        name = self.name(decl, prefix)
        if name in self.seen_actions:
            return
        self.seen_actions.add(name)
        params = []
        for p in decl.params:
            if p.direction not in (None, "") or not with_params:
                continue
            params.append(ParamInfo(self.checked.control_plane_name(p), width_of(p.type), notes_of(p.annotations),
                                    self.named_type(p.type)))
        self.info.actions.append(ActionInfo(name, params, notes_of(decl.annotations)))

    def extern_calls_in(self, body: ast.Node | None, seen: set[int] | None = None) -> None:
        """Digests, and whether the controls call any extern function at all (p4c's
        serializer hands each such call to the architecture, which opens type_info), through
        the functions and actions they call (p4c inlines those first)."""
        if body is None:
            return
        seen = set() if seen is None else seen
        for sub in live_walk(body):
            if not isinstance(sub, ast.MethodCall):
                continue
            if sub.kind == "extern_function" and not getattr(sub, "is_const", False):  # static_assert folds
                self.info.uses_externs = True
                if sub.method_name == "digest":
                    data_type = sub.signature.params[1].type if sub.signature else sub.args[1].value.type
                    self.digest(data_type, sub)
            elif sub.kind in ("function", "action") and id(sub.decl) not in seen:  # inlined by p4c
                seen.add(id(sub.decl))
                self.extern_calls_in(sub.decl.body, seen)

    def digest(self, data_type: T.P4Type, node: ast.Node) -> None:
        if not isinstance(data_type, T.StructType):
            raise P4InfoError("digest data must be a struct for P4Runtime", node)
        name = type_name_of(data_type.decl) if data_type.decl is not None else data_type.name
        if name in self.digest_names:
            return
        self.digest_names.add(name)
        spec = self.type_spec(data_type)
        self.info.digests.append(DigestInfo(name, spec))

    # --- tables and externs ---------------------------------------------------------------
    def control_objects(self, flat: list[tuple[str, ast.Node]]) -> None:
        for prefix, decl in flat:
            if isinstance(decl, ast.TableDecl) and id(decl) in self.used:
                self.table(decl, prefix)
            elif isinstance(decl, ast.InstanceDecl) and isinstance(decl.type, T.ExternType):
                self.extern_instance(decl, prefix)

    def parser_objects(self, parser: ast.ParserDecl, prefix: str | None = None) -> None:
        """The parser's value sets and externs, and those of the sub-parsers it instantiates
        (named by instance path, ``parserImpl.p1.ipv4_ethertypes``, as p4c's inliner does)."""
        prefix = self.name(parser) if prefix is None else prefix
        for decl in parser.locals:
            if isinstance(decl, ast.ValueSetDecl):
                self.value_set(decl, prefix)
            elif isinstance(decl, ast.InstanceDecl) and isinstance(decl.type, T.ExternType):
                self.extern_instance(decl, prefix)
            elif isinstance(decl, ast.InstanceDecl) and isinstance(getattr(decl.type_ref, "decl", None), ast.ParserDecl):
                self.parser_objects(decl.type_ref.decl, self.name(decl, prefix))

    def table(self, decl: ast.TableDecl, prefix: str) -> None:
        name = self.name(decl, prefix)
        info = TableInfo(name, notes=notes_of(decl.annotations))
        for key in decl.key:
            if key.match_kind == "selector":
                continue
            info.match_fields.append(MatchFieldInfo(self.checked.key_name(key), width_of(key.expr.type), key.match_kind,
                                                    notes_of(key.annotations), self.named_type(key.expr.type)))
        for ref in decl.actions:
            info.action_refs.append(ActionRefInfo(self.action_name(ref.decl, prefix), notes_of(ref.annotations)))
        noaction = self.implicit_default(decl)
        if noaction is not None:
            if all(ref.decl is not noaction for ref in decl.actions):
                info.action_refs.append(ActionRefInfo("NoAction", Annotations(texts=["@defaultonly"])))
            info.initial_default = ("NoAction", [])
        else:
            action = decl.default_action.decl
            if decl.default_action_const:
                info.const_default_action = self.action_name(action, prefix)
            cp_params = [p for p in action.params if p.direction in (None, "")]
            args = [a.value.value for a in decl.default_action.args][-len(cp_params):] if cp_params else []
            info.initial_default = (self.action_name(action, prefix),
                                    [(int(v), width_of(p.type)) for v, p in zip(args, cp_params)])
        size = decl.prop("size")
        if size is not None and size.value.value:
            info.size = int(size.value.value)
        info.is_const = decl.entries_const  # "const entries = { }" too (p4c)
        info.has_initial_entries = bool(decl.entries)
        timeout = decl.prop("support_timeout")
        info.support_timeout = bool(timeout is not None and timeout.value.value)
        for prop_name in ("implementation", "counters", "meters"):
            prop = decl.prop(prop_name)
            if prop is None:
                continue
            source, inst_name, annotations = self.property_instance(decl, prop, name, prefix)
            if prop_name == "implementation":
                info.implementation = inst_name
                self.profile(source, inst_name, annotations).tables.append(name)
            elif prop_name == "counters":
                info.direct_counter = inst_name
                self.direct(source, inst_name, name, annotations, self.info.direct_counters)
            else:
                info.direct_meter = inst_name
                self.direct(source, inst_name, name, annotations, self.info.direct_meters)
        self.info.tables.append(info)

    def property_instance(self, table: ast.TableDecl, prop: ast.TableProperty, table_name: str,
                          prefix: str | None) -> tuple[Any, str, list[ast.Annotation]]:
        """The extern a table property names or constructs in place (``implementation =
        action_profile(32w128)``: the constructor call carries ``.type`` and ``.ctor_args``
        like an instance), its P4Info name and the annotations that describe it."""
        value = prop.value
        if isinstance(value, ast.MethodCall) and value.kind == "constructor":
            inst_name = self.checked.inline_instance_name(prop)
            if inst_name is None:  # p4c's rule and wording
                raise P4InfoError(f"Table '{table_name}' has an anonymous table property '{prop.name}' "
                                  "with no name annotation, which is not supported by P4Runtime", prop)
            return value, inst_name, prop.annotations
        instance = getattr(value, "decl", None)
        if not isinstance(instance, ast.InstanceDecl):
            raise P4InfoError(f"table {table_name}: '{prop.name}' must name an instance declared in the "
                              "control or construct one in place", prop)
        inst_prefix = None if self.checked.enclosing_block(instance) is None else prefix
        return instance, self.name(instance, inst_prefix), instance.annotations

    def profile(self, source: Any, name: str, annotations: list[ast.Annotation]) -> ActionProfileInfo:
        """``source``: the action_profile/action_selector instance or in-place constructor call."""
        if name not in self.profiles:
            selector = source.type.name == "action_selector"
            size = int(_value_of(source.ctor_args["size"]))
            prof = ActionProfileInfo(name, selector, size, notes=notes_of(
                [a for a in annotations if a.name not in _PROFILE_ANNOTATIONS]))
            # p4c's sizing annotations apply to selectors only (it warns and ignores them else)
            max_group = ast.find_annotation(annotations, "max_group_size")
            semantics = ast.find_annotation(annotations, "selector_size_semantics")
            weight = ast.find_annotation(annotations, "max_member_weight")
            if selector and max_group is not None:
                prof.max_group_size = _annotation_int(max_group)
            if selector and semantics is not None:
                prof.size_semantics = _annotation_string(semantics).lower()
                if prof.size_semantics not in ("sum_of_weights", "sum_of_members"):
                    raise P4InfoError('Expected selector_size_semantics value "sum_of_weights" or '
                                      f'"sum_of_members", but got \'{prof.size_semantics}\'', semantics)
            if selector and weight is not None and prof.size_semantics == "sum_of_members":
                prof.max_member_weight = _annotation_int(weight)
            self.profiles[name] = prof
        return self.profiles[name]

    def direct(self, source: Any, name: str, table: str, annotations: list[ast.Annotation],
               into: list[CounterlikeInfo]) -> None:
        into.append(CounterlikeInfo(name, str(_value_of(source.ctor_args["type"])),
                                    direct_table=table, notes=notes_of(annotations)))

    def extern_instance(self, decl: ast.InstanceDecl, prefix: str | None) -> None:
        self.info.uses_externs = True  # p4c hands every extern instance to the architecture
        kind = decl.type.name
        name = self.name(decl, prefix)
        if kind in ("counter", "meter"):
            target = self.info.counters if kind == "counter" else self.info.meters
            target.append(CounterlikeInfo(name, str(_value_of(decl.ctor_args["type"])),
                                          int(_value_of(decl.ctor_args["size"])), notes=notes_of(decl.annotations)))
        elif kind == "register":
            spec = self.type_spec(decl.type.type_args[0])
            self.info.registers.append(RegisterInfo(name, int(_value_of(decl.ctor_args["size"])), spec,
                                                    notes_of(decl.annotations)))
        elif kind in ("action_profile", "action_selector"):
            self.profile(decl, name, decl.annotations)

    def value_set(self, decl: ast.ValueSetDecl, prefix: str) -> None:
        elem = decl.elem_type.type
        info = ValueSetInfo(self.name(decl, prefix), int(decl.size.value),
                            notes=notes_of(decl.annotations))
        if isinstance(elem, T.StructType):
            for fld in elem.fields:
                match = ast.find_annotation(fld.annotations, "match")
                kind = expr_text(match.args[0]) if match and match.args else (match.raw if match else "exact")
                kept = [a for a in fld.annotations if a.name != "match"]
                info.match.append(MatchFieldInfo(fld.name, width_of(fld.type), kind, notes_of(kept)))
        else:
            info.match.append(MatchFieldInfo("", width_of(elem), "exact"))
        self.info.value_sets.append(info)

    def controller_header(self, decl: ast.HeaderDecl) -> None:
        a = decl.annotation("controller_header")
        header = ControllerHeaderInfo(_annotation_string(a), type_name_of(decl), notes=notes_of(decl.annotations))
        for name, t, notes in _flat_fields(decl.type.fields, ""):
            header.metadata.append(MetadataInfo(name, width_of(t), notes_of(notes), self.named_type(t)))
        self.info.controller_headers.append(header)

    # --- type specs (registers, digests, user-defined types) ------------------------------
    def named_type(self, t: T.P4Type) -> str | None:
        """Record a user-defined type in type_info, as p4c's type converter does for every
        match field, parameter and metadata field; only a ``type`` (new type) is also named
        on the field itself."""
        if isinstance(t, (T.NewType, T.SerEnumType)):
            self.type_spec(t)
        return t.name if isinstance(t, T.NewType) else None

    def type_spec(self, t: T.P4Type) -> p4types_pb2.P4DataTypeSpec:
        spec = p4types_pb2.P4DataTypeSpec()
        type_info = self.info.type_info
        if isinstance(t, T.BitsType):
            (spec.bitstring.int if t.signed else spec.bitstring.bit).bitwidth = t.width
        elif isinstance(t, T.VarbitType):
            spec.bitstring.varbit.max_bitwidth = t.max_width
        elif isinstance(t, T.BoolType):
            spec.bool.SetInParent()
        elif isinstance(t, T.ErrorType):
            spec.error.SetInParent()
            type_info.error.members[:] = t.members
        elif isinstance(t, T.TupleType):
            for e in t.elems:
                spec.tuple.members.add().CopyFrom(self.type_spec(e))
        elif isinstance(t, T.StackType):
            spec.header_stack.header.name = type_name_of(t.elem.decl) if t.elem.decl else t.elem.name
            spec.header_stack.size = t.size
            self.type_spec(t.elem)
        elif isinstance(t, (T.StructType, T.HeaderType, T.HeaderUnionType)):
            name = type_name_of(t.decl) if t.decl is not None else t.name
            kind = {T.StructType: "struct", T.HeaderType: "header", T.HeaderUnionType: "header_union"}[type(t)]
            getattr(spec, kind).name = name
            table = {"struct": type_info.structs, "header": type_info.headers,
                     "header_union": type_info.header_unions}[kind]
            if name not in table:
                entry = table[name]
                for fld in t.fields:
                    member_spec = self.type_spec(fld.type)
                    if kind == "header":
                        member = entry.members.add()
                        member.name = fld.name
                        member.type_spec.CopyFrom(member_spec.bitstring)
                    elif kind == "header_union":
                        member = entry.members.add()
                        member.name = fld.name
                        member.header.CopyFrom(member_spec.header)
                    else:
                        member = entry.members.add()
                        member.name = fld.name
                        member.type_spec.CopyFrom(member_spec)
        elif isinstance(t, T.SerEnumType):
            spec.serializable_enum.name = t.name
            if t.name not in type_info.serializable_enums:
                entry = type_info.serializable_enums[t.name]
                entry.underlying_type.bitwidth = t.underlying.width
                for member_name, value in t.members.items():
                    m = entry.members.add()
                    m.name = member_name
                    m.value = padded_bytes(value, t.underlying.width)
        elif isinstance(t, T.EnumType):
            spec.enum.name = t.name
            if t.name not in type_info.enums:
                entry = type_info.enums[t.name]
                for member_name in t.members:
                    entry.members.add().name = member_name
        elif isinstance(t, T.NewType):
            spec.new_type.name = t.name
            if t.name not in type_info.new_types:
                entry = type_info.new_types[t.name]
                if t.decl is not None:
                    entry.annotations.extend(notes_of([a for a in t.decl.annotations
                                                       if a.name != "p4runtime_translation"]).texts)
                translated = translation(t)
                if translated is not None:
                    entry.translated_type.uri = translated[0]
                    if translated[1] is None:
                        entry.translated_type.sdn_string.SetInParent()
                    else:
                        entry.translated_type.sdn_bitwidth = translated[1]
                else:  # p4c describes a new type of a new type by the representation
                    original = t.underlying
                    while isinstance(original, T.NewType):
                        original = original.underlying
                    entry.original_type.CopyFrom(self.type_spec(original))
        else:
            raise P4InfoError(f"type {t} cannot be described in P4Info")
        return spec


def _flat_fields(fields: list[T.Field], prefix: str) -> list[tuple[str, T.P4Type, list[ast.Annotation]]]:
    """A header's fields with struct-typed ones expanded to theirs (``b.b``), as p4c flattens
    a controller header before describing it."""
    out = []
    for fld in fields:
        if isinstance(fld.type, T.StructType):
            out.extend(_flat_fields(fld.type.fields, f"{prefix}{fld.name}."))
        else:
            out.append((prefix + fld.name, fld.type, fld.annotations))
    return out


def _control_of(decl: Any) -> ast.ControlDecl | None:
    """The control declaration a local instance instantiates, or a control applied directly
    by its type name (``myc.apply(...)``); None for anything else."""
    if isinstance(decl, ast.ControlDecl):
        return decl
    if isinstance(decl, ast.InstanceDecl):
        target = getattr(decl.type_ref, "decl", None)
        if isinstance(target, ast.ControlDecl):
            return target
    return None


def _directly_applied(control: ast.ControlDecl) -> list[ast.ControlDecl]:
    """Controls the apply block applies by type name (``myc.apply(...)``): p4c makes each an
    instance named like its type, local to ``control``."""
    found: list[ast.ControlDecl] = []
    for sub in live_walk(control.body):
        if (isinstance(sub, ast.MethodCall) and sub.kind == "control_apply"
                and isinstance(sub.decl, ast.ControlDecl) and sub.decl not in found):
            found.append(sub.decl)
    return found


def collect(checked: Any) -> ProgramInfo:
    return _Collector(checked).run()


def live_walk(root: ast.Node) -> Iterator[ast.Node]:
    """``root.walk()`` without the branch of an ``if`` or ``?:`` that a constant condition
    never takes: p4c removes it before generating P4Info, so an action or table used only
    there is not listed. (Code after an ``exit`` stays: p4c lists an action called there.)"""
    stack: list[ast.Node] = [root]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.IfStatement, ast.Ternary)) and getattr(node.cond, "is_const", False):
            taken = node.then if node.cond.value else node.else_
            stack.extend(x for x in (taken, node.cond) if x is not None)
            continue
        stack.extend(reversed(list(node.children())))
