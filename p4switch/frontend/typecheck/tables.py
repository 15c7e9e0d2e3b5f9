"""Tables: typing their keys, actions, default action, entries and properties (part of
``type-inference``), and the ``table-checks`` pass (``check_tables``), which then checks what
v1model requires of a table beyond types: match kinds, an actions list without repeats,
@tableonly/@defaultonly, the keyset forms each match kind allows, entry priorities, and the
properties v1model gives meaning to.
"""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError, plural
from p4switch.frontend.pretty import expr_text

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


class Tables:
    """Checking ``table`` declarations."""

    def check_table(self, d: ast.TableDecl) -> None:
        for k in d.key:
            k.expr = self.expr(k.expr)
            kt = k.expr.type
            if kt == T.INT or not isinstance(T.underlying(kt), (T.BitsType, T.BoolType)) and \
                    not isinstance(kt, (T.ErrorType, T.EnumType)):
                raise self.err(k.expr, f"table key must be bit<>, int<>, bool, error or an "
                                       f"enum, not {kt}")
        names: dict[str, ast.ActionRef] = {}
        for ref in d.actions:
            self.resolve_action_ref(ref, partial=True)
            names.setdefault(ref.decl.name, ref)
        if d.default_action is not None:
            self.resolve_action_ref(d.default_action, partial=False, table_actions=names)
        for e in d.entries:
            self.type_entry(d, e, names)
        res = T.TableApplyResultType(d, T.ActionEnumType(d, list(names)))
        d.type = T.TableType(d.name, d, res)
        for p in d.properties:
            p.value = self.expr(p.value, T.BOOL if p.name == "support_timeout" else None)

    def resolve_action_ref(self, ref: ast.ActionRef, partial: bool,
                           table_actions: dict[str, ast.ActionRef] | None = None,
                           what: str = "default action") -> None:
        """An action named in a table: ``partial`` for the actions list (binds only the
        directional parameters), else default action or entry (``table_actions`` given:
        must be listed there, and may leave out directional parameters bound there)."""
        decl = self.refs.decl(ref.name)
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
                                    f"{plural(len(bound), 'argument')}, got {len(ref.args)}")
            for a, p in zip(ref.args, bound):
                a.name = p.name
                self.check_arg(a, p)
            return
        if len(ref.args) != len(params):
            cp = [p for p in params if p.direction is None]
            if table_actions is not None and len(ref.args) == len(cp):
                params = cp  # directional ones bound in the actions list
            else:
                raise self.err(ref, f"action '{decl.name}' takes "
                                    f"{plural(len(params), 'argument')}, got {len(ref.args)}")
        for a, p in zip(ref.args, params):
            if a.name is not None and a.name != p.name:
                raise self.err(a, f"argument '{a.name}' of action '{decl.name}' is missing or "
                                  f"misplaced (expected '{p.name}')")
            a.name = p.name
            self.check_arg(a, p)
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

    def type_entry(self, d: ast.TableDecl, e: ast.TableEntry,
                   names: dict[str, ast.ActionRef]) -> None:
        if len(e.keys) != len(d.key):
            raise self.err(e, f"entry has {len(e.keys)} key values but table {d.name} has "
                              f"{len(d.key)} key fields")
        for i, (k, ke) in enumerate(zip(e.keys, d.key)):
            e.keys[i] = self.keyset_element(k, ke.expr.type)
        self.resolve_action_ref(e.action, partial=False, table_actions=names,
                                what="entry action")
        if e.priority is not None:
            e.priority = self.expr(e.priority)
            if e.priority.is_const and isinstance(e.priority.value, int):
                e.priority_value = e.priority.value
        else:
            ann = e.annotations and ast.find_annotation(e.annotations, "priority")
            if ann and ann.args:
                v = self.expr(ann.args[0])
                e.priority_value = v.value if v.is_const else None

    def keyset_element(self, k: ast.Expression, t: T.P4Type) -> ast.Expression:
        """A keyset (select case, table entry) matching values of type ``t``: a constant, a
        mask or range of constants, ``_``/``default``, or a value_set."""
        k = self._keyset_of_type(k, t)
        if not (k.is_const or isinstance(k, (ast.DontCare, ast.DefaultExpr))
                or isinstance(k.type, T.SetType) and not isinstance(k, (ast.Mask, ast.Range))):
            raise self.err(k, "a keyset must be a compile-time constant")
        return k

    def _keyset_of_type(self, k: ast.Expression, t: T.P4Type) -> ast.Expression:
        if isinstance(t, T.SerEnumType):
            # p4c also takes values of the enum's underlying type for a serializable-enum
            # key (``(bit<16>)E.A &&& 0xff00``): the key converts implicitly
            try:
                return self._keyset_element(self.refs.copy_tree(k), t)
            except CompileError:
                return self._keyset_element(k, t.underlying)
        return self._keyset_element(k, t)

    def _keyset_element(self, k: ast.Expression, t: T.P4Type) -> ast.Expression:
        if isinstance(k, (ast.DontCare, ast.DefaultExpr)):
            k.type = T.DONT_CARE
            return k
        if isinstance(k, ast.Mask):
            k.value_expr = self.coerce(self.expr(k.value_expr, t), t, "keyset value")
            k.mask = self.coerce(self.expr(k.mask, t), t, "keyset mask")
            k.type = T.SetType(t)
            self.folding.fold(k)
            return k
        if isinstance(k, ast.Range):
            k.low = self.coerce(self.expr(k.low, t), t, "range low bound")
            k.high = self.coerce(self.expr(k.high, t), t, "range high bound")
            k.type = T.SetType(t)
            self.folding.fold(k)
            return k
        k = self.expr(k, t)
        if isinstance(k.type, T.SetType):  # value_set
            return k
        return self.coerce(k, t, "keyset value")


