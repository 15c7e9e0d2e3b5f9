"""Statements and parser transitions: assignments, calls, conditionals, switch, loops,
return/exit rules, and the select expressions of parser states.
"""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend import types as T


class Statements:
    """Checking statements (``stmt``) and parser transitions."""

    def check_transition(self, tr: ast.TransitionStatement) -> None:
        target = tr.target
        if isinstance(target, ast.NameRef):
            self.resolve_state(target)
            return
        sel: ast.SelectExpression = target
        sel.exprs = [self.expr(e) for e in sel.exprs]
        types = [e.type for e in sel.exprs]
        for e in sel.exprs:
            if not (isinstance(T.underlying(e.type), (T.BitsType, T.BoolType)) or
                    isinstance(e.type, (T.EnumType, T.ErrorType))):
                raise self.err(e, f"cannot select on a value of type {e.type}")
        for c in sel.cases:
            ks = c.keyset
            if not types:  # `select () { default: s; }`: only default/_ can match nothing
                if not isinstance(ks, (ast.DefaultExpr, ast.DontCare)):
                    raise self.err(ks, "a select without expressions only has 'default' or '_' cases")
                ks.type = T.DONT_CARE
            elif len(types) > 1 or (isinstance(ks, ast.ListExpression) and len(ks.items) > 1):
                if isinstance(ks, (ast.DefaultExpr, ast.DontCare)):
                    ks.type = T.DONT_CARE
                elif isinstance(ks, ast.NameRef) and isinstance(self.refs.decl(ks),
                                                                ast.ValueSetDecl):
                    c.keyset = self.expr(ks)  # a value_set of tuples
                elif not isinstance(ks, ast.ListExpression) or len(ks.items) != len(types):
                    raise self.err(ks, f"select case needs {len(types)} keyset values")
                else:
                    ks.items = [self.keyset_element(k, t) for k, t in zip(ks.items, types)]
                    ks.type = T.TupleType(tuple(types))
            else:
                if isinstance(ks, ast.ListExpression) and len(ks.items) == 1:
                    ks = ks.items[0]
                c.keyset = self.keyset_element(ks, types[0])
            self.resolve_state(c.state)
        sel.type = T.STATE

    def resolve_state(self, ref: ast.NameRef) -> None:
        decl = self.refs.decl(ref)
        if not isinstance(decl, ast.ParserState):
            raise self.err(ref, f"'{ref.name}' is not a parser state")
        ref.decl = decl
        ref.type = T.STATE

    def check_block(self, b: ast.BlockStatement) -> None:
        for s in b.statements:
            self.stmt(s)

    def stmt(self, s: ast.Node) -> None:
        if isinstance(s, ast.AssignmentStatement):
            s.lhs = self.expr(s.lhs)
            self.require_lvalue(s.lhs, "assign to")
            s.rhs = self.coerce(self.expr(s.rhs, s.lhs.type), s.lhs.type, "assignment")
        elif isinstance(s, ast.MethodCallStatement):
            s.call = self.expr(s.call)
            if not isinstance(s.call, ast.MethodCall):
                raise self.err(s, "expression is not a call")
        elif isinstance(s, ast.BlockStatement):
            self.check_block(s)
        elif isinstance(s, ast.IfStatement):
            s.cond = self.expr(s.cond, T.BOOL)
            if s.cond.type != T.BOOL:
                raise self.err(s.cond, f"if condition must be bool, not {s.cond.type}")
            self.stmt(s.then)
            if s.else_ is not None:
                self.stmt(s.else_)
        elif isinstance(s, ast.SwitchStatement):
            self.check_switch(s)
        elif isinstance(s, ast.ReturnStatement):
            if self.return_type is None:
                raise self.err(s, "return is not allowed here")
            if s.value is not None:
                if self.return_type == T.VOID:
                    raise self.err(s.value, "return with a value in a void context")
                s.value = self.coerce(self.expr(s.value, self.return_type),
                                      self.return_type, "return value")
            elif self.return_type != T.VOID:
                raise self.err(s, f"return needs a value of type {self.return_type}")
        elif isinstance(s, ast.ExitStatement):
            if self.in_parser:
                raise self.err(s, "exit is not allowed in a parser")
        elif isinstance(s, ast.EmptyStatement):
            pass
        elif isinstance(s, ast.ForStatement):
            self.check_for(s)
        elif isinstance(s, ast.ForInStatement):
            self.check_for_in(s)
        elif isinstance(s, (ast.BreakStatement, ast.ContinueStatement)):
            if not self.loop_depth:
                word = "break" if isinstance(s, ast.BreakStatement) else "continue"
                raise self.err(s, f"{word} outside of a for loop")
        elif isinstance(s, (ast.VarDecl, ast.ConstDecl, ast.InstanceDecl)):
            self.check_declaration(s)
        elif isinstance(s, ast.TransitionStatement):
            self.check_transition(s)
        else:
            raise self.err(s, f"unexpected {type(s).__name__} here")

    def check_for(self, s: ast.ForStatement) -> None:
        if self.in_parser:
            raise self.err(s, "for loops are not allowed in a parser")
        for init in s.init:
            self.stmt(init)
        if s.cond is not None:
            s.cond = self.expr(s.cond, T.BOOL)
            if s.cond.type != T.BOOL:
                raise self.err(s.cond, f"for condition must be bool, not {s.cond.type}")
        for upd in s.updates:
            self.stmt(upd)
        self.loop_body(s.body)

    def check_for_in(self, s: ast.ForInStatement) -> None:
        if self.in_parser:
            raise self.err(s, "for loops are not allowed in a parser")
        self.check_declaration(s.var)
        t = s.var.type
        if s.hi is not None:
            s.lo = self.coerce(self.expr(s.lo, t), t, "range start")
            s.hi = self.coerce(self.expr(s.hi, t), t, "range end")
        else:
            s.lo = self.expr(s.lo)
            ct = T.underlying(s.lo.type)
            if isinstance(ct, T.StackType):
                if T.underlying(ct.elem) != T.underlying(t):
                    raise self.err(s.var, f"loop variable of type {t} cannot take elements "
                                          f"of {ct}")
            elif isinstance(s.lo, ast.ListExpression):
                s.lo.items = [self.coerce(self.expr(e, t), t, "list element")
                              for e in s.lo.items]
            else:
                raise self.err(s.lo, f"cannot iterate over a value of type {s.lo.type}")
        self.loop_body(s.body)

    def loop_body(self, body: ast.Node) -> None:
        self.loop_depth += 1
        try:
            self.stmt(body)
        finally:
            self.loop_depth -= 1

    def check_switch(self, s: ast.SwitchStatement) -> None:
        self.switch_subject = s.expr  # where `t.apply().action_run` may stand
        s.expr = self.expr(s.expr)
        t = s.expr.type
        seen: set = set()
        if isinstance(t, T.ActionEnumType):
            for c in s.cases:
                if isinstance(c.label, ast.DefaultExpr):
                    c.label.type = T.DONT_CARE
                elif isinstance(c.label, ast.NameRef):
                    if c.label.name not in t.actions:
                        raise self.err(c.label, f"'{c.label.name}' is not an action of table "
                                                f"{t.table.name}")
                    c.action = c.label.decl = self.refs.decl(c.label)
                    c.label.type = t
                    if c.label.name in seen:
                        raise self.err(c.label, f"duplicate switch label '{c.label.name}'")
                    seen.add(c.label.name)
                else:
                    raise self.err(c.label, "switch label must be an action name")
        else:
            if not isinstance(T.underlying(t), T.BitsType) and not isinstance(
                    t, (T.EnumType, T.ErrorType)):
                raise self.err(s.expr, f"cannot switch on a value of type {t}")
            for c in s.cases:
                if isinstance(c.label, ast.DefaultExpr):
                    c.label.type = T.DONT_CARE
                    continue
                c.label = self.coerce(self.expr(c.label, t), t, "switch label")
                if not c.label.is_const:
                    raise self.err(c.label, "switch label must be a compile-time constant")
                if c.label.value in seen:
                    raise self.err(c.label, "duplicate switch label")
                seen.add(c.label.value)
        for i, c in enumerate(s.cases):
            if isinstance(c.label, ast.DefaultExpr) and i != len(s.cases) - 1:
                raise self.err(c.label, "'default' must be the last switch label")
            if c.body is not None:
                self.check_block(c.body)
        if s.cases and s.cases[-1].body is None:
            raise self.err(s.cases[-1], "the last switch label needs a body")

    def require_lvalue(self, e: ast.Expression, what: str) -> None:
        reason = self._not_lvalue(e)
        if reason:
            raise self.err(e, f"cannot {what} {reason}")
        e.is_lvalue = True

    def _not_lvalue(self, e: ast.Expression) -> str | None:
        if isinstance(e, ast.NameRef):
            d = e.decl
            if isinstance(d, ast.VarDecl):
                return None
            if isinstance(d, ast.Parameter):
                if d.direction in ("out", "inout"):
                    return None
                kind = f"'{d.direction}'" if d.direction else "directionless"
                return f"{kind} parameter '{d.name}'"
            if isinstance(d, ast.ConstDecl):
                return f"constant '{d.name}'"
            return f"'{e.name}' (not a variable)"
        if isinstance(e, ast.Member):
            if e.kind == "field" or (e.kind == "stack" and e.name in ("next", "last")):
                return self._not_lvalue(e.expr)
            return f"'{e.name}' (not a field)"
        if isinstance(e, (ast.ArrayIndex, ast.Slice)):
            return self._not_lvalue(e.expr)
        return "an expression that is not a variable"
