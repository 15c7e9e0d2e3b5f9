"""The ``annotation-args`` pass alone, on a program the passes before it have checked."""

from __future__ import annotations

import pytest

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.annotation_args import type_annotation_args
from p4switch.frontend.errors import CompileError
from tests.p4switch.frontend.passes_util import checked_until

PROGRAM = """
enum FieldLists { resubmit_FL }
const bit<8> PRIO = 10;
@name("top") @field_list(FieldLists.resubmit_FL) @priority(PRIO) @refers_to(t, f)
action a() { }
"""


def test_arguments_over_top_level_names_are_typed():
    program, fe = checked_until(PROGRAM, "table-checks")
    action = next(d for d in program.declarations if isinstance(d, ast.ActionDecl))
    assert all(arg.type is None for ann in action.annotations for arg in ann.args)
    type_annotation_args(fe.typer, fe.resolver)
    name, field_list, priority, refers_to = action.annotations
    assert name.args[0].type == T.STRING
    assert isinstance(field_list.args[0].type, T.EnumType)  # enum member, not a value name
    assert priority.args[0].is_const and priority.args[0].value == 10
    assert all(arg.type is None for arg in refers_to.args)  # not expressions: left untyped


def test_name_must_hold_a_string():
    _, fe = checked_until("@name(1) action a() { }", "table-checks")
    with pytest.raises(CompileError) as e:
        type_annotation_args(fe.typer, fe.resolver)
    assert str(e.value).splitlines()[0] == "t.p4:1:1: error: @name must contain a string"
