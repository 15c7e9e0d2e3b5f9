"""Parsing snippets for the per-pass tests: the front end's passes run on them one by one."""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.parser import parse_program
from p4switch.frontend.passes import FrontEnd, run_front_end


def parsed(text: str) -> ast.Program:
    return parse_program(text, "t.p4")[0]


def checked_until(text: str, until: str) -> tuple[ast.Program, FrontEnd]:
    program = parsed(text)
    return program, run_front_end(program, until=until)


def control(program: ast.Program, name: str) -> ast.ControlDecl:
    return next(d for d in program.declarations if isinstance(d, ast.ControlDecl) and d.name == name)


def at(node: ast.Node) -> str:
    """``line:col`` of a node (the per-pass tests name nodes by where they stand)."""
    return f"{node.loc.line}:{node.loc.col}"
