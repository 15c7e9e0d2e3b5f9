"""Type names the parser's scope stack gives the lexer (``typenames.TypeNames``).

Each case is a program whose parse depends on knowing, token by token, which identifiers
are types in the current scope: the declaration right before a use, type parameters that
end with their declaration, and values that hide a type of the same name.
"""

from __future__ import annotations

import pytest

from p4switch.frontend import ast
from p4switch.frontend.errors import CompileError
from p4switch.frontend.parser import parse_program


def _parse(text: str) -> ast.Program:
    return parse_program(text, "t.p4")[0]


def test_a_type_is_known_right_after_its_declaration():
    prog = _parse("typedef bit<8> T;\nconst T x = 1;\n"
                  "extern E { E(); void f(); }\nE() e;\n")
    const = prog.declarations[1]
    assert isinstance(const, ast.ConstDecl) and const.type_ref.name == "T"
    inst = prog.declarations[3]
    assert isinstance(inst, ast.InstanceDecl) and inst.type_ref.name == "E"


def test_type_parameters_are_types_inside_their_declaration_only():
    prog = _parse("extern void f<T>(in T x);\n"
                  "control C(inout bit<8> v) { apply { bit<8> T = 1; v = T < 2 ? v : T; } }\n")
    f = prog.declarations[0]
    assert f.params[0].type_ref.name == "T"
    body = prog.declarations[1].body.statements
    assert isinstance(body[1].rhs, ast.Ternary)  # 'T < 2' is a comparison here


def test_a_value_hides_a_type_of_the_same_name_until_its_block_ends():
    prog = _parse("extern counter { counter(); void count(); }\n"
                  "control C(inout bit<32> x) {\n"
                  "  apply {\n"
                  "    { bit<32> counter = x; counter = counter >> 1; x = counter; }\n"
                  "    counter() c;\n"
                  "  }\n"
                  "}\n")
    block = prog.declarations[1].body.statements[0]
    assert isinstance(block.statements[1].rhs, ast.Binary)
    assert block.statements[1].rhs.op == ">>"


def test_an_undeclared_type_is_reported_where_it_stands():
    with pytest.raises(CompileError) as e:
        _parse("extern void f<T>(in T x);\nextern void g(in T y);\n")
    assert "t.p4:2:" in str(e.value)
