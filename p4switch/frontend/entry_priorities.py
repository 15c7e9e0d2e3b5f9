"""The ``entry-priorities`` pass: the matching priority of each constant table entry.

Input: a type-checked program (entries with their ``priority``/``@priority`` values read).
Output: ``match_priority`` on every entry of tables with ternary, range or optional keys, as
p4c's EntryPriorities pass orders them; the executor and P4Info read it.
"""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.errors import CompileError, SourceLines


def assign_entry_priorities(program: ast.Program, sources: SourceLines | None = None) -> None:
    """Every table of the program (tables are declared in controls)."""
    for d in program.declarations:
        if isinstance(d, ast.ControlDecl):
            for local in d.locals:
                if isinstance(local, ast.TableDecl):
                    table_entry_priorities(local, sources)


def table_entry_priorities(d: ast.TableDecl, sources: SourceLines | None = None) -> None:
    """Give every entry of a table with ternary/range/optional keys its matching priority
    as ``match_priority``, larger wins (P4Runtime's order), the way p4c orders them:
    ``priority =`` values as written, entries without one taking the previous value minus
    ``priority_delta`` (``largest_priority_wins = false`` flips the order); else
    ``@priority(N)`` as BMv2 reads it (smaller wins; unannotated entries count 1, 2, ...
    by position); else program order (the first entry wins)."""
    if not d.entries or all(k.match_kind in ("exact", "lpm") for k in d.key):
        return
    n = len(d.entries)

    def prop_value(name: str, default: int) -> int:
        p = d.prop(name)
        v = getattr(getattr(p, "value", None), "value", None)
        return int(v) if isinstance(v, (int, bool)) else default

    if any(e.priority is not None for e in d.entries):
        largest_wins = bool(prop_value("largest_priority_wins", 1))
        delta = prop_value("priority_delta", 1)
        if d.entries[0].priority is None:
            raise CompileError.at(d.entries[0].loc, "the first entry must have a priority when "
                                  "other entries of the table have one", sources)
        step = -delta if largest_wins else delta
        current = d.entries[0].priority_value
        values = []
        for e in d.entries:
            if e.priority is not None:
                current = e.priority_value
            values.append(current)
            current += step
        if not largest_wins:
            top = max(values)
            values = [top + 1 - v for v in values]
    elif any(e.priority_value is not None for e in d.entries):
        bmv2 = [e.priority_value if e.priority_value is not None else i + 1
                for i, e in enumerate(d.entries)]
        top = max(bmv2)
        values = [top + 1 - v for v in bmv2]
    else:
        values = [n - i for i in range(n)]
    for e, v in zip(d.entries, values):
        e.match_priority = v
