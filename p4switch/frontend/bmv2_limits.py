"""What p4c's BMv2 back end (``p4c --target bmv2 --arch v1model``) refuses beyond the language.

Our target claims BMv2 parity, so a program it runs must also compile with the reference
compiler; this pass refuses, with p4c's wording and diagnostic name, what the reference back
end refuses in a well-typed v1model program (checked against p4c 1.2.4's sources):

- shift amounts (``backends/bmv2/common/lower.cpp``): a shift whose amount is a ``bit<N>`` or
  ``int<N>`` with N > 8 (a typed constant such as a ``const bit<48>`` included), or an
  untyped constant above 256 ("shift amount limited to 8 bits on this target",
  ``[--Werror=overlimit]``). Shifts p4c's mid end removes first are accepted: both operands
  constant, an amount of 0, a shifted value of 0. Table keys are not lowered, so are not
  checked.
- headers whose fields do not total a multiple of 8 bits, and headers with more than one
  varbit field (``common/header.cpp``), for every header type the pipeline's data uses;
- registers of anything but ``bit<>``/``int<>`` (``simple_switch/simpleSwitch.cpp``);
- externs (instances or functions) BMv2 does not implement: declared by the program rather
  than by core.p4/v1model.p4 ("unknown extern instance");
- checksum controls holding anything but ``verify_checksum*``/``update_checksum*`` calls, or
  computing their inputs (a cast, slice, operator: "Computations are not supported in
  verify_checksum"); hash and checksum inputs that are neither a list nor a struct/header;
- parameters of table actions that are not ``bit<>``/``int<>`` (``common/action.cpp``),
  tables with more than one LPM key (``common/control.h``), reading a field of a stack's
  ``next`` (``common/expression.cpp``: BMv2 has no such reference);
- ``clone``/``clone3``/``clone_preserving_field_list`` with I2E outside ingress or E2E outside
  egress, ``resubmit*`` outside ingress, ``recirculate*`` outside egress
  (``simple_switch/simpleSwitch.cpp``);
- loops (``for`` statements: ``common/check_unsupported.h``, "BMV2 does not support loops");
- a table applied again on a path that already applied it, or applied in several places
  that continue differently ("multiple successors") (``common/controlFlowGraph.cpp``: BMv2's
  pipeline is a graph with one node per table), including a control instance with tables
  applied twice.

Only code the pipeline reaches is checked (p4c drops unused declarations before its back
end). Programs whose ``main`` is not a ``V1Switch`` are not BMv2 programs and pass unchecked.
The pass runs from ``program.compile_source`` for ``target="bmv2"`` (the default).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError, SourceLines
from p4switch.frontend.pretty import expr_text

MAX_SHIFT_WIDTH = 8  # p4c's LowerExpressions default for BMv2
_OVERLIMIT = "[--Werror=overlimit]"
_TARGET = "[--Werror=target-error]"
_INVALID = "[--Werror=invalid]"
_UNSUPPORTED = "[--Werror=unsupported]"
_MODEL = "[--Werror=Target model error]"
_CLONES = ("clone", "clone3", "clone_preserving_field_list")
_CHECKSUM_STAGES = {"verify_checksum": ("verify_checksum", "verify_checksum_with_payload"),
                    "compute_checksum": ("update_checksum", "update_checksum_with_payload")}
# Expressions BMv2 takes as checksum inputs as they are (anything else is a computation).
_SIMPLE = (ast.ListExpression, ast.StructExpression, ast.NameRef, ast.Member, ast.IntLiteral,
           ast.ArrayIndex)
_INGRESS_ONLY = ("resubmit", "resubmit_preserving_field_list")
_EGRESS_ONLY = ("recirculate", "recirculate_preserving_field_list")


class Bmv2LimitError(CompileError):
    """Every limit the program exceeds; ``str`` shows them all (the first one's location is
    the exception's own), as p4c reports each error before giving up."""

    def __init__(self, errors: list[CompileError]) -> None:
        first = errors[0]
        super().__init__(first.message, first.file, first.line, first.col, first.source_line)
        self.errors = errors

    def __str__(self) -> str:
        return "\n".join(CompileError.__str__(e) for e in self.errors)


def check_bmv2_limits(checked: Any, sources: SourceLines | None = None) -> None:
    """Raise :class:`Bmv2LimitError` if p4c's BMv2 back end would refuse ``checked``."""
    errors = bmv2_limit_errors(checked, sources)
    if errors:
        raise Bmv2LimitError(errors)


def bmv2_limit_errors(checked: Any, sources: SourceLines | None = None) -> list[CompileError]:
    if not _is_v1switch(checked):
        return []
    return _Limits(checked, sources).run()


def _is_v1switch(checked: Any) -> bool:
    """Whether ``main`` is v1model's V1Switch: a package of another architecture, or one
    that only borrows the name (p4c's issue793), is not BMv2's to refuse; running it is
    refused where the pipeline is taken apart (``CheckedProgram.pipeline``)."""
    try:
        return bool(checked.pipeline)
    except CompileError:
        return False


class _Limits:
    def __init__(self, checked: Any, sources: SourceLines | None) -> None:
        self.checked = checked
        self.sources = sources
        self.errors: list[CompileError] = []
        self._reported: set[tuple[int, str]] = set()

    def error(self, node: ast.Node, message: str) -> None:
        if (id(node), message) in self._reported:  # code reached from two stages
            return
        self._reported.add((id(node), message))
        self.errors.append(CompileError.at(node.loc, message, self.sources))

    def run(self) -> list[CompileError]:
        pipeline = self.checked.pipeline
        header_types: dict[int, T.HeaderType] = {}
        for stage, block in pipeline.items():
            for param in getattr(block, "params", []):
                _headers_in(param.type, header_types)
            for node in self.reachable(block):
                self.check_node(node, stage)
                if isinstance(node, ast.VarDecl):
                    _headers_in(node.type, header_types)
        for header in header_types.values():
            self.check_header(header)
        for block in pipeline.values():
            if isinstance(block, ast.ControlDecl):
                _TablePaths(self).check(block)
        for stage, calls in _CHECKSUM_STAGES.items():
            if isinstance(pipeline.get(stage), ast.ControlDecl):
                self.check_checksum_control(pipeline[stage].body, calls)
        self.errors.sort(key=lambda e: (e.file, e.line, e.col))
        return self.errors

    # --- reachability -------------------------------------------------------------------
    def reachable(self, block: ast.Node) -> Iterator[ast.Node]:
        """Every node of ``block`` the stage executes: its apply/states and, through
        references, the actions, functions, extern instances and sub-blocks it uses (each
        once). Tables are checked, and their actions followed, without walking their keys."""
        seen: set[int] = set()
        stack: list[ast.Node] = _control_roots(block) if isinstance(block, ast.ControlDecl) else [block]
        while stack:
            for node in stack.pop().walk():
                yield node
                for target in (getattr(node, "decl", None), getattr(node, "action", None)):
                    if isinstance(target, ast.InstanceDecl):
                        sub = getattr(target.type_ref, "decl", None)
                        target = sub if isinstance(sub, (ast.ControlDecl, ast.ParserDecl)) else target
                    if id(target) in seen or not isinstance(target, ast.Declaration):
                        continue
                    seen.add(id(target))
                    if isinstance(target, ast.TableDecl):
                        self.check_table(target)
                        refs = [*target.actions, *([target.default_action] if target.default_action else [])]
                        stack.extend(r.decl for r in refs if isinstance(r.decl, ast.ActionDecl))
                    elif isinstance(target, ast.ControlDecl):
                        stack.extend(_control_roots(target))
                    elif isinstance(target, (ast.ActionDecl, ast.FunctionDecl, ast.ParserDecl,
                                             ast.InstanceDecl)):
                        stack.append(target)

    # --- checks -----------------------------------------------------------------------------
    def check_node(self, node: ast.Node, stage: str) -> None:
        if isinstance(node, (ast.ForStatement, ast.ForInStatement)):
            self.error(node, f"{_UNSUPPORTED} BMV2 does not support loops")
        elif isinstance(node, ast.Binary) and node.op in ("<<", ">>"):
            self.check_shift(node)
        elif isinstance(node, ast.MethodCall) and node.kind == "extern_function":
            if not _architecture_decl(node.decl):
                self.error(node, f"[--Werror=unknown] {node.method_name}: unknown extern function")
            self.check_extern_call(node, stage)
        elif isinstance(node, ast.InstanceDecl) and isinstance(node.type, T.ExternType):
            if not _architecture_decl(node.type.extern.decl):
                self.error(node, f"[--Werror=unknown] {node.type.extern.name}: unknown extern instance")
            if node.type.name == "register":
                self.check_register(node)
        elif (isinstance(node, ast.Member) and node.kind == "field" and isinstance(node.expr, ast.Member)
              and node.expr.kind == "stack" and node.expr.name == "next"
              and not isinstance(node.type, T.StructLikeType)):  # a union member is extracted, not read
            self.error(node.expr, f"[--Werror=uninitialized] {expr_text(node.expr)} uninitialized: next field read")

    def check_shift(self, e: ast.Binary) -> None:
        amount = e.right
        if getattr(e, "is_const", False) or any(getattr(x, "is_const", False) and x.value == 0
                                                for x in (e.left, amount)):
            return  # constant folding and strength reduction remove it before the back end
        t = T.underlying(amount.type)
        untyped = isinstance(amount, ast.IntLiteral) and amount.width is None  # p4c: int, not bit<N>
        if not untyped and isinstance(t, (T.BitsType, T.IntType)) and getattr(t, "width", None) is not None:
            if t.width > MAX_SHIFT_WIDTH:
                self.error(e, f"{_OVERLIMIT} {expr_text(e)}: shift amount limited to "
                              f"{MAX_SHIFT_WIDTH} bits on this target")
        elif getattr(amount, "is_const", False) and isinstance(amount.value, int):
            limit = 1 << MAX_SHIFT_WIDTH
            if amount.value > limit:
                self.error(e, f"{_OVERLIMIT} {expr_text(e)}: shift amount limited to {limit} on this target")

    def check_extern_call(self, call: ast.MethodCall, stage: str) -> None:
        name = call.method_name
        if name == "hash" and len(call.args) == 5:
            self.check_field_list(call, call.args[3].value)
        if name in _CLONES and call.args:
            kind = call.args[0].value
            which = getattr(kind, "value", None) if getattr(kind, "is_const", False) else None
            if which == "I2E" and stage != "ingress":
                self.error(call, f"{_TARGET} '{name}(I2E, ...) not invoked in ingress {expr_text(call)}")
            elif which == "E2E" and stage != "egress":
                self.error(call, f"{_TARGET} '{name}(E2E, ...) not invoked in egress {expr_text(call)}")
        elif name in _INGRESS_ONLY and stage != "ingress":
            self.error(call, f"{_TARGET} 'resubmit' can only be invoked in ingress {expr_text(call)}")
        elif name in _EGRESS_ONLY and stage != "egress":
            self.error(call, f"{_TARGET} 'recirculate' can only be invoked in egress {expr_text(call)}")

    def check_checksum_control(self, block: ast.BlockStatement, calls: tuple[str, str]) -> None:
        """BMv2 has no pipeline for the checksum controls: only their checksum calls become
        checksum objects, computed from plain fields (simpleSwitch.cpp convertChecksum)."""
        for stmt in block.statements:
            if isinstance(stmt, ast.BlockStatement):
                self.check_checksum_control(stmt, calls)
                continue
            call = stmt.call if isinstance(stmt, ast.MethodCallStatement) else None
            if call is None or call.kind != "extern_function" or call.method_name not in calls:
                if not isinstance(stmt, ast.EmptyStatement):
                    self.error(stmt, f"{_UNSUPPORTED} {_statement_text(stmt)}: Only calls to {calls[0]} "
                                     f"or {calls[1]} allowed")
                continue
            if len(call.args) > 1:
                for part in _not_simple(call.args[1].value):
                    self.error(part, f"{_UNSUPPORTED} {expr_text(part)}: Computations are not supported "
                                     f"in {calls[0]}")
                self.check_field_list(call, call.args[1].value)

    def check_field_list(self, call: ast.MethodCall, data: ast.Expression) -> None:
        """Hash and checksum inputs: a list, or a struct or header whose fields are listed."""
        if isinstance(data, (ast.ListExpression, ast.StructExpression)):
            return
        if not isinstance(T.underlying(data.type), (T.StructLikeType, T.TupleType)):
            self.error(data, f"{_MODEL} {expr_text(data)}: expected a struct")

    def check_register(self, decl: ast.InstanceDecl) -> None:
        args = getattr(decl.type, "type_args", None) or []
        if args and not isinstance(T.underlying(args[0]), T.BitsType):
            self.error(decl, f"{_TARGET} {decl.name}: Only registers with bit or int types are "
                             "currently supported")

    def check_table(self, table: ast.TableDecl) -> None:
        if sum(1 for k in table.key if k.match_kind == "lpm") > 1:
            self.error(table, f"{_UNSUPPORTED} multiple LPM keys in table {table.name} not supported")
        for ref in table.actions:
            action = ref.decl
            for p in getattr(action, "params", []):
                if p.direction in (None, "") and not isinstance(T.underlying(p.type), (T.BitsType, T.EnumType)):
                    self.error(p, f"{_INVALID} {p.name}: action parameters must be bit<> or int<> "
                                  "on this target")

    def check_header(self, header: T.HeaderType) -> None:
        where = header.decl if header.decl is not None else None
        if where is None:
            return
        varbits = [f for f in header.fields if isinstance(f.type, T.VarbitType)]
        if len(varbits) > 1:
            self.error(where, f"{_TARGET} {header.name}: headers with multiple varbit fields not supported")
        total = sum(f.type.max_width if isinstance(f.type, T.VarbitType) else _width(f.type)
                    for f in header.fields)
        if total % 8:
            self.error(where, f"{_TARGET} {header.name}: Found header with fields totaling {total} bits.  "
                              "BMv2 target only supports headers with fields totaling a multiple of 8 bits.")


def _control_roots(control: ast.ControlDecl) -> list[ast.Node]:
    """Where a control's execution starts: its apply block, and its variables and instances
    (declared outside it, used from it)."""
    return [control.body, *(d for d in control.locals if isinstance(d, (ast.VarDecl, ast.InstanceDecl)))]


def _width(t: T.P4Type) -> int:
    t = T.underlying(t)
    return 1 if isinstance(t, T.BoolType) else t.bit_width()


def _headers_in(t: Any, found: dict[int, T.HeaderType]) -> None:
    """Header types a value of type ``t`` holds (through structs, unions and stacks)."""
    t = T.underlying(t) if isinstance(t, T.P4Type) else t
    if isinstance(t, T.HeaderType):
        found.setdefault(id(t), t)
    elif isinstance(t, T.StackType):
        _headers_in(t.elem, found)
    elif isinstance(t, (T.StructType, T.HeaderUnionType)):
        for f in t.fields:
            _headers_in(f.type, found)


class _TablePaths:
    """BMv2's pipeline is a graph with one node per table, which p4c builds from the apply
    block. Two ways a control cannot be such a graph:

    - a table applied where some path there has already applied it (a loop). A forward walk
      collects, at each point, the tables applied before (keyed by the instance path of the
      control holding them); branches join by union, a branch ending in ``exit``/``return``
      joins nothing.
    - a table applied in several places that continue differently ("multiple successors"):
      what follows an application is the next statement that does something (p4c turns every
      other statement into a node of its own), the join point after the enclosing branches,
      or the end; an application inside a condition or ``switch`` is followed by its own
      branches, so two of those always differ."""

    END = "end"

    def __init__(self, limits: _Limits) -> None:
        self.limits = limits
        self.successors: dict[tuple, dict[Any, ast.MethodCall]] = {}

    def check(self, control: ast.ControlDecl) -> None:
        self.flow(control.body, frozenset(), (), self.END)
        for sites in self.successors.values():
            if len(sites) > 1:
                call = list(sites.values())[-1]
                self.limits.error(call, f"{_INVALID} Program is not supported by this target, because table "
                                        f"{call.decl.name} has multiple successors")

    def flow(self, stmt: Any, before: frozenset | None, path: tuple, after: Any) -> frozenset | None:
        """Tables applied once ``stmt`` ran (None: no path gets past it); ``after`` is what
        follows it in the graph."""
        if before is None or stmt is None:
            return before
        if isinstance(stmt, ast.BlockStatement):
            for i, sub in enumerate(stmt.statements):
                rest = [x for x in stmt.statements[i + 1:] if not _trivial(x)]
                before = self.flow(sub, before, path, _first_node(rest[0]) if rest else after)
            return before
        if isinstance(stmt, ast.IfStatement):
            before = self.exprs(stmt.cond, before, path, stmt)
            return _join([self.flow(stmt.then, before, path, after),
                          self.flow(stmt.else_, before, path, after) if stmt.else_ is not None else before])
        if isinstance(stmt, ast.SwitchStatement):
            before = self.exprs(stmt.expr, before, path, stmt)
            outs = [self.flow(case.body, before, path, after) for case in stmt.cases if case.body is not None]
            if not any(isinstance(case.label, ast.DefaultExpr) for case in stmt.cases):
                outs.append(before)
            return _join(outs)
        if isinstance(stmt, (ast.ExitStatement, ast.ReturnStatement)):
            self.exprs(getattr(stmt, "value", None), before, path, stmt)
            return None
        if isinstance(stmt, (ast.ForStatement, ast.ForInStatement)):
            head = self.exprs(stmt, before, path, stmt, skip=stmt.body)
            once = self.flow(stmt.body, head, path, stmt)
            return _join([before, self.flow(stmt.body, once, path, stmt)])  # a second iteration
        if isinstance(stmt, ast.MethodCallStatement):  # a whole-statement apply continues with `after`
            return self.exprs(stmt, before, path, stmt, after)
        return self.exprs(stmt, before, path, stmt)

    def exprs(self, node: Any, before: frozenset, path: tuple, stmt: Any, after: Any = None,
              skip: Any = None) -> frozenset:
        """Tables applied while evaluating ``node`` (part of statement ``stmt``; ``after``
        follows ``stmt`` when ``node`` is a call statement)."""
        if node is None:
            return before
        stack = [node]
        while stack:
            sub = stack.pop()
            if sub is skip:
                continue
            stack.extend(reversed(list(sub.children())))
            if not isinstance(sub, ast.MethodCall):
                continue
            whole = isinstance(stmt, ast.MethodCallStatement) and stmt.call is sub
            if sub.kind == "table_apply" and isinstance(sub.decl, ast.TableDecl):
                key = (path, id(sub.decl))
                if key in before:
                    self.limits.error(sub, f"{_INVALID} Program can not be implemented on this target since "
                                           f"it contains a path from table {sub.decl.name} back to itself")
                before = before | {key}
                successor = after if whole else id(stmt)
                self.successors.setdefault(key, {}).setdefault(successor, sub)
            elif sub.kind == "control_apply":
                control = sub.decl if isinstance(sub.decl, ast.ControlDecl) else getattr(
                    getattr(sub.decl, "type_ref", None), "decl", None)
                if isinstance(control, ast.ControlDecl):
                    done = self.flow(control.body, before, (*path, id(sub.decl)), after if whole else id(stmt))
                    before = before if done is None else done  # an exit there: conservatively on
        return before


def _architecture_decl(decl: Any) -> bool:
    """Whether an extern is one BMv2 implements: declared by core.p4 or v1model.p4 (ours,
    from p4switch/p4include, or a copy of p4c's of the same name) and not by the program."""
    loc = getattr(decl, "loc", None)
    return loc is None or os.path.basename(loc.file) in ("core.p4", "v1model.p4")


def _not_simple(e: ast.Node) -> list[ast.Node]:
    """The outermost parts of a checksum input that compute something."""
    if isinstance(e, ast.Cast) and e.implicit:  # our checker's, where p4c has a typed constant
        return _not_simple(e.expr)
    if not isinstance(e, _SIMPLE):
        return [e]
    parts = []
    for child in e.children():
        if isinstance(child, ast.NamedExpression):
            child = child.value
        if isinstance(child, ast.Expression):
            parts.extend(_not_simple(child))
    return parts


def _statement_text(stmt: ast.Node) -> str:
    if isinstance(stmt, ast.MethodCallStatement):
        return expr_text(stmt.call) + ";"
    if isinstance(stmt, ast.IfStatement):
        return f"if ({expr_text(stmt.cond)}) ..."
    if isinstance(stmt, ast.AssignmentStatement):
        return f"{expr_text(stmt.lhs)} = {expr_text(stmt.rhs)};"
    return type(stmt).__name__


def _trivial(stmt: Any) -> bool:
    """A statement that puts no node into BMv2's graph."""
    if isinstance(stmt, ast.EmptyStatement) or (isinstance(stmt, ast.VarDecl) and stmt.init is None):
        return True
    return isinstance(stmt, ast.BlockStatement) and all(_trivial(s) for s in stmt.statements)


def _first_node(stmt: Any) -> Any:
    """What the graph reaches first when it gets to ``stmt`` (the end, for exit/return)."""
    while isinstance(stmt, ast.BlockStatement):
        stmt = next(s for s in stmt.statements if not _trivial(s))
    if isinstance(stmt, (ast.ExitStatement, ast.ReturnStatement)) and getattr(stmt, "value", None) is None:
        return _TablePaths.END
    if isinstance(stmt, ast.MethodCallStatement) and stmt.call.kind == "table_apply":
        return ("table", id(stmt.call.decl))  # the table's own node, wherever it is applied
    return id(stmt)


def _join(outs: list[frozenset | None]) -> frozenset | None:
    live = [o for o in outs if o is not None]
    return frozenset().union(*live) if live else None
