"""The front end's passes, run in sequence, p4c-style.

Each pass has a name and one job, and reads what the earlier ones produced (``FrontEnd``):

- ``resolve-references`` (``typecheck/resolve.py``): every name to its declaration, the
  ``ReferenceMap``; unknown and duplicate names;
- ``type-inference`` (``typecheck/checker.py`` and the modules it combines): a type for every
  expression (the ``TypeMap``), implicit casts, calls resolved; type errors. Where a type
  needs a value (``bit<W + 1>``) it asks constant folding on demand;
- ``constant-folding`` (``typecheck/constfold.py``): the value of every compile-time constant
  expression over the typed program, the ``ConstantMap``;
- ``table-checks`` (``typecheck/tables.py``): what v1model requires of tables beyond types
  (match kinds, actions lists, default actions, entries);
- ``annotation-args`` (``annotation_args.py``): types annotation arguments;
- ``entry-priorities`` (``entry_priorities.py``): matching priorities of constant entries.

Target passes then refuse what a back end cannot run, on the ``CheckedProgram``:

- ``bmv2-limits`` (``bmv2_limits.py``): what p4c's BMv2 back end refuses.

The first error a pass finds raises ``CompileError``; later passes do not run. Every pass
can run alone on the output of the ones before it (``run_front_end(until=...)``): each has
its own tests in tests/p4switch/frontend/test_fe_pass_*.py.
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
from p4switch.frontend.typecheck.checker import TypeInference
from p4switch.frontend.typecheck.constfold import ConstantFolding, ConstantMap
from p4switch.frontend.typecheck.resolve import ResolveReferences
from p4switch.frontend.typecheck.tables import check_tables
from p4switch.frontend.typecheck.typemap import TypeMap


class FrontEnd:
    """What the front-end passes produce, filled in pass order."""

    def __init__(self, program: ast.Program, sources: SourceLines | None = None) -> None:
        self.program = program
        self.sources = sources
        self.resolver = ResolveReferences(program, sources)
        self.typer: TypeInference | None = None
        self.types: TypeMap | None = None
        self.constants: ConstantMap | None = None

    @property
    def refs(self):
        return self.resolver.refs


def _resolve(fe: FrontEnd) -> None:
    fe.resolver.run()


def _infer_types(fe: FrontEnd) -> None:
    fe.typer = TypeInference(fe.program, fe.refs, fe.sources)
    fe.typer.run()
    fe.types = TypeMap.of(fe.program)


def _fold_constants(fe: FrontEnd) -> None:
    fe.constants = ConstantFolding(fe.refs, fe.sources).run(fe.program)


@dataclass(frozen=True)
class Pass:
    name: str
    run: Callable[[FrontEnd], None]


FRONT_END: tuple[Pass, ...] = (
    Pass("resolve-references", _resolve),
    Pass("type-inference", _infer_types),
    Pass("constant-folding", _fold_constants),
    Pass("table-checks", lambda fe: check_tables(fe.typer)),
    Pass("annotation-args", lambda fe: type_annotation_args(fe.typer, fe.resolver)),
    Pass("entry-priorities", lambda fe: assign_entry_priorities(fe.program, fe.sources)),
)
# per target: passes over the CheckedProgram and the source lines
TARGET_PASSES: dict[str | None, tuple[Pass, ...]] = {
    "bmv2": (Pass("bmv2-limits", check_bmv2_limits),),
    None: (),
}


def run_front_end(program: ast.Program, sources: SourceLines | None = None,
                  until: str | None = None) -> FrontEnd:
    """Run the front-end passes on a parsed program (all of them, or up to and including
    the pass named ``until``); returns what they produced."""
    if until is not None and until not in {p.name for p in FRONT_END}:
        raise ValueError(f"no front-end pass named {until!r}")
    fe = FrontEnd(program, sources)
    for p in FRONT_END:
        p.run(fe)
        if p.name == until:
            break
    return fe


def run_target_passes(checked: Any, target: str | None, sources: SourceLines | None = None) -> None:
    """Run ``target``'s passes on a ``CheckedProgram``."""
    for p in TARGET_PASSES[target]:
        p.run(checked, sources)
