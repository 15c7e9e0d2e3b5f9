"""Inline the calls of sub-controls in the generated code.

Why: a control applied from another control is generated as a function of its own (one per
instance, so its tables and externs are bound at load time), and each apply was one Python
call with 4-6 arguments per packet: fabric.p4's ingress and egress make about a dozen of
them. A call statement is replaced by the callee's body, its local names renamed apart and its parameters bound to
the caller's arguments, so the semantics stay those of the call: arguments are evaluated
once, in order, before the body; aggregates stay passed by reference; an ``exit`` still
raises ``ExitControl`` up to the pipeline. A control with scalar out/inout parameters ends in
``return (a, b)``; its call ``_r = f(...)`` becomes the body and ``_r = (a, b)``.

Works on the Python AST of the generated functions; the functions without such calls keep
their text as generated.
"""

from __future__ import annotations

import ast
import copy
import functools
import itertools
import threading
from collections.abc import Iterator

# a callee body larger than this (statements) is inlined only where it has a single call site
MAX_COPIED_STATEMENTS = 60
# Switches load pipelines in parallel (the controller's pool, the simulator's in-process
# sessions), so inlining is serialised: the first switch does the work and the others, waiting,
# find its result. It also keeps ast.parse to one thread at a time, which CPython 3.11 needs (it
# keeps the AST converter's recursion depth per interpreter, not per thread: two threads in
# ast.parse at once fail with "AST constructor recursion depth mismatch").
_INLINE_LOCK = threading.Lock()


def inline_controls(src: str, controls: set[str]) -> str:
    """``src`` with every inlinable call statement of a function named in ``controls``
    replaced by that function's body. Functions are handled in source order; sub-controls
    are generated before the controls that apply them, so a body inlined into a caller has
    had its own calls inlined already.

    The result is kept for the last few sources: every switch of a simulated fabric loads
    the same program, generates the same source and would redo the same work (most of a
    pipeline load's code generation time)."""
    with _INLINE_LOCK:
        return _inlined(src, frozenset(controls))


@functools.lru_cache(maxsize=8)
def _inlined(src: str, controls: frozenset[str]) -> str:
    tree = ast.parse(src)
    funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    inlinable = {n: f for n, f in funcs.items() if n in controls and _inlinable(f)}
    sites: dict[str, int] = {}
    for f in funcs.values():
        for node in ast.walk(f):
            name = _call_target(node)
            if name in inlinable:
                sites[name] = sites.get(name, 0) + 1
    counter = itertools.count()
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    lines = src.splitlines(keepends=True)
    out: list[str] = []
    pos = 0  # next source line (0-based) not yet copied
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        inliner = _Inliner(inlinable, sites, counter, taken)
        body = inliner.stmts(node.body)
        if not inliner.changed:
            continue
        node.body = body
        out.extend(lines[pos:node.lineno - 1])
        out.append(ast.unparse(node) + "\n")
        pos = node.end_lineno
    out.extend(lines[pos:])
    return "".join(out)


def _inlinable(f: ast.FunctionDef) -> bool:
    """A plain function of positional parameters ending in a ``return``, with no other return
    and no nested scope or name declaration that renaming could break."""
    a = f.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or f.decorator_list:
        return False
    if not f.body or not isinstance(f.body[-1], ast.Return):
        return False
    for node in ast.walk(ast.Module(body=f.body[:-1], type_ignores=[])):
        if isinstance(node, (ast.Return, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                             ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.comprehension)):
            return False
    return True


def _call_target(node: ast.AST) -> str | None:
    """The function name of a call statement ``f(a, b, ...)`` or ``t = f(a, b, ...)``
    (positional arguments only)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        c = node.value
    elif isinstance(node, ast.Expr):
        c = node.value
    else:
        return None
    if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and not c.keywords and not any(
            isinstance(x, ast.Starred) for x in c.args):
        return c.func.id
    return None


def _local_names(f: ast.FunctionDef) -> tuple[list[str], set[str], set[str]]:
    """Parameters, every local name (parameters and names bound in the body), and the
    parameters the body rebinds."""
    params = [p.arg for p in f.args.args]
    bound: set[str] = set()
    for node in ast.walk(f):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return params, bound | set(params), bound & set(params)


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr | str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.expr:
        new = self.names.get(node.id)
        if new is None:
            return node
        if isinstance(new, str):
            return ast.copy_location(ast.Name(id=new, ctx=node.ctx), node)
        return ast.copy_location(copy.deepcopy(new), node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.ExceptHandler:
        self.generic_visit(node)
        if node.name and isinstance(self.names.get(node.name), str):
            node.name = self.names[node.name]
        return node


class _Inliner:
    """Rewrites one caller's statement lists."""

    def __init__(self, inlinable: dict[str, ast.FunctionDef], sites: dict[str, int],
                 counter: Iterator[int], taken: set[str]) -> None:
        self.inlinable = inlinable
        self.taken = taken
        self.sites = sites
        self.counter = counter
        self.changed = False

    def stmts(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in body:
            name = _call_target(s)
            f = self.inlinable.get(name) if name else None
            if f is not None and (self.sites[name] == 1 or _size(f) <= MAX_COPIED_STATEMENTS):
                target = s.targets[0].id if isinstance(s, ast.Assign) else None
                out.extend(self.expand(f, s.value.args, target))
                self.changed = True
                continue
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(s, field, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    setattr(s, field, self.stmts(sub))
            if isinstance(s, ast.Try):
                for h in s.handlers:
                    h.body = self.stmts(h.body)
            out.append(s)
        return out

    def expand(self, f: ast.FunctionDef, args: list[ast.expr], target: str | None) -> list[ast.stmt]:
        params, local, rebound = _local_names(f)
        while True:  # fresh names, unlike any name of the module
            n = next(self.counter)
            names: dict[str, ast.expr | str] = {x: f"{x}_i{n}" for x in local}
            if self.taken.isdisjoint(names.values()):
                break
        self.taken.update(names.values())
        pre: list[ast.stmt] = []
        for p, a in zip(params, args):
            if isinstance(a, ast.Name) and p not in rebound:
                names[p] = a  # the caller's variable itself (aggregates by reference)
            else:  # evaluated once, in order, as the call did
                pre.append(ast.Assign(targets=[ast.Name(id=names[p], ctx=ast.Store())], value=a, lineno=0))
        rename = _Rename(names)
        body = [rename.visit(copy.deepcopy(s)) for s in f.body[:-1]]
        if target is not None:  # the returned value (the callee's locals: no side effects)
            ret = f.body[-1].value
            value = rename.visit(copy.deepcopy(ret)) if ret is not None else ast.Constant(value=None)
            body.append(ast.Assign(targets=[ast.Name(id=target, ctx=ast.Store())], value=value, lineno=0))
        return pre + body or [ast.Pass()]


def _size(f: ast.FunctionDef) -> int:
    return sum(isinstance(x, ast.stmt) for x in ast.walk(f))
