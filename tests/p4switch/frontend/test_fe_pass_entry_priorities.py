"""The ``entry-priorities`` pass alone, on a program the passes before it have checked."""

from __future__ import annotations

import pytest

from p4switch.frontend import ast
from p4switch.frontend.entry_priorities import assign_entry_priorities
from p4switch.frontend.errors import CompileError
from tests.p4switch.frontend.passes_util import checked_until, control

TABLE = """
match_kind {{ exact, ternary }}
control C(inout bit<8> x) {{
    action a() {{ }}
    table t {{
        key = {{ x : {kind}; }}
        actions = {{ a; }}
        {props}
        entries = {{ {entries} }}
    }}
    apply {{ t.apply(); }}
}}
"""


def _priorities(kind: str, entries: str, props: str = "") -> list[int | None]:
    program, fe = checked_until(TABLE.format(kind=kind, entries=entries, props=props), "annotation-args")
    assign_entry_priorities(program, fe.sources)
    table = next(d for d in control(program, "C").locals if isinstance(d, ast.TableDecl))
    return [e.match_priority for e in table.entries]


def test_program_order_when_no_entry_has_a_priority():
    assert _priorities("ternary", "1 : a(); 2 : a(); 3 : a();") == [3, 2, 1]


def test_written_priorities_and_the_delta_for_entries_without_one():
    got = _priorities("ternary", "priority=10: 1 : a(); 2 : a(); priority=3: 3 : a();",
                      "priority_delta = 2;")
    assert got == [10, 8, 3]


def test_smaller_wins_when_largest_priority_wins_is_false():
    got = _priorities("ternary", "priority=1: 1 : a(); priority=5: 2 : a();",
                      "largest_priority_wins = false;")
    assert got == [5, 1]


def test_exact_tables_need_none():
    assert _priorities("exact", "1 : a(); 2 : a();") == [None, None]


def test_the_first_entry_needs_a_priority_when_others_have_one():
    with pytest.raises(CompileError) as e:
        _priorities("ternary", "1 : a(); priority=5: 2 : a();")
    assert "error: the first entry must have a priority when other entries of the table have one" \
        in str(e.value)