def check_tables(typer) -> None:
    """The ``table-checks`` pass over every table of a typed program (``typer``: the
    ``TypeInference`` that typed it)."""
    for d in typer.program.walk():
        if isinstance(d, ast.TableDecl):
            _check_table(typer, d)


def _check_table(typer, d: ast.TableDecl) -> None:
    err = typer.err
    for k in d.key:
        if k.match_kind not in typer.match_kind_type.members:
            raise err(k.match_kind_loc or k, f"'{k.match_kind}' is not a match_kind")
    if not d.has_actions_property:
        raise err(d, f"table {d.name} has no actions property")
    names: dict[str, ast.ActionRef] = {}
    for ref in d.actions:
        if ref.decl.name in names:
            raise err(ref, f"action '{ref.decl.name}' appears twice in table {d.name}")
        names[ref.decl.name] = ref
    if d.default_action is not None and ast.find_annotation(
            names[d.default_action.decl.name].annotations, "tableonly"):
        raise err(d.default_action, f"action '{d.default_action.decl.name}' is @tableonly and "
                                    f"cannot be the default action")
    for e in d.entries:
        for k, ke in zip(e.keys, d.key):
            allowed = _ENTRY_FORMS.get(ke.match_kind)
            form = type(k).__name__
            if allowed is not None and form in _FORM_NAMES and form not in allowed:
                raise err(k, f"{_FORM_NAMES[form]} is not allowed for {ke.match_kind} key field "
                             f"'{expr_text(ke.expr)}'")
        if ast.find_annotation(names[e.action.decl.name].annotations, "defaultonly"):
            raise err(e.action, f"action '{e.action.decl.name}' is @defaultonly and cannot be "
                                f"used in table entries")
        if e.priority is not None:
            if d.entries_const:  # as p4c's EntryPriorities pass
                raise err(e.priority, "a table with 'const' entries cannot have priorities "
                                      "(use 'entries', or @priority as BMv2 reads it)")
            if e.priority_value is None:
                raise err(e.priority, "entry priority must be an integer constant")
    for p in d.properties:
        _check_property(typer, p)


# table properties v1model gives meaning to, and the externs each takes
_PROPERTY_EXTERNS = {"implementation": ("action_profile", "action_selector"),
                     "counters": ("direct_counter", "counter"),
                     "meters": ("direct_meter", "meter")}
_V1_TABLE_EXTERNS = {x for kinds in _PROPERTY_EXTERNS.values() for x in kinds}


def _check_property(typer, p: ast.TableProperty) -> None:
    if p.name == "size":
        if not p.value.is_const or not isinstance(p.value.value, int) or p.value.value < 0:
            raise typer.err(p.value, "table size must be a non-negative constant")
    elif p.name == "support_timeout":
        if p.value.type != T.BOOL:
            raise typer.err(p.value, "support_timeout must be true or false")
    elif p.name in _PROPERTY_EXTERNS:
        want = _PROPERTY_EXTERNS[p.name]
        t = p.value.type
        # p4c's front end takes any extern here (other architectures have their own);
        # a v1model table extern of the wrong kind is an error
        if not isinstance(t, T.ExternType) or (t.name in _V1_TABLE_EXTERNS and t.name not in want):
            raise typer.err(p.value, f"table property '{p.name}' must be an instance of "
                                     f"{' or '.join(want)}, not {t}")
