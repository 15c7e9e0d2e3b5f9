"""The front end's passes, run in sequence, p4c-style.

Each pass has a name and one job; each reads what the earlier ones left on the AST:

- ``typecheck`` (``typecheck/``): name resolution, type inference, constant folding and the
  table/extern checks, in declaration order; fills the ``Checker`` (scopes, ``main``);
- ``annotation-args`` (``annotation_args.py``): types annotation arguments;
- ``entry-priorities`` (``entry_priorities.py``): matching priorities of constant entries.

Target passes then refuse what a back end cannot run, on the ``CheckedProgram``:

- ``bmv2-limits`` (``bmv2_limits.py``): what p4c's BMv2 back end refuses.

The first error a pass finds raises ``CompileError``; later passes do not run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from p4switch.frontend import ast
from p4switch.frontend.annotation_args import type_annotation_args
from p4switch.frontend.bmv2_limits import check_bmv2_limits
from p4switch.frontend.entry_priorities import assign_entry_priorities
from p4switch.frontend.errors import SourceLines
from p4switch.frontend.typecheck.checker import Checker


@dataclass(frozen=True)
class Pass:
    name: str
    run: Callable[..., None]


FRONT_END: tuple[Pass, ...] = (
    Pass("typecheck", Checker.check),
    Pass("annotation-args", type_annotation_args),
    Pass("entry-priorities", lambda c: assign_entry_priorities(c.program, c.sources)),
)
# per target: passes over the CheckedProgram and the source lines
TARGET_PASSES: dict[str | None, tuple[Pass, ...]] = {
    "bmv2": (Pass("bmv2-limits", check_bmv2_limits),),
    None: (),
}


def run_front_end(program: ast.Program, sources: SourceLines | None = None,
                  until: str | None = None) -> Checker:
    """Run the front-end passes on a parsed program (all of them, or up to and including
    the pass named ``until``); returns the checker state they filled."""
    checker = Checker(program, sources)
    for p in FRONT_END:
        p.run(checker)
        if p.name == until:
            break
    return checker


def run_target_passes(checked: Any, target: str | None, sources: SourceLines | None = None) -> None:
    """Run ``target``'s passes on a ``CheckedProgram``."""
    for p in TARGET_PASSES[target]:
        p.run(checked, sources)
