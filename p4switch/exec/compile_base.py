"""What the code-generation modules share: the result type, the load-time error, the
name scope of one generated function and small questions asked of the AST."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from p4switch.exec.codegen import underlying
from p4switch.exec.externs import Register, ValueSet
from p4switch.exec.tables import (
    ActionInfo,
    ActionProfile,
    Table,
)
from p4switch.frontend import ast as A
from p4switch.frontend import types as T

PARSER_LOOP_LIMIT = 1024

# generated code that names a value already computed: a literal or a temporary (``_r4[0]``)
STABLE = re.compile(r"-?\d+|True|False|None|_[A-Za-z]\w*(\[\d+\])?")


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
    entries: dict[str, Callable]  # the generated entry points by name (``entries.py``)
    hdr_cls: type
    tables: dict[str, Table] = field(default_factory=dict)
    action_profiles: dict[str, ActionProfile] = field(default_factory=dict)
    counters: dict[str, Any] = field(default_factory=dict)
    meters: dict[str, Any] = field(default_factory=dict)
    registers: dict[str, Register] = field(default_factory=dict)
    value_sets: dict[str, ValueSet] = field(default_factory=dict)
    actions: dict[str, ActionInfo] = field(default_factory=dict)
    # field list id -> (read its values out of the user metadata, write them back)
    field_lists: dict[int, tuple[Callable, Callable]] = field(default_factory=dict)
    error_codes: dict[str, int] = field(default_factory=dict)
    backend: str = "python"  # what runs the generated code: exec'd Python or mypyc's C (native.py)
    module_file: str | None = None  # the mypyc backend's built extension, in its cache
    objects: Any = None  # the mypyc backend: this load's own runtime objects (``ctx.objs``)
    context_cls: type | None = None  # the mypyc backend's native ``Ctx`` (``native.CONTEXT_CLASS``)


def const_value(v: Any) -> Any:
    """A folded constructor argument value as a plain Python value."""
    if isinstance(v, A.Expression):
        return v.value
    return v


def dynamic_indices(e: A.Expression) -> list[A.ArrayIndex]:
    """Header-stack indices of an l-value known only at run time, in evaluation order."""
    if isinstance(e, (A.Member, A.Slice)):
        return dynamic_indices(e.expr)
    if isinstance(e, A.ArrayIndex):
        found = dynamic_indices(e.expr)
        if not isinstance(underlying(e.expr.type), T.TupleType) and not (
                e.index.is_const and e.index.value is not None):
            found.append(e)
        return found
    return []


def root_decl(e: A.Expression) -> Any:
    """The variable or parameter an l-value is part of (``h`` for ``h.s[i].f``)."""
    while isinstance(e, (A.Member, A.ArrayIndex, A.Slice)):
        e = e.expr
    return e.decl if isinstance(e, A.NameRef) else None


def names_used(ad: A.ActionDecl) -> set[int]:
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


def has_ann(decl: Any, name: str) -> bool:
    return A.find_annotation(getattr(decl, "annotations", None) or [], name) is not None


class Scope:
    """Names of one generated Python function: P4 declaration -> Python identifier."""

    def __init__(self, parent: "Scope | None" = None) -> None:
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
class BlockRef:
    """A parser/control instance passed as a constructor argument: its generated function."""

    fname: str
    decl: Any
