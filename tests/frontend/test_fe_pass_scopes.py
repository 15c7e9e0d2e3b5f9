"""Name resolution (``typecheck/scopes.py``) alone: scopes, declarations, lookups."""

from __future__ import annotations

import pytest

from p4switch.frontend import ast
from p4switch.frontend.errors import CompileError
from p4switch.frontend.typecheck.checker import Checker
from p4switch.frontend.typecheck.scopes import Scope


def _decl(name: str, cls=ast.ConstDecl) -> ast.Node:
    d = cls.__new__(cls)
    d.name = name
    d.loc = ast.SourceLoc("t.p4", 3, 5)
    return d


@pytest.fixture
def checker() -> Checker:
    return Checker(ast.Program([]))


def test_inner_scopes_shadow_and_top_level_names_skip_them(checker):
    outer, inner = _decl("x"), _decl("x")
    checker.declare(checker.top, "x", outer)
    local = Scope(checker.top)
    checker.declare(local, "x", inner)
    assert checker.lookup(local, ast.NameRef("x")) == [inner]
    assert checker.lookup(local, ast.NameRef("x", top_level=True)) == [outer]


def test_overloads_share_a_name_other_redeclarations_are_errors(checker):
    f1, f2 = _decl("f", ast.FunctionDecl), _decl("f", ast.FunctionDecl)
    checker.declare(checker.top, "f", f1)
    checker.declare(checker.top, "f", f2)
    assert checker.lookup(checker.top, ast.NameRef("f")) == [f1, f2]
    checker.declare(checker.top, "c", _decl("c"))
    with pytest.raises(CompileError) as e:
        checker.declare(checker.top, "c", _decl("c"))
    assert str(e.value).splitlines()[0] == "t.p4:3:5: error: 'c' is already declared"


def test_an_undeclared_name_suggests_a_near_miss(checker):
    checker.declare(checker.top, "counter_size", _decl("counter_size"))
    with pytest.raises(CompileError) as e:
        checker.lookup(Scope(checker.top), ast.NameRef("counter_sise", loc=ast.SourceLoc("t.p4", 7, 9)))
    assert str(e.value).splitlines()[0] == \
        "t.p4:7:9: error: 'counter_sise' is not declared; did you mean 'counter_size'?"
