"""Tables and externs: typed by ``type-inference`` (``typecheck/tables.py``,
``typecheck/instances.py``), then the ``table-checks`` pass alone: what it refuses in a
well-typed program, with file:line:col."""

from __future__ import annotations

import pytest

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError
from tests.p4switch.frontend.passes_util import checked_until, control

HEAD = """match_kind { exact, ternary }
extern Counter { Counter(bit<32> n); void count(in bit<32> i); }
extern Profile { Profile(bit<32> n); }
control C(inout bit<8> x) {
    action a(bit<8> v) { x = v; }
    action b() { }
"""


def _table(body: str) -> str:
    return HEAD + "    table t {\n" + body + "\n    }\n    apply { t.apply(); }\n}\n"


def test_a_table_resolves_its_actions_and_typed_keys():
    program, _ = checked_until(_table("key = { x : exact; } actions = { a; b; } "
                                      "default_action = a(1); size = 16;"), "table-checks")
    c = control(program, "C")
    t = next(d for d in c.locals if isinstance(d, ast.TableDecl))
    assert [r.decl.name for r in t.actions] == ["a", "b"]
    assert t.default_action.args[0].value.value == 1
    assert t.key[0].expr.type == T.BitsType(8)
    assert t.prop("size").value.value == 16


def test_extern_instances_get_their_constructor_arguments():
    program, _ = checked_until(HEAD + "    Counter(32w4) cnt;\n    apply { cnt.count(0); }\n}\n",
                               "table-checks")
    inst = next(d for d in control(program, "C").locals if isinstance(d, ast.InstanceDecl))
    assert isinstance(inst.type, T.ExternType) and inst.ctor_args == {"n": 4}


@pytest.mark.parametrize("body, message", [
    ("key = { x : exact; }", "t.p4:7:11: error: table t has no actions property"),
    ("key = { x : lpm; } actions = { a; }", "t.p4:8:13: error: 'lpm' is not a match_kind"),
    ("key = { x : exact; } actions = { b; } const entries = { 1 &&& 1 : b(); }",
     "t.p4:8:57: error: a mask (&&&) is not allowed for exact key field 'x'"),
    ("key = { x : exact; } actions = { a; b; a; }",
     "t.p4:8:40: error: action 'a' appears twice in table t"),
    ("key = { x : exact; } actions = { a; } size = -1;",
     "t.p4:8:46: error: table size must be a non-negative constant"),
    ("key = { x : exact; } actions = { @tableonly b; } default_action = b();",
     "t.p4:8:67: error: action 'b' is @tableonly and cannot be the default action"),
])
def test_table_checks_refuse_well_typed_tables(body, message):
    checked_until(_table(body), "constant-folding")  # types and constants are fine
    with pytest.raises(CompileError) as e:
        checked_until(_table(body), "table-checks")
    assert str(e.value).splitlines()[0] == message


def test_a_default_action_outside_the_actions_list_is_a_type_error():
    """It decides which parameters the default action's arguments bind."""
    with pytest.raises(CompileError) as e:
        checked_until(_table("key = { x : exact; } actions = { a; } default_action = b();"),
                      "type-inference")
    assert str(e.value).splitlines()[0] == \
        "t.p4:8:56: error: default action 'b' is not in the table's actions list"


def test_an_extern_without_a_matching_constructor():
    with pytest.raises(CompileError) as e:
        checked_until(HEAD + "    Counter() cnt;\n    apply { }\n}\n", "table-checks")
    assert str(e.value).splitlines()[0] == \
        "t.p4:7:5: error: extern Counter has no constructor taking 0 arguments"
