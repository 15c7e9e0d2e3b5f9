"""Statement and parser code generation inside one generated Python function: blocks,
assignments with copy-in/copy-out, parser state machines, calls, inlined actions and
table applies."""

from __future__ import annotations

import re

from p4switch.exec import hashes
from p4switch.exec.codegen import attr, is_aggregate, is_signed, scalar_width, underlying
from p4switch.exec.compile_base import (
    PARSER_LOOP_LIMIT,
    STABLE,
    UnsupportedError,
    dynamic_indices,
    names_used,
    root_decl,
)
from p4switch.exec.exprgen import ExprGen
from p4switch.exec.externgen import EXTERN_FUNCTIONS, EXTERN_METHODS
from p4switch.exec.tables import (
    Table,
)
from p4switch.frontend import ast as A
from p4switch.frontend import types as T
from p4switch.frontend.pretty import expr_text

# generated code naming a local directly (no attribute walk to cache)
_SIMPLE_NAME = re.compile(r"[A-Za-z_]\w*")
_PURE = re.compile(r"[A-Za-z_][\w.]*")  # a local or attribute chain: reading it again is free


class StmtGen(ExprGen):
    """Statement and expression generation inside one Python function."""

    # ---- statements ------------------------------------------------------------------------
    def flush(self) -> None:
        """Emit the pending side-effect statements (cleared in place: callers may hold the list)."""
        for line in self.pre:
            self.o(line)
        self.pre.clear()

    def block(self, b: A.Node | None) -> None:
        n = len(self.o.lines)
        if b is None:
            pass
        elif isinstance(b, A.BlockStatement):
            for s in b.statements:
                self.stmt(s)
        else:
            self.stmt(b)
        if len(self.o.lines) == n:
            self.o("pass")

    def var_decl(self, d: A.VarDecl) -> None:
        name = self.scope.bind(d, d.name)
        if d.init is not None:
            v = self.rvalue_copy(d.init)
            self.flush()
            self.o(f"{name} = {v}")
        else:
            self.o(f"{name} = {self.pc.types.default(d.type)}")

    def stmt(self, s: A.Node) -> None:
        o = self.o
        if isinstance(s, A.BlockStatement):
            self.block(s)
        elif isinstance(s, A.VarDecl):
            self.var_decl(s)
        elif isinstance(s, (A.ConstDecl, A.EmptyStatement)):
            pass
        elif isinstance(s, A.AssignmentStatement):
            self.assign(s.lhs, s.rhs, s.compound)
        elif isinstance(s, A.MethodCallStatement):
            self.call_stmt(s.call)
        elif isinstance(s, A.IfStatement):
            c = self.expr(s.cond)
            self.flush()
            o(f"if {c}:")
            with o.indent():
                self.block(s.then)
            if s.else_ is not None:
                o("else:")
                with o.indent():
                    self.block(s.else_)
        elif isinstance(s, A.SwitchStatement):
            self.switch(s)
        elif isinstance(s, A.ReturnStatement):
            v = self.expr(s.value) if s.value is not None else None
            self.flush()
            self.ret_stmt(v)
        elif isinstance(s, A.ExitStatement):
            for outs in reversed(self.exit_copy_outs):  # exit still copies out (P4-16 12.5)
                for a, n in outs:
                    self.store(a, n)
            o("raise ExitControl()")
        elif isinstance(s, (A.ForStatement, A.ForInStatement)):
            self.loop(s)
        elif isinstance(s, A.BreakStatement):
            o("break")
        elif isinstance(s, A.ContinueStatement):
            o("continue")
        else:
            raise UnsupportedError(s, f"statement {type(s).__name__} is not supported")

    def loop(self, s: A.ForStatement | A.ForInStatement) -> None:
        """A P4 for loop as a Python loop. C-style loops run their updates at the top of
        every pass but the first, so that ``continue`` (a Python continue) still runs them."""
        o = self.o
        if isinstance(s, A.ForInStatement):
            var = self.scope.bind(s.var, s.var.name)
            lo = self.expr(s.lo)
            if s.hi is not None:
                hi = self.expr(s.hi)
                self.flush()
                o(f"for {var} in range({lo}, {hi} + 1):")
            elif isinstance(s.lo, A.ListExpression):
                self.flush()
                o(f"for {var} in ({''.join(self.expr(e) + ', ' for e in s.lo.items)}):")
            elif isinstance(underlying(s.lo.type), T.StackType):  # each element, as a copy
                self.flush()
                o(f"for {var} in [x.copy() for x in {lo}.h]:")
            else:
                raise UnsupportedError(s.lo, "for-in over this collection is not supported")
        else:
            for st in s.init:
                self.stmt(st)
            first = self.scope.tmp("first")
            o(f"{first} = True")
            o("while True:")
            with o.indent():
                if s.updates:
                    o(f"if not {first}:")
                    with o.indent():
                        for st in s.updates:
                            self.stmt(st)
                o(f"{first} = False")
                if s.cond is not None:
                    c = self.expr(s.cond)
                    self.flush()
                    o(f"if not ({c}): break")
        if self.action_returns:
            self.action_returns[-1][1] += 1
        with o.indent():
            self.block(s.body)
        if self.action_returns:
            self.action_returns[-1][1] -= 1
            o(f"if {self.action_returns[-1][0]}: break")

    def ret_stmt(self, value: str | None) -> None:
        if self.in_action:
            if self.action_returns and self.action_returns[-1][1]:
                self.o(f"{self.action_returns[-1][0]} = True")
            self.o("break")
            return
        items = ([value or "None"] if self.has_ret else []) + self.outs
        if not items:
            self.o("return")
        elif len(items) == 1 and self.has_ret:
            self.o(f"return {items[0]}")
        else:
            self.o(f"return ({', '.join(items)},)")

    def switch(self, s: A.SwitchStatement) -> None:
        o = self.o
        e = s.expr
        if isinstance(e, A.Member) and e.kind == "apply_result" and e.name == "action_run":
            tdecl = e.expr.decl
            ai = self.table_apply(e.expr)
            actions = self.pc.table_actions[id(tdecl)]
            pending: list[str] = []
            first = True
            for c in s.cases:
                if isinstance(c.label, A.DefaultExpr):
                    cond = "True"
                else:
                    ad = c.action if c.action is not None else getattr(c.label, "decl", None)
                    idx = [i for i, a in enumerate(actions) if a is ad]
                    pending.extend(str(i) for i in idx)
                    if c.body is None:
                        continue
                    # comparisons, not ``in`` a tuple: compiled, that is a generic tuple search
                    cond = " or ".join(f"{ai} == {i}" for i in pending) if pending else "False"
                pending = []
                self._case(cond, first, c.body)
                first = False
            return
        v = self.expr(e)
        self.flush()
        t = self.scope.tmp("sw")
        o(f"{t} = {v}")
        pending = []
        first = True
        for c in s.cases:
            if isinstance(c.label, A.DefaultExpr):
                cond = "True"
            else:
                pending.append(self.expr(c.label))
                if c.body is None:
                    continue
                cond = " or ".join(f"{t} == {x}" for x in pending)
            pending = []
            self._case(cond, first, c.body)
            first = False

    def _case(self, cond: str, first: bool, body: A.Node) -> None:
        """One switch case; ``default`` (always last in P4) becomes a plain ``else``."""
        o = self.o
        if cond == "True" and not first:
            o("else:")
        else:
            o(("if " if first else "elif ") + cond + ":")
        with o.indent():
            self.block(body)

    # ---- parser transitions ----------------------------------------------------------------
    def transition(self, tr: A.TransitionStatement | None, states: dict[str, int]) -> None:
        o = self.o
        if tr is None:
            o(f"raise ParserError({self.pc.errors['NoError']})")
            return
        t = tr.target
        if isinstance(t, A.SelectExpression):
            keys = []
            for e in t.exprs:
                v = self.expr(e)
                k = self.scope.tmp("k")
                self.pre.append(f"{k} = {v}")
                keys.append((k, e.type))
            self.flush()
            first = True
            for case in t.cases:
                ks = case.keyset
                elems = ks.items if isinstance(ks, A.ListExpression) and len(keys) > 1 else [ks]
                conds = []
                if len(elems) == 1 and len(keys) > 1 and isinstance(elems[0], (A.DefaultExpr, A.DontCare)):
                    elems = elems * len(keys)
                for (k, kt), el in zip(keys, elems):
                    c = self.keyset_cond(k, kt, el)
                    if c != "True":
                        conds.append(c)
                if not conds:  # a catch-all case: the cases after it can never match
                    if first:
                        self.goto(case.state, states)
                    else:
                        o("else:")
                        with o.indent():
                            self.goto(case.state, states)
                    return
                o(("if " if first else "elif ") + " and ".join(conds) + ":")
                first = False
                with o.indent():
                    self.goto(case.state, states)
            if first:
                self.goto(None, states)
            else:
                o("else:")
                with o.indent():
                    o(f"raise ParserError({self.pc.errors['NoMatch']})")
        else:
            self.goto(t, states)

    def goto(self, target: A.NameRef | None, states: dict[str, int]) -> None:
        o = self.o
        name = target.name if target is not None else "reject"
        if name == "accept":  # a sub-parser's scalar out/inout parameters follow the offset
            o("return " + (f"(o, {', '.join(self.outs)},)" if self.outs else "o"))
        elif name == "reject":
            o("raise ParserError(ctx.sm.parser_error)")
        elif name in states:
            if states[name] <= self.state_index:  # a back edge: bound parser loops (BMv2 has no limit)
                o("loops += 1")
                o(f"if loops > {PARSER_LOOP_LIMIT}: raise ParserError({self.pc.errors['ParserTimeout']})")
            o(f"st = {states[name]}")
            o("continue")
        else:
            raise UnsupportedError(target, f"unknown parser state {name}")

    def keyset_cond(self, k: str, kt: T.P4Type, el: A.Expression) -> str:
        if isinstance(el, (A.DefaultExpr, A.DontCare)):
            return "True"
        if isinstance(el, A.Mask):
            m = self.expr(el.mask)
            v = self.expr(el.value_expr)
            return f"({k} & {m}) == ({v} & {m})"
        if isinstance(el, A.Range):
            return f"{self.expr(el.low)} <= {k} <= {self.expr(el.high)}"
        if isinstance(el, A.NameRef) and isinstance(el.decl, A.ValueSetDecl):
            return f"{self.pc.objects[id(el.decl)]}.contains({k})"
        return f"{k} == {self.expr(el)}"

    # ---- assignment ------------------------------------------------------------------------
    def rvalue_copy(self, e: A.Expression) -> str:
        v = self.expr(e)
        if is_aggregate(underlying(e.type)) and not isinstance(
                e, (A.StructExpression, A.ListExpression, A.InvalidHeader, A.MethodCall)):
            return f"{v}.copy()"
        return v

    def assign(self, lhs: A.Expression, rhs: A.Expression, compound: bool = False) -> None:
        """The l-value is evaluated first, once (run-time stack indices are read before the
        right-hand side runs; ``a[f()] += x`` calls f once), then the right-hand side."""
        twins = dynamic_indices(rhs.left) if compound else []
        fixed = []
        for i, node in enumerate(dynamic_indices(lhs)):
            t = self.scope.tmp("ix")
            self.pre.append(f"{t} = {self.expr(node.index)}")
            fixed += [id(node)] + ([id(twins[i])] if i < len(twins) else [])
            self.fixed_index.update((k, t) for k in fixed[-2:])
        try:
            lt = underlying(lhs.type)
            if isinstance(rhs, A.ListExpression) and isinstance(lt, T.StructLikeType):
                v = self.construct(lt, rhs.items)
            elif isinstance(rhs, A.StructExpression) and isinstance(lt, T.StructLikeType):
                v = self.struct_expr(rhs, lt)
            else:
                v = self.rvalue_copy(rhs)
            self.store(lhs, v)
        finally:
            for k in fixed:
                self.fixed_index.pop(k, None)

    def keep_order(self, codes: list[str], kinds: list[bool | None], mark: int) -> None:
        """Operands are evaluated left to right. When the code of a later one needed
        statements (``pre[mark:]``: a call with out arguments, a table apply), the earlier
        operands in ``codes`` are read into temporaries ahead of them. ``kinds``: None to
        leave a code alone (an aggregate passed by reference), True to copy an aggregate."""
        if len(self.pre) == mark:
            return
        frozen = []
        for i, (c, k) in enumerate(zip(codes, kinds)):
            if k is None or STABLE.fullmatch(c):
                continue
            t = self.scope.tmp("v")
            frozen.append(f"{t} = {c}{'.copy()' if k else ''}")
            codes[i] = t
        self.pre[mark:mark] = frozen

    def operands(self, es: list[A.Expression], copy: bool = False) -> list[str]:
        """Codes of ``es`` evaluated left to right (``rvalue_copy`` for aggregates when ``copy``)."""
        codes: list[str] = []
        kinds: list[bool | None] = []
        for e in es:
            mark = len(self.pre)
            c = self.rvalue_copy(e) if copy else self.expr(e)
            self.keep_order(codes, kinds, mark)
            codes.append(c)
            kinds.append(not copy and is_aggregate(underlying(e.type)))
        return codes

    def store(self, lhs: A.Expression, value: str) -> None:
        """Emit ``lhs = value`` (value already evaluated code)."""
        if isinstance(lhs, A.DontCare):
            self.flush()
            self.o(f"_ = {value}")
            return
        if isinstance(lhs, A.Slice):
            base = lhs.expr
            hi, lo = lhs.hi_value, lhs.lo_value
            m = ((1 << (hi - lo + 1)) - 1) << lo
            cur = self.expr(base)
            t = self.scope.tmp("sl")
            self.pre.append(f"{t} = {value}")
            self.store(base, f"(({cur}) & {~m & ((1 << (scalar_width(base.type) or 0)) - 1)}) | ((({t}) << {lo}) & {m})")
            return
        target = self.lvalue(lhs)
        self.flush()
        if target.endswith(")"):  # a stack element chosen at run time (`s[i]`, `s.next`)
            self.o(f"{target}.assign({value})")
            return
        if (isinstance(lhs, A.NameRef) and isinstance(lhs.decl, A.Parameter)
                and lhs.decl.direction in ("out", "inout") and is_aggregate(underlying(lhs.type))):
            # the caller's object, passed by reference: it takes the value in place
            self.o(f"{target}.assign({value})")
            return
        if isinstance(lhs, A.Member) and lhs.kind == "field":
            ht = underlying(lhs.expr.type)
            if self.pc.types.kept_fields(ht):  # the header's extracted bytes follow the field
                owner, a = target.rsplit(".", 1)
                if not _PURE.fullmatch(owner):  # a stack element: looked up once, after the value
                    v, h = self.scope.tmp("v"), self.scope.tmp("h")
                    self.o(f"{v} = {value}")
                    self.o(f"{h} = {owner}")
                    owner, value = h, v
                self.o(f"{owner}.{a} = {value}")
                self.o(self.pc.types.dropped_bytes(ht, owner, a))
                return
        self.o(f"{target} = {value}")

    def lvalue(self, e: A.Expression) -> str:
        if isinstance(e, A.NameRef):
            n = self.scope.get(e.decl)
            if n is None:
                raise UnsupportedError(e, f"cannot assign to {e.name}")
            return n
        if isinstance(e, A.Member):
            if e.kind == "stack":
                return self.expr(e)
            return f"{self.expr(e.expr)}.{attr(e.name)}"
        if isinstance(e, A.ArrayIndex):
            return self.e_ArrayIndex(e, typed=False)
        raise UnsupportedError(e, f"unsupported assignment target {type(e).__name__}")

    # ---- calls -----------------------------------------------------------------------------
    def call_stmt(self, c: A.MethodCall) -> None:
        k = c.kind
        o = self.o
        name = c.method_name
        args = [a.value for a in c.args]
        if k == "table_apply":
            self.table_apply(c)
            return
        if k == "action":
            self.inline_action(c.decl, args)
            return
        if k == "function":
            self.call_function(c, statement=True)
            self.flush()
            return
        if k in ("control_apply", "parser_apply"):
            self.call_block(c, args)
            return
        if k == "verify":
            cond, err = self.expr(args[0]), self.expr(args[1])
            self.flush()
            o(f"if not {cond}: raise ParserError({err})")
            return
        if k == "packet_in":
            self.packet_in_stmt(c, name, args)
            return
        if k == "packet_out":
            self.emit_stmt(args[0])
            return
        if k in ("header_method", "union_method"):
            self.header_method(c, name)
            return
        if k == "stack_method":
            st = self.expr(c.target.expr)
            n = self.expr(args[0])
            self.flush()
            o(f"{st}.{name}({n})")
            return
        if k == "extern_method":
            ext = self._target_extern(c)
            if ext == "packet_in":
                self.packet_in_stmt(c, name, args)
            elif ext == "packet_out":
                self.emit_stmt(args[0])
            else:
                self.extern_method(c, name, args)
            return
        if k == "extern_function":
            if name == "verify":
                cond, err = self.expr(args[0]), self.expr(args[1])
                self.flush()
                o(f"if not {cond}: raise ParserError({err})")
                return
            self.extern_function(c, name, args)
            return
        v = self.expr(c)
        self.flush()
        o(v)

    @staticmethod
    def _target_extern(c: A.MethodCall) -> str | None:
        t = getattr(getattr(c.target, "expr", None), "type", None)
        return t.name if isinstance(t, T.ExternType) else None

    def header_method(self, c: A.MethodCall, name: str) -> None:
        o = self.o
        target = c.target.expr
        h = self.expr(target)
        parent = target.expr if isinstance(target, A.Member) and target.kind == "field" else None
        in_union = parent is not None and isinstance(underlying(parent.type), T.HeaderUnionType)
        self.flush()
        if name == "setValid":
            if in_union:  # the other members become invalid
                o(f"if not {h}.v_: {self.expr(parent)}.inval()")
            o(f"{h}.setv()")
        elif name == "setInvalid":
            if isinstance(underlying(target.type), T.HeaderUnionType):
                o(f"{h}.inval()")
            else:
                o(f"{h}.v_ = False")
        else:
            o(h)

    def packet_in_stmt(self, c: A.MethodCall, name: str, args: list[A.Expression]) -> None:
        o = self.o
        if name == "extract":
            target = args[0]
            parent = target.expr if isinstance(target, A.Member) and target.kind == "field" else None
            union = parent is not None and isinstance(underlying(parent.type), T.HeaderUnionType)
            elem = parent if union else target  # a header, or the union holding it
            stack_next = isinstance(elem, A.Member) and elem.kind == "stack" and elem.name == "next"
            elem_code = self.expr(elem)
            nbits = self.expr(args[1]) if len(args) > 1 else None
            self.flush()
            if stack_next:  # the element at nextIndex (StackOutOfBounds past the end)
                tmp = self.scope.tmp("h")
                o(f"{tmp} = {elem_code}")
                elem_code = tmp
            h = f"{elem_code}.{attr(target.name)}" if union else elem_code
            if union:
                o(f"{elem_code}.inval()")
            ht = underlying(target.type)
            if nbits or not isinstance(ht, T.HeaderType) or ht.has_varbit():
                o(f"o = {h}.ext(d, o{', ' + nbits if nbits else ''})")
            else:  # fixed size: extracted inline, straight from the frame bytes
                if not _SIMPLE_NAME.fullmatch(h):
                    tmp = self.scope.tmp("h")
                    o(f"{tmp} = {h}")
                    h = tmp
                for line in self.pc.types.extract_lines(ht, h, "_e"):
                    o(line)
                o("o = _e")
            if stack_next:
                o(f"{self.expr(elem.expr)}.nxt += 1")
        elif name == "advance":
            n = self.expr(args[0])
            self.flush()
            t = self.scope.tmp("adv")
            o(f"{t} = o + (({n}) >> 3)")
            o(f"if {t} > len(d): raise ParserError({self.pc.errors['PacketTooShort']})")
            o(f"o = {t}")
        else:
            v = self.expr(c)
            self.flush()
            o(v)

    def emit_stmt(self, e: A.Expression) -> None:
        out = self._packet_out()
        t = underlying(e.type)
        code = self.expr(e)
        self.flush()
        self._emit(code, t, out)

    def _packet_out(self) -> str:
        if self.scope.packet_out is None:
            raise UnsupportedError(None, "emit outside a deparser")
        return self.scope.packet_out

    def _emit(self, code: str, t: T.P4Type, out: str) -> None:
        o = self.o
        if isinstance(t, T.HeaderType):
            if t.has_varbit():
                o(f"if {code}.v_: {code}.emit({out})")
            else:  # fixed size: packed inline
                h = code
                if not _SIMPLE_NAME.fullmatch(code):
                    h = self.scope.tmp("h")
                    o(f"{h} = {code}")
                lines = self.pc.types.emit_lines(t, h, out)
                if lines:
                    o(f"if {h}.v_:")
                    with o.indent():
                        for line in lines:
                            o(line)
        elif isinstance(t, T.HeaderUnionType):
            for f in t.fields:
                o(f"if {code}.{attr(f.name)}.v_: {code}.{attr(f.name)}.emit({out})")
        elif isinstance(t, T.StackType):
            v, elems = self.scope.tmp("e"), self.scope.tmp("es")
            o(f"{elems}: list[{self.pc.types.annotation(t.elem)}] = {code}.h")  # mypyc: a typed loop
            o(f"for {v} in {elems}:")
            with o.indent():
                self._emit(v, underlying(t.elem), out)
        elif isinstance(t, T.StructType):
            for f in t.fields:
                self._emit(f"{code}.{attr(f.name)}", underlying(f.type), out)
        else:
            raise UnsupportedError(None, f"cannot emit a value of type {t}")

    def call_block(self, c: A.MethodCall, args: list[A.Expression]) -> None:
        fname, decl = self.pc.applied_block(c, self.prefix)
        params = decl.params
        codes = []
        outs = []
        agg_outs = []
        for p, a in zip(params, args):
            if isinstance(p.type, T.ExternType) and p.type.name == "packet_in":
                continue
            if isinstance(p.type, T.ExternType) and p.type.name == "packet_out":
                codes.append(self._packet_out())
                continue
            agg = is_aggregate(underlying(p.type))
            if p.direction == "out" and agg:  # starts fresh (invalid), copied out after
                t = self.scope.tmp("o")
                self.pre.append(f"{t} = {self.pc.types.default(p.type)}")
                codes.append(t)
                agg_outs.append((a, t))
            elif p.direction == "out":
                codes.append(self.pc.types.default(p.type))
            else:
                codes.append(self.expr(a))
            if p.direction in ("out", "inout") and not agg:
                outs.append(a)
        self.flush()
        if isinstance(decl, A.ParserDecl):
            if outs:
                t = self.scope.tmp("r")
                self.o(f"{t} = {fname}(d, o, {', '.join(codes + ['ctx'])})")
                self.o(f"o = {t}[0]")
                for i, a in enumerate(outs):
                    self.store(a, f"{t}[{i + 1}]")
            else:
                self.o(f"o = {fname}(d, o, {', '.join(codes + ['ctx'])})")
        elif not outs:
            self.o(f"{fname}({', '.join(codes + ['ctx'])})")
        else:
            t = self.scope.tmp("r")
            self.o(f"{t} = {fname}({', '.join(codes + ['ctx'])})")
            for i, a in enumerate(outs):
                self.store(a, f"{t}[{i}]")
        for a, tv in agg_outs:
            self.store(a, tv)

    def call_function(self, c: A.MethodCall, statement: bool) -> str:
        """Call a P4 function: scalar out/inout come back in the returned tuple; an ``out``
        aggregate starts as a fresh (invalid) value and is copied out after the call."""
        fname, params, has_ret = self.pc.functions[id(c.decl)]
        args = [a.value for a in c.args]
        codes: list[str] = []
        kinds: list[bool | None] = []
        outs = []
        agg_outs = []
        for p, a in zip(params, args):
            agg = is_aggregate(underlying(p.type))
            mark = len(self.pre)
            if p.direction == "out" and agg:
                c = self.scope.tmp("o")
                self.pre.append(f"{c} = {self.pc.types.default(p.type)}")
                agg_outs.append((a, c))
            elif p.direction == "out":
                c = self.pc.types.default(p.type)
            else:
                c = self.rvalue_copy(a) if p.direction in (None, "in") else self.expr(a)
            self.keep_order(codes, kinds, mark)
            codes.append(c)
            kinds.append(None if agg and p.direction == "inout" else False)
            if p.direction in ("out", "inout") and not agg:
                outs.append(a)
        call = f"{fname}({', '.join(codes + ['ctx'])})"
        if not outs and not agg_outs:
            if statement:
                self.flush()
                self.o(call)
            return call
        t = self.scope.tmp("r")
        self.pre.append(f"{t} = {call}")
        base = 1 if has_ret else 0
        for i, a in enumerate(outs):  # copy-out: still pending, the value may be read before
            self.deferred(self.store, a, f"{t}[{base + i}]")
        for a, tv in agg_outs:
            self.deferred(self.store, a, tv)
        if not has_ret:
            return "None"
        return f"{t}[0]" if outs else t

    # ---- actions and tables ----------------------------------------------------------------
    def inline_action(self, ad: A.ActionDecl, args: list[A.Expression] | None, data: str | None = None,
                      bound: list[A.Expression] | None = None) -> None:
        """Inline action ``ad``: with ``args`` for a direct call, or with the control-plane
        arguments in the tuple variable ``data`` when a table runs it (``bound`` then holds
        the arguments of its directional parameters given in the table's actions list)."""
        o = self.o
        outs = []
        cp_params = [p for p in ad.params if p.direction is None]
        if args is not None:
            pairs = list(zip(ad.params, args))
        else:
            pairs = list(zip([p for p in ad.params if p.direction is not None], bound or []))
        # an inout aggregate is passed by reference unless the body can also reach it by
        # another name (the control's own `hdr`, another argument): then copy-in/copy-out
        roots = [id(root_decl(a)) for p, a in pairs if p.direction in ("out", "inout")]
        reached = names_used(ad) if pairs else set()
        if pairs:
            for p, a in pairs:
                n = self.scope.bind(p, p.name)
                if p.direction == "out":  # a fresh value, copied out after the body
                    self.flush()
                    o(f"{n} = {self.pc.types.default(p.type)}")
                    if is_aggregate(underlying(p.type)):
                        outs.append((a, n))
                elif p.direction == "inout":
                    v = self.expr(a)
                    self.flush()
                    r = id(root_decl(a))
                    if is_aggregate(underlying(p.type)) and (r in reached or roots.count(r) > 1):
                        o(f"{n} = {v}.copy()")
                        outs.append((a, n))
                    else:
                        o(f"{n} = {v}")
                else:
                    v = self.rvalue_copy(a)
                    self.flush()
                    o(f"{n} = {v}")
                if p.direction in ("out", "inout") and not is_aggregate(underlying(p.type)):
                    outs.append((a, n))
        if args is None:
            names = [self.scope.bind(p, p.name) for p in cp_params]
            if names and self.pc.types.native:
                # the arguments' tuple typed (bit<W> values are ints): mypyc then checks it
                # once and unpacks it by index, and the parameters are native ints in the body
                types = [a if a == "int" else "Any" for a in map(self.pc.types.annotation, (p.type for p in cp_params))]
                typed = self.scope.tmp("args")
                o(f"{typed}: tuple[{', '.join(types)}] = {data}")
                data = typed
            if len(names) == 1:
                o(f"{names[0]} = {data}[0]")
            elif names:
                o(f"{', '.join(names)} = {data}")
        has_return = any(isinstance(n, A.ReturnStatement) for n in ad.body.walk())
        if has_return:
            flag = self.scope.tmp("returned")
            o(f"{flag} = False")
            self.action_returns.append([flag, 0])
            o("while True:")
            o.depth += 1
        self.in_action += 1
        self.exit_copy_outs.append(outs)
        self.block(ad.body)
        self.exit_copy_outs.pop()
        self.in_action -= 1
        if has_return:
            self.action_returns.pop()
            o("break")
            o.depth -= 1
        for a, n in outs:
            self.store(a, n)

    def table_apply(self, c: A.MethodCall) -> str:
        """Apply a table and run the chosen action; returns the variable holding the action
        index and leaves the hit flag in ``self.last_hit``."""
        tdecl = c.decl if isinstance(c.decl, A.TableDecl) else c.target.expr.decl
        obj = self.pc.objects[id(tdecl)]
        keys = []
        for k in tdecl.key:
            v = self.expr(k.expr)
            if isinstance(underlying(k.expr.type), T.BoolType):
                v = f"int({v})"
            keys.append(v)
        ai, ar, hit = self.scope.tmp("ai"), self.scope.tmp("ar"), self.scope.tmp("hit")
        key = "(" + "".join(k + ", " for k in keys) + ")"
        self.flush()
        o = self.o
        table: Table = self.pc.ns[obj]
        o(f"{ai}: int")  # (no code in Python) mypyc compares it to each action's index natively
        if table.plain or table.counted:
            # no meter/profile/timeout: look the entry up inline, no apply() call; a direct
            # counter counts the hit here
            r = self.scope.tmp("r")
            if table.exact_index is not None:
                single = keys[0] if len(keys) == 1 else key
                o(f"{r} = {self.pc.bind(obj + '_index', table.exact_index, 'dict[Any, Any]')}.get({single})")
            elif table.memo is not None:  # the remembered answer, else the search (which remembers it)
                # nothing to look up while the table is empty: no key made, hashed and compared
                o(f"if {self.pc.bind(obj + '_entries', table.entries_by_key, 'dict[Any, Any]')}:")
                with o.indent():
                    k = self.scope.tmp("k")
                    shifts = table.memo_shifts
                    if shifts is not None and all(scalar_width(x.expr.type) == f.width and not is_signed(x.expr.type)
                                                  for x, f in zip(tdecl.key, table.key)):
                        o(f"{k} = " + " | ".join(f"(({v}) << {n})" if n else f"({v})" for v, n in zip(keys, shifts)))
                        find = "find_packed"
                    else:
                        o(f"{k} = {key}")
                        find = "find"
                    o(f"{r} = {self.pc.bind(obj + '_memo', table.memo, 'dict[Any, Any]')}.get({k}, UNSEEN)")
                    o(f"if {r} is UNSEEN: {r} = {obj}.{find}({k})")
                o("else:")
                with o.indent():
                    o(f"{r} = None")
            else:
                o(f"{r} = {obj}.find({key})")
            # the default action or the entry's hit (the look-up's answer, ``tables._Rec.hit``),
            # typed, so that mypyc unpacks the tuple and adds to the counts natively
            d, h = self.scope.tmp("d"), self.scope.tmp("h")
            o(f"if {r} is None:")
            with o.indent():
                cell = self.pc.bind(obj + "_default", table.default_cell, "list[tuple[int, Any]]")
                o(f"{d}: tuple[int, Any] = {cell}[0]")
                o(f"{ai} = {d}[0]; {ar} = {d}[1]; {hit} = False")
            o("else:")
            with o.indent():
                o(f"{h}: tuple[int, Any, Any] = {r}")
                o(f"{ai} = {h}[0]; {ar} = {h}[1]; {hit} = True")
                if table.counted:
                    c = self.scope.tmp("c")
                    o(f"{c}: vec[i64] = {h}[2]; {c}[0] = {c}[0] + 1; {c}[1] = {c}[1] + ctx.nbytes")
        elif table.selected_memo is not None:
            # an action selector's remembered member, probed here: ``apply`` is interpreted,
            # and a call into it for every hit cost more than the probe
            k, r, s = self.scope.tmp("k"), self.scope.tmp("r"), self.scope.tmp("s")
            o(f"{k} = {key}")
            o(f"{r} = {self.pc.bind(obj + '_selected', table.selected_memo, 'dict[Any, Any]')}.get({k})")
            o(f"if {r} is None: {r} = {obj}_apply({k}, ctx.nbytes, ctx.now)")
            o(f"{s}: tuple[int, Any, bool] = {r}")
            o(f"{ai} = {s}[0]; {ar} = {s}[1]; {hit} = {s}[2]")
        else:
            o(f"{ai}, {ar}, {hit} = {obj}_apply({key}, ctx.nbytes, ctx.now)")
        actions = self.pc.table_actions[id(tdecl)]
        bound = self.pc.table_action_args[id(tdecl)]
        for i, ad in enumerate(actions):
            o(("if " if i == 0 else "elif ") + f"{ai} == {i}:")
            with o.indent():
                self.inline_action(ad, None, ar, bound.get(id(ad)))
        self.last_hit = hit
        return ai

    # ---- externs ---------------------------------------------------------------------------
    def extern_method(self, c: A.MethodCall, name: str, args: list[A.Expression]) -> None:
        ext = c.target.expr.decl.type.name
        gen = EXTERN_METHODS.get(ext)
        if gen is None:
            raise UnsupportedError(c, f"extern method {ext}.{name} is not supported")
        gen(self, c, name, args, self.pc.objects.get(id(c.target.expr.decl)))

    def extern_function(self, c: A.MethodCall, name: str, args: list[A.Expression]) -> None:
        gen = EXTERN_FUNCTIONS.get(name)
        if gen is None:
            raise UnsupportedError(c, f"extern function {name} is not supported")
        gen(self, c, name, args)

    def _digest_call(self, algo_e: A.Expression, data_e: A.Expression, payload: bool,
                     c: A.MethodCall) -> tuple[str, str]:
        """(function name, argument code) computing a checksum/hash of ``data_e``."""
        algo = self._algo(algo_e, c)
        if algo == "H_csum16" and not payload:
            flag = [False]
            data = self.pack(data_e, int_algo=flag)
            if flag[0]:
                self.pc.ns["H_csum16_int"] = hashes.csum16_int
                return "H_csum16_int", data
            return algo, data
        return algo, self.pack(data_e, payload=payload)

    def _algo(self, e: A.Expression, c: A.MethodCall) -> str:
        v = e.value
        if v is None:
            raise UnsupportedError(c, "the hash algorithm must be a constant")
        name = self.pc._enum_name(v)
        key = f"H_{name}"
        if key not in self.pc.ns:
            self.pc.ns[key] = hashes.algorithm(name)
        return key

    def digest(self, c: A.MethodCall, args: list[A.Expression]) -> None:
        data = args[1]
        t = underlying(data.type)
        fields = self.flatten(data)
        if isinstance(t, T.StructType) and t.name:
            dname = self.pc.checked.control_plane_name(t.decl) if t.decl is not None else t.name
            names = [f.name for f in t.fields]
        else:
            dname = f"digest_{len(self.pc.result.actions)}"
            names = [expr_text(x) if isinstance(x, A.Expression) else f"f{i}"
                     for i, x in enumerate(data.items if isinstance(data, A.ListExpression) else [])]
        if len(names) != len(fields):
            names = [f"f{i}" for i in range(len(fields))]
        parts = ", ".join(f"({n!r}, {w}, {v})" for n, (v, w, _) in zip(names, fields))
        self.flush()
        self.o(f"ctx.digests += (({dname!r}, [{parts}]),)")
