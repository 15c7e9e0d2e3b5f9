"""Name resolution: the scopes declarations enter and the lookups that resolve names.

P4 requires declaration before use, so scopes are filled while the declarations are checked in
order (``declarations.py``) and every name is looked up in the scope where it stands:
innermost first, ``.name`` at top level. Overloads (functions, extern methods) share a name.
"""

from __future__ import annotations

import difflib
from typing import Any

from p4switch.frontend import ast


class MatchKindMember(ast.Declaration):
    """A ``match_kind`` member name (``exact``, ``lpm`` ...) in scope."""


class Scope:
    def __init__(self, parent: "Scope | None" = None, owner: ast.Node | None = None) -> None:
        self.parent = parent
        self.owner = owner  # the control/parser/action/function this scope belongs to
        self.names: dict[str, list[Any]] = {}

    def lookup(self, name: str) -> list[Any] | None:
        s: Scope | None = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None


def _overloadable(d: Any) -> bool:
    return isinstance(d, (ast.ExternFunctionDecl, ast.MethodDecl, ast.FunctionDecl))


class NameResolution:
    """Declaring and looking up names in a ``Scope``."""

    def declare(self, scope: Scope, name: str, decl: Any, node: ast.Node | None = None) -> None:
        existing = scope.names.get(name)
        if existing:
            if _overloadable(decl) and all(_overloadable(e) for e in existing):
                existing.append(decl)
                return
            if isinstance(decl, ast.ExternDecl) and isinstance(existing[0], ast.ExternDecl) \
                    and not existing[0].methods:
                existing[0] = decl  # forward declaration completed
                return
            raise self.err(node or decl, f"'{name}' is already declared")
        scope.names[name] = [decl]

    def lookup(self, scope: Scope, ref: ast.NameRef | ast.NamedTypeRef) -> list[Any]:
        start = self.top if ref.top_level else scope
        found = start.lookup(ref.name)
        if not found:
            raise self.err(ref, f"'{ref.name}' is not declared{_suggest(ref.name, start)}")
        return found


def _suggest(name: str, scope: Scope) -> str:
    """"; did you mean 'x'?" for a near miss among the names in scope."""
    names: set[str] = set()
    s: Scope | None = scope
    while s is not None:
        names.update(s.names)
        s = s.parent
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.75)
    return f"; did you mean '{close[0]}'?" if close else ""
