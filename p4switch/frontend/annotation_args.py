"""The ``annotation-args`` pass: types the arguments of annotations.

Input: a program the earlier passes have checked (their ``ResolveReferences``, for the
top-level scope, and ``TypeInference``, for expression typing). Output: annotation arguments typed in place where they are
expressions over top-level names; ``@name`` must hold a string.
"""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError
from p4switch.frontend.typecheck.checker import TypeInference
from p4switch.frontend.typecheck.resolve import ResolveReferences


def type_annotation_args(checker: TypeInference, resolver: ResolveReferences) -> None:
    """Type annotation arguments where they are expressions over top-level names
    (``@field_list(CLONE_LIST)``, ``@priority(10)``, ``@name("x")``); arguments that are
    not (``@refers_to(table, field)``) stay untyped: annotations are metadata."""
    for node in checker.program.walk():
        anns = getattr(node, "annotations", None)
        if not anns:
            continue
        for a in anns:
            for i, arg in enumerate(a.args):
                try:
                    arg = _type_names_in_annotation(resolver, arg)
                    resolver.expr(arg, resolver.top)
                    a.args[i] = checker.expr(arg)
                except CompileError:
                    pass
            if a.name == "name" and (len(a.args) != 1 or a.args[0].type != T.STRING):
                raise checker.err(a, "@name must contain a string")


def _type_names_in_annotation(resolver: ResolveReferences, e: ast.Expression) -> ast.Expression:
    """Annotation bodies are parsed apart from the program, so ``E.member`` of an enum
    (``@field_list(FieldLists.resubmit_FL)``) arrives as a value name: make it a type."""
    if isinstance(e, ast.Member) and isinstance(e.expr, ast.NameRef):
        found = resolver.top.lookup(e.expr.name)
        if found and isinstance(found[0], ast.EnumDecl):
            ref = ast.NamedTypeRef(name=e.expr.name, top_level=e.expr.top_level, loc=e.expr.loc)
            e.expr = ast.TypeExpression(type_ref=ref, loc=e.expr.loc)
    return e
