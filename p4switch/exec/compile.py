"""Translate a checked P4-16 program (v1model) into Python source, ``exec`` it once (or have
mypyc compile it: ``native.py``), and collect the control-plane objects (tables, externs) it
uses.

Why generated code: the per-packet path then runs as straight-line Python with locals,
int arithmetic and attribute access, not as a walk over the AST. Design choices:
- every ``bit<W>``/``int<W>`` value is a non-negative int masked to W (two's complement
  pattern for ``int<W>``); bool is bool; error is its code; enum is its member name;
- headers/structs/unions are generated classes (codegen.TypeClasses);
- a parser is one function: a loop over numbered states, ``d`` the packet bytes and ``o``
  the byte offset as locals;
- a control (per instance) is one function; actions are inlined where a table or a direct
  call runs them (a ``return`` in an action becomes ``break`` out of a one-shot loop);
  tables are runtime ``Table`` objects whose ``apply`` returns the action index and args;
- copy-in/copy-out: aggregates are passed by reference, scalar out/inout parameters are
  returned and assigned back by the caller.

The work is split by job: elaborate.py (instances), objects.py (tables and other runtime
objects), stmtgen.py (statements, parsers), exprgen.py (expressions), externgen.py (externs).
"""

from __future__ import annotations

from typing import Any

from p4switch.exec import native
from p4switch.exec.compile_base import Compiled, UnsupportedError
from p4switch.exec.elaborate import ProgramCompiler

__all__ = ["Compiled", "UnsupportedError", "compile_checked"]


def compile_checked(checked: Any, backend: str | None = None, ahead: bool = False) -> Compiled:
    """``backend``: ``python``, ``mypyc`` or ``auto`` (``native.py``); None takes
    ``P4SWITCH_BACKEND``. ``auto`` generates the compiled module's text and runs it if it is
    built already, else generates and runs the Python one. ``ahead``: a build made ahead of
    any switch's use (``prebuild``), at ``native.AHEAD_OPT_LEVEL``."""
    choice = native.checked_backend(backend) if backend else native.backend()
    if choice == "auto":
        found = ProgramCompiler(checked).compile("mypyc", only_built=True)
        if found is not None:
            return found
        choice = "python"
    compiled = ProgramCompiler(checked).compile(choice, opt_level=native.AHEAD_OPT_LEVEL if ahead else native.OPT_LEVEL)
    assert compiled is not None  # only an ``only_built`` compile finds nothing
    return compiled
