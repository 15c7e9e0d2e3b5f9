"""Runtime objects built at load time from the program's declarations: tables (keys,
actions, default and const entries, implementations) and the action descriptions the
control plane sees."""

from __future__ import annotations

from typing import Any

from p4rt.entries import ActionCall, EntryError, Exact, Lpm, MatchKind, Optional, Range, TableEntry, Ternary
from p4switch.exec.codegen import scalar_width, underlying
from p4switch.exec.compile_base import (
    UnsupportedError,
    has_ann,
)
from p4switch.exec.externs import DirectCounter, DirectMeter
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


class RuntimeObjects:
    """Mixed into ProgramCompiler: builds the control-plane objects a table declaration names."""

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
            if has_ann(ref, "tableonly"):
                scopes[an] = TABLE_ONLY
            elif has_ann(ref, "defaultonly"):
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
