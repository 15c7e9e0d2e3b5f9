"""Parse preprocessed P4-16 text into the AST of ``ast.py``.

``parse_program(text, filename)`` maps cpp line markers back to original files, runs the
lexer pass of ``lexer.py`` (which asks the parser's ``TypeNames`` scope stack which
identifiers are types), feeds the tokens to the LALR(1) parser built from ``p4.lark``
and converts lark's parse tree to AST nodes. Syntax errors become ``CompileError`` at the
offending token.
"""

from __future__ import annotations

import copy
import functools
import os
import threading

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from p4switch.frontend import ast
from p4switch.frontend.errors import CompileError
from p4switch.frontend.lexer import LineMap, TokenStream, collapse_annotations, map_lines, mark_types
from p4switch.frontend.typenames import TypeNames

_GRAMMAR = os.path.join(os.path.dirname(__file__), "p4.lark")


class _KeepAt:
    """lark post-lexer that only asks lark to keep the AT terminal (folded by lexer.py)."""

    always_accept = ("AT",)

    def process(self, stream):
        return stream


_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    with open(_GRAMMAR, encoding="utf-8") as f:
        grammar = f.read()
    # cache=True: lark keeps the LALR tables in the temp directory, keyed by a hash of the
    # grammar and options, which saves ~0.4 s at every process start (switch, CLI, tests)
    return Lark(grammar, parser="lalr", lexer="basic", start=["start", "annotation_args"],
                maybe_placeholders=True, propagate_positions=True, postlex=_KeepAt(),
                cache=True)


def _parser() -> Lark:
    with _lock:
        return _lark()


class Name(str):
    """An identifier with its source location."""

    loc: ast.SourceLoc

    def __new__(cls, value: str, loc: ast.SourceLoc) -> "Name":
        obj = super().__new__(cls, value)
        obj.loc = loc
        return obj


_SKIP = object()  # marker for punctuation-like children (langle, TYPE_ARGS_OPEN)

_BINARY = {
    "lor": "||", "land": "&&", "eq": "==", "ne": "!=", "lt": "<", "gt": ">", "le": "<=",
    "ge": ">=", "bor": "|", "bxor": "^", "band": "&", "shl": "<<", "shr": ">>", "concat": "++",
    "add": "+", "sub": "-", "sat_add": "|+|", "sat_sub": "|-|", "mul": "*", "div": "/", "mod": "%",
}
_UNARY = {"lnot": "!", "bnot": "~", "neg": "-", "pos": "+"}


def parse_int_literal(text: str) -> tuple[int, int | None, bool]:
    """``8w5`` -> (5, 8, False); ``8s-1`` -> (-1, 8, True); ``0x_ff`` -> (255, None, False)."""
    width: int | None = None
    signed = False
    body = text
    for sep in ("w", "s"):
        idx = body.find(sep)
        if idx > 0 and body[:idx].isdigit() and not body.lower().startswith(("0x", "0b", "0o", "0d")):
            width = int(body[:idx])
            signed = sep == "s"
            body = body[idx + 1:]
            break
    negative = body.startswith("-")
    if negative:
        body = body[1:]
    body = body.replace("_", "")
    low = body.lower()
    if low.startswith("0x"):
        value = int(body[2:], 16)
    elif low.startswith("0b"):
        value = int(body[2:], 2)
    elif low.startswith("0o"):
        value = int(body[2:], 8)
    elif low.startswith("0d"):
        value = int(body[2:], 10)
    else:
        value = int(body, 10)
    return (-value if negative else value), width, signed


def _flatten(items) -> list:
    out = []
    for x in items:
        if isinstance(x, list):
            out.extend(x)
        elif x is not None and x is not _SKIP:
            out.append(x)
    return out


def _clean(children) -> list:
    return [c for c in children if c is not _SKIP and not
            (isinstance(c, Token) and c.type == "TYPE_ARGS_OPEN")]


@v_args(meta=True)
class _ToAst(Transformer):
    def __init__(self, linemap: LineMap, stream: TokenStream) -> None:
        super().__init__(visit_tokens=False)
        self.linemap = linemap
        self.stream = stream

    # -- locations ------------------------------------------------------------------------
    def loc_of(self, line: int, col: int) -> ast.SourceLoc:
        file, orig = self.linemap.origin(line)
        return ast.SourceLoc(file, orig, col)

    def L(self, meta) -> ast.SourceLoc:
        if getattr(meta, "empty", True):
            return ast.NOWHERE
        return self.loc_of(meta.line, meta.column)

    def T(self, tok: Token) -> ast.SourceLoc:
        return self.loc_of(tok.line, tok.column)

    def name_of(self, x) -> Name:
        if isinstance(x, Name):
            return x
        if isinstance(x, Token):
            return Name(str(x), self.T(x))
        raise TypeError(x)

    # -- program ---------------------------------------------------------------------------
    def start(self, meta, ch):
        return ch[0]

    def p4program(self, meta, ch):
        return ast.Program(_flatten(ch), loc=self.L(meta))

    def annotation_args(self, meta, ch):
        return _flatten(ch)

    # -- names -----------------------------------------------------------------------------
    def non_type_name(self, meta, ch):
        return self.name_of(ch[0])

    def name(self, meta, ch):
        return self.name_of(ch[0])

    non_table_kw_name = name

    def member(self, meta, ch):
        return ch[0]

    def dot_prefix(self, meta, ch):
        return "."

    def prefixed_non_type_name(self, meta, ch):
        top = len(ch) == 2
        n = ch[-1]
        return ast.NameRef(name=str(n), top_level=top, loc=self.L(meta) if top else n.loc)

    def prefixed_type(self, meta, ch):
        return (self.name_of(ch[-1]), len(ch) == 2)

    # -- annotations -----------------------------------------------------------------------
    def annotations(self, meta, ch):
        return [self._annotation(t) for t in ch]

    def _annotation(self, tok: Token) -> ast.Annotation:
        body = self.stream.annotations[tok.start_pos]
        loc = self.T(tok)
        args: list[ast.Expression] = []
        if body.has_body and body.tokens and body.raw[len(body.name) + 1:].lstrip().startswith("("):
            try:
                ip = _parser().parse_interactive(start="annotation_args")
                for t in mark_types(body.tokens, ()):
                    ip.feed_token(t)
                tree = ip.feed_eof()
                args = _ToAst(self.linemap, self.stream).transform(tree)
            except (UnexpectedInput, VisitError):
                args = []  # unstructured annotation body: keep the raw text only
        raw = ""
        if body.has_body:
            inner = body.raw[len(body.name) + 1:].strip()
            raw = inner if body.name == "pragma" else inner[1:-1]
        return ast.Annotation(body.name, args, raw, loc=loc)

    def _anns(self, x) -> list[ast.Annotation]:
        return x if isinstance(x, list) else []

    # -- parameters ------------------------------------------------------------------------
    def parameter_list(self, meta, ch):
        return _flatten(ch)

    def parameter(self, meta, ch):
        anns, direction, type_ref, name, default = ch
        return ast.Parameter(str(name), direction, type_ref, default, annotations=self._anns(anns),
                             loc=name.loc)

    def direction(self, meta, ch):
        return str(ch[0]) if ch and ch[0] is not None else None

    def opt_constructor_parameters(self, meta, ch):
        return None if not ch or ch[0] is None else ch[0]

    # -- type references -------------------------------------------------------------------
    def langle(self, meta, ch):
        return _SKIP

    def type_name(self, meta, ch):
        name, top = ch[0]
        return ast.NamedTypeRef(name=str(name), top_level=top, loc=name.loc)

    def specialized_type(self, meta, ch):
        ch = _clean(ch)
        base = ch[0]
        base.type_args = _flatten(ch[1:])
        return base

    def list_type(self, meta, ch):
        elems = _flatten(_clean(ch[1:]))
        return ast.ListTypeRef(elem=elems[0], loc=self.L(meta))

    def tuple_type(self, meta, ch):
        return ast.TupleTypeRef(_flatten(_clean(ch)), loc=self.L(meta))

    def header_stack_type(self, meta, ch):
        return ast.StackTypeRef(ch[0], ch[1], loc=ch[0].loc)

    def _base(self, kind, meta, ch=None):
        width = None
        if ch:
            rest = [c for c in _clean(ch)[1:]]
            if rest:
                w = rest[0]
                if isinstance(w, Token):
                    value, _, _ = parse_int_literal(str(w))
                    w = ast.IntLiteral(value, text=str(w), loc=self.T(w))
                width = w
        return ast.BaseTypeRef(kind=kind, width=width, loc=self.L(meta))

    def bool_type(self, meta, ch):
        return self._base("bool", meta)

    def match_kind_type(self, meta, ch):
        return self._base("match_kind", meta)

    def error_type(self, meta, ch):
        return self._base("error", meta)

    def bit1_type(self, meta, ch):
        return ast.BaseTypeRef(kind="bit", width=ast.IntLiteral(1, text="1", loc=self.L(meta)),
                               loc=self.L(meta))

    def string_type(self, meta, ch):
        return self._base("string", meta)

    def int_type(self, meta, ch):
        return self._base("int", meta)

    def bit_type(self, meta, ch):
        return self._base("bit", meta, ch)

    def signed_type(self, meta, ch):
        return self._base("int", meta, ch)

    def varbit_type(self, meta, ch):
        return self._base("varbit", meta, ch)

    def void_type(self, meta, ch):
        return self._base("void", meta)

    def dont_care_type(self, meta, ch):
        return ast.DontCareTypeRef(loc=self.L(meta))

    def type_or_void(self, meta, ch):
        return ch[0]

    def type_var_ref(self, meta, ch):
        n = self.name_of(ch[0])
        return ast.NamedTypeRef(name=str(n), loc=n.loc)

    def type_var_arg(self, meta, ch):
        n = ch[0]
        return ast.NamedTypeRef(name=str(n), loc=n.loc)

    def real_type_arg(self, meta, ch):
        return ch[0]

    type_arg = real_type_arg

    def real_type_argument_list(self, meta, ch):
        return _flatten(ch)

    type_argument_list = real_type_argument_list

    def opt_type_parameters(self, meta, ch):
        return _flatten(_clean(ch))

    def type_parameter_list(self, meta, ch):
        out = []
        for c in ch:
            if isinstance(c, list):
                out.extend(c)
            else:
                out.append(ast.TypeParam(str(c), loc=c.loc))
        return out

    # -- declarations ----------------------------------------------------------------------
    def constant_declaration(self, meta, ch):
        anns, _const, type_ref, name, init = ch
        return ast.ConstDecl(str(name), type_ref, init, annotations=self._anns(anns), loc=name.loc)

    def variable_declaration(self, meta, ch):
        anns, type_ref, name, init = ch
        return ast.VarDecl(str(name), type_ref, init, annotations=self._anns(anns), loc=name.loc)

    def _struct_like(self, cls, meta, ch):
        anns, name, tparams, *fields = ch
        return cls(str(name), fields=fields, type_params=tparams or [],
                   annotations=self._anns(anns), loc=name.loc)

    def header_type_declaration(self, meta, ch):
        return self._struct_like(ast.HeaderDecl, meta, ch)

    def struct_type_declaration(self, meta, ch):
        return self._struct_like(ast.StructDecl, meta, ch)

    def header_union_declaration(self, meta, ch):
        return self._struct_like(ast.HeaderUnionDecl, meta, ch)

    def struct_field(self, meta, ch):
        anns, type_ref, name = ch
        return ast.StructField(str(name), type_ref, self._anns(anns), loc=name.loc)

    def identifier_list(self, meta, ch):
        return _flatten(ch)

    specified_identifier_list = identifier_list

    def specified_identifier(self, meta, ch):
        return ast.EnumMember(str(ch[0]), ch[1], loc=ch[0].loc)

    def enum_declaration(self, meta, ch):
        anns, name, members = ch
        return ast.EnumDecl(str(name), [ast.EnumMember(str(m), loc=m.loc) for m in members],
                            annotations=self._anns(anns), loc=name.loc)

    def ser_enum_declaration(self, meta, ch):
        anns, type_ref, name, members = ch
        return ast.EnumDecl(str(name), members, type_ref, annotations=self._anns(anns),
                            loc=name.loc)

    def error_declaration(self, meta, ch):
        return ast.ErrorDecl("error", [str(m) for m in ch[1]], loc=self.L(meta))

    def match_kind_declaration(self, meta, ch):
        return ast.MatchKindDecl("match_kind", [str(m) for m in ch[1]], loc=self.L(meta))

    def typedef_declaration(self, meta, ch):
        anns, type_ref, name = ch
        return ast.TypedefDecl(str(name), type_ref, False, annotations=self._anns(anns),
                               loc=name.loc)

    def typedef_derived(self, meta, ch):
        """``typedef struct S { ... } T;`` declares S and the alias T."""
        anns, derived, name = ch
        ref = ast.NamedTypeRef(name=derived.name, loc=derived.loc)
        return [derived, ast.TypedefDecl(str(name), ref, False, annotations=self._anns(anns),
                                         loc=name.loc)]

    def newtype_declaration(self, meta, ch):
        anns, _type, type_ref, name = ch
        return ast.TypedefDecl(str(name), type_ref, True, annotations=self._anns(anns),
                               loc=name.loc)

    def package_type_declaration(self, meta, ch):
        anns, name, tparams, params = ch
        return ast.PackageTypeDecl(str(name), tparams or [], params, annotations=self._anns(anns),
                                   loc=name.loc)

    def instantiation(self, meta, ch):
        anns, type_ref, args, name = ch
        return ast.InstanceDecl(str(name), type_ref, args, annotations=self._anns(anns),
                                loc=name.loc)

    def instantiation_init(self, meta, ch):
        *rest, init = ch
        inst = self.instantiation(meta, rest)
        inst.initializer = init
        return inst

    def object_initializer(self, meta, ch):
        return list(ch)

    # -- externs ---------------------------------------------------------------------------
    def function_prototype(self, meta, ch):
        ret, name, tparams, params = ch
        return (ret, self.name_of(name), tparams or [], params)

    def extern_object(self, meta, ch):
        anns, name, tparams, *methods = ch
        name = self.name_of(name)
        return ast.ExternDecl(str(name), tparams or [], methods, annotations=self._anns(anns),
                              loc=name.loc)

    def extern_function(self, meta, ch):
        anns, (ret, name, tparams, params) = ch
        return ast.ExternFunctionDecl(str(name), ret, tparams, params,
                                      annotations=self._anns(anns), loc=name.loc)

    def extern_forward(self, meta, ch):
        anns, name = ch
        return ast.ExternDecl(str(name), [], [], annotations=self._anns(anns), loc=name.loc)

    def method(self, meta, ch):
        anns, (ret, name, tparams, params) = ch
        return ast.MethodDecl(str(name), ret, tparams, params, annotations=self._anns(anns),
                              loc=name.loc)

    def abstract_method(self, meta, ch):
        m = self.method(meta, ch)
        m.is_abstract = True
        return m

    def constructor(self, meta, ch):
        anns, name, params = ch
        name = self.name_of(name)
        return ast.MethodDecl(str(name), None, [], params, annotations=self._anns(anns),
                              loc=name.loc)

    # -- parsers ---------------------------------------------------------------------------
    def parser_type_declaration(self, meta, ch):
        anns, name, tparams, params = ch
        return ast.ParserTypeDecl(str(name), tparams or [], params, annotations=self._anns(anns),
                                  loc=name.loc)

    def parser_declaration(self, meta, ch):
        head, ctor, *rest = ch
        states = [x for x in rest if isinstance(x, ast.ParserState)]
        local = [x for x in rest if not isinstance(x, ast.ParserState)]
        return ast.ParserDecl(head.name, head.type_params, head.params, ctor or [], local, states,
                              annotations=head.annotations, loc=head.loc)

    def parser_state(self, meta, ch):
        anns, _state, name, *body = ch
        transition = None
        if body and isinstance(body[-1], ast.TransitionStatement):
            transition = body.pop()
        return ast.ParserState(str(name), body, transition, annotations=self._anns(anns),
                               loc=name.loc)

    def parser_block_statement(self, meta, ch):
        anns, *stmts = ch
        return ast.BlockStatement(stmts, self._anns(anns), loc=self.L(meta))

    def transition_statement(self, meta, ch):
        return ast.TransitionStatement(ch[0], loc=self.L(meta))

    def state_name(self, meta, ch):
        n = ch[0]
        return ast.NameRef(name=str(n), loc=n.loc)

    def select_expression(self, meta, ch):
        exprs, *cases = ch
        return ast.SelectExpression(exprs=exprs, cases=cases, loc=self.L(meta))

    def select_case(self, meta, ch):
        keyset, name = ch
        return ast.SelectCase(keyset, ast.NameRef(name=str(name), loc=name.loc), loc=keyset.loc)

    def tuple_keyset_expression(self, meta, ch):
        return ast.ListExpression(items=list(ch), loc=self.L(meta))

    def mask(self, meta, ch):
        return ast.Mask(value_expr=ch[0], mask=ch[1], loc=self.L(meta))

    def range(self, meta, ch):
        return ast.Range(low=ch[0], high=ch[1], loc=self.L(meta))

    def default_expr(self, meta, ch):
        return ast.DefaultExpr(loc=self.L(meta))

    def dont_care(self, meta, ch):
        return ast.DontCare(loc=self.L(meta))

    def value_set_declaration(self, meta, ch):
        anns, elem, size, name = _clean(ch)
        return ast.ValueSetDecl(str(name), elem, size, annotations=self._anns(anns), loc=name.loc)

    # -- controls --------------------------------------------------------------------------
    def control_type_declaration(self, meta, ch):
        anns, name, tparams, params = ch
        return ast.ControlTypeDecl(str(name), tparams or [], params, annotations=self._anns(anns),
                                   loc=name.loc)

    def control_declaration(self, meta, ch):
        head, ctor, *rest = ch
        body = rest[-1]
        local = [x for x in rest[:-1] if not (isinstance(x, Token) and x.type == "APPLY")]
        return ast.ControlDecl(head.name, head.type_params, head.params, ctor or [], local, body,
                               annotations=head.annotations, loc=head.loc)

    def action_declaration(self, meta, ch):
        anns, name, params, body = ch
        return ast.ActionDecl(str(name), params, body, annotations=self._anns(anns), loc=name.loc)

    def function_declaration(self, meta, ch):
        anns, (ret, name, tparams, params), body = ch
        return ast.FunctionDecl(str(name), ret, tparams, params, body,
                                annotations=self._anns(anns), loc=name.loc)

    # -- tables ----------------------------------------------------------------------------
    def table_declaration(self, meta, ch):
        anns, name, *props = ch
        t = ast.TableDecl(str(name), annotations=self._anns(anns), loc=name.loc)
        for kind, p in props:
            if kind == "key":
                t.key = p
                t.has_key_property = True
            elif kind == "actions":
                t.actions = p
                t.has_actions_property = True
            elif kind == "entries":
                t.entries, t.entries_const = p
            elif p.name == "default_action":
                t.default_action = self._action_ref_of(p.value)
                t.default_action_const = p.is_const
            else:
                t.properties.append(p)
        return t

    def _action_ref_of(self, e: ast.Expression) -> ast.ActionRef:
        if isinstance(e, ast.MethodCall) and isinstance(e.target, ast.NameRef):
            return ast.ActionRef(e.target, e.args, loc=e.loc)
        if isinstance(e, ast.NameRef):
            return ast.ActionRef(e, [], loc=e.loc)
        raise CompileError.at(e.loc, "default_action must be an action call")

    def key_property(self, meta, ch):
        return ("key", [c for c in ch[1:]])

    def actions_property(self, meta, ch):
        return ("actions", [c for c in ch[1:]])

    def entries_property(self, meta, ch):
        anns, *rest = ch
        is_const = False
        entries = []
        for c in rest:
            if isinstance(c, Token):
                if c.type == "CONST":
                    is_const = True
                continue
            if c is not None:
                entries.append(c)
        for e in entries:
            e.is_const = e.is_const or is_const
        return ("entries", (entries, is_const))

    def simple_property(self, meta, ch):
        anns, *rest = ch
        is_const = any(isinstance(c, Token) and c.type == "CONST" for c in rest)
        rest = [c for c in rest if not (isinstance(c, Token) and c.type == "CONST") and c is not None]
        name, value = rest
        return ("prop", ast.TableProperty(str(name), value, is_const, self._anns(anns),
                                          loc=name.loc))

    def key_element(self, meta, ch):
        expr, kind, anns = ch
        return ast.KeyElement(expr, str(kind), self._anns(anns), loc=expr.loc,
                              match_kind_loc=kind.loc)

    def action_list_element(self, meta, ch):
        anns, ref = ch
        ref.annotations = self._anns(anns)
        return ref

    def action_ref(self, meta, ch):
        name = ch[0]
        args = ch[1] if len(ch) > 1 and ch[1] is not None else []
        return ast.ActionRef(name, args, loc=name.loc)

    def entry(self, meta, ch):
        is_const = False
        priority = None
        rest = []
        for c in ch:
            if isinstance(c, Token) and c.type == "CONST":
                is_const = True
            elif isinstance(c, tuple) and c and c[0] == "priority":
                priority = c[1]
            elif c is not None or rest:
                rest.append(c)
        keyset, action, anns = rest[0], rest[1], rest[2] if len(rest) > 2 else None
        keys = keyset.items if isinstance(keyset, ast.ListExpression) else [keyset]
        return ast.TableEntry(keys, action, priority, self._anns(anns), is_const, loc=keyset.loc)

    def entry_priority(self, meta, ch):
        v = ch[1]
        if isinstance(v, Token):
            value, _, _ = parse_int_literal(str(v))
            v = ast.IntLiteral(value, text=str(v), loc=self.T(v))
        return ("priority", v)

    # -- statements ------------------------------------------------------------------------
    def block_statement(self, meta, ch):
        anns, *stmts = ch
        return ast.BlockStatement(stmts, self._anns(anns), loc=self.L(meta))

    def call_statement(self, meta, ch):
        target, args = ch
        call = ast.MethodCall(target=target, args=args, loc=target.loc)
        return ast.MethodCallStatement(call, loc=target.loc)

    def generic_call_statement(self, meta, ch):
        target, targs, args = _clean(ch)
        call = ast.MethodCall(target=target, type_arg_refs=targs, args=args, loc=target.loc)
        return ast.MethodCallStatement(call, loc=target.loc)

    def assignment(self, meta, ch):
        lhs, rhs = ch
        return ast.AssignmentStatement(lhs, rhs, loc=lhs.loc)

    def compound_assignment(self, meta, ch):
        lhs, op, rhs = ch
        value = ast.Binary(op=str(op)[:-1], left=copy.deepcopy(lhs), right=rhs, loc=lhs.loc)
        return ast.AssignmentStatement(lhs, value, compound=True, loc=lhs.loc)

    def empty_statement(self, meta, ch):
        return ast.EmptyStatement(loc=self.L(meta))

    def exit_statement(self, meta, ch):
        return ast.ExitStatement(loc=self.L(meta))

    def return_statement(self, meta, ch):
        return ast.ReturnStatement(ch[0] if ch else None, loc=self.L(meta))

    def conditional_statement(self, meta, ch):
        cond, then, *els = ch
        return ast.IfStatement(cond, then, els[0] if els else None, loc=self.L(meta))

    def direct_application(self, meta, ch):
        type_ref, _apply, args = ch
        target = ast.Member(expr=ast.TypeExpression(type_ref=type_ref, loc=type_ref.loc),
                            name="apply", loc=type_ref.loc)
        call = ast.MethodCall(target=target, args=args, loc=type_ref.loc)
        return ast.MethodCallStatement(call, loc=type_ref.loc)

    def for_statement(self, meta, ch):
        anns, init, cond, updates, body = ch
        return ast.ForStatement(init, cond, updates, body, self._anns(anns), loc=self.L(meta))

    def for_in_statement(self, meta, ch):
        anns, type_ref, name, _in, coll, body = ch
        var = ast.VarDecl(str(name), type_ref, None, loc=name.loc)
        lo, hi = coll if isinstance(coll, tuple) else (coll, None)
        return ast.ForInStatement(var, lo, hi, body, self._anns(anns), loc=self.L(meta))

    def for_range(self, meta, ch):
        return (ch[0], ch[1])

    def for_init(self, meta, ch):
        return [c for c in ch if c is not None]

    for_updates = for_init

    def for_var_declaration(self, meta, ch):
        type_ref, name, init = ch
        return ast.VarDecl(str(name), type_ref, init, loc=name.loc)

    def for_call(self, meta, ch):
        return self.call_statement(meta, ch)

    def for_assignment(self, meta, ch):
        return self.assignment(meta, ch)

    def break_statement(self, meta, ch):
        return ast.BreakStatement(loc=self.L(meta))

    def continue_statement(self, meta, ch):
        return ast.ContinueStatement(loc=self.L(meta))

    def switch_statement(self, meta, ch):
        expr, *cases = ch
        return ast.SwitchStatement(expr, cases, loc=self.L(meta))

    def switch_case(self, meta, ch):
        return ast.SwitchCase(ch[0], ch[1], loc=ch[0].loc)

    def switch_fallthrough(self, meta, ch):
        return ast.SwitchCase(ch[0], None, loc=ch[0].loc)

    # -- lvalues ---------------------------------------------------------------------------
    def lv_name(self, meta, ch):
        return ch[0]

    def lv_member(self, meta, ch):
        return ast.Member(expr=ch[0], name=str(ch[1]), loc=ch[0].loc, name_loc=ch[1].loc)

    def lv_index(self, meta, ch):
        return ast.ArrayIndex(expr=ch[0], index=ch[1], loc=ch[0].loc)

    def lv_slice(self, meta, ch):
        return ast.Slice(expr=ch[0], hi=ch[1], lo=ch[2], loc=ch[0].loc)

    def lvalue(self, meta, ch):
        return ch[0]

    # -- arguments -------------------------------------------------------------------------
    def argument_list(self, meta, ch):
        return _flatten(ch)

    def positional_argument(self, meta, ch):
        return ast.Argument(ch[0], loc=ch[0].loc)

    def named_argument(self, meta, ch):
        return ast.Argument(ch[1], str(ch[0]), loc=ch[0].loc)

    def dont_care_argument(self, meta, ch):
        return ast.Argument(ast.DontCare(loc=self.L(meta)), loc=self.L(meta))

    def named_dont_care_argument(self, meta, ch):
        return ast.Argument(ast.DontCare(loc=self.T(ch[1])), str(ch[0]), loc=ch[0].loc)

    def kv_pair(self, meta, ch):
        return ast.NamedExpression(str(ch[0]), ch[1], loc=ch[0].loc)

    def kv_list(self, meta, ch):
        return _flatten(ch)

    def expression_list(self, meta, ch):
        return _flatten(ch)

    def expression_items(self, meta, ch):
        return _flatten(ch)

    # -- expressions -----------------------------------------------------------------------
    def ternary(self, meta, ch):
        return ast.Ternary(cond=ch[0], then=ch[1], else_=ch[2], loc=self.L(meta))

    def cast(self, meta, ch):
        return ast.Cast(type_ref=ch[0], expr=ch[1], loc=self.L(meta))

    def index(self, meta, ch):
        return ast.ArrayIndex(expr=ch[0], index=ch[1], loc=ch[0].loc)

    def slice(self, meta, ch):
        return ast.Slice(expr=ch[0], hi=ch[1], lo=ch[2], loc=ch[0].loc)

    def member_access(self, meta, ch):
        return ast.Member(expr=ch[0], name=str(ch[1]), loc=ch[0].loc, name_loc=ch[1].loc)

    def call(self, meta, ch):
        return ast.MethodCall(target=ch[0], args=ch[1], loc=ch[0].loc)

    def generic_call(self, meta, ch):
        target, targs, args = _clean(ch)
        return ast.MethodCall(target=target, type_arg_refs=targs, args=args, loc=target.loc)

    def constructor_call(self, meta, ch):
        type_ref, args = ch
        return ast.MethodCall(target=ast.TypeExpression(type_ref=type_ref, loc=type_ref.loc),
                              args=args, loc=type_ref.loc)

    def int_literal(self, meta, ch):
        text = str(ch[0])
        value, width, signed = parse_int_literal(text)
        return ast.IntLiteral(value, width, signed, text, loc=self.T(ch[0]))

    def string_literal(self, meta, ch):
        raw = str(ch[0])[1:-1]
        text = raw.encode("utf-8").decode("unicode_escape") if "\\" in raw else raw
        return ast.StringLiteral(text, loc=self.T(ch[0]))

    def true_literal(self, meta, ch):
        return ast.BoolLiteral(True, loc=self.T(ch[0]))

    def false_literal(self, meta, ch):
        return ast.BoolLiteral(False, loc=self.T(ch[0]))

    def name_ref(self, meta, ch):
        return ch[0]

    def list_expression(self, meta, ch):
        return ast.ListExpression(items=_flatten(ch), loc=self.L(meta))

    def struct_expression(self, meta, ch):
        fields = _flatten(ch)
        dots = bool(fields) and isinstance(fields[-1], ast.Dots)
        if dots:
            fields.pop()
        return ast.StructExpression(fields=fields, has_dots=dots, loc=self.L(meta))

    def invalid_header(self, meta, ch):
        return ast.InvalidHeader(loc=self.L(meta))

    def type_member(self, meta, ch):
        type_ref, name = ch
        return ast.Member(expr=ast.TypeExpression(type_ref=type_ref, loc=type_ref.loc),
                          name=str(name), loc=type_ref.loc, name_loc=name.loc)

    def error_member(self, meta, ch):
        tok, name = ch
        t = ast.BaseTypeRef(kind="error", loc=self.T(tok))
        return ast.Member(expr=ast.TypeExpression(type_ref=t, loc=t.loc), name=str(name),
                          loc=t.loc, name_loc=name.loc)

    def dots(self, meta, ch):
        return ast.Dots(loc=self.L(meta))

    def __default__(self, data, children, meta):
        if data in _BINARY:
            left, right = [c for c in children if not isinstance(c, Token)]
            return ast.Binary(op=_BINARY[data], left=left, right=right, loc=left.loc)
        if data in _UNARY:
            return ast.Unary(op=_UNARY[data], expr=children[0], loc=self.L(meta))
        raise AssertionError(f"no AST conversion for grammar rule {data}")


def parse_program(text: str, filename: str) -> tuple[ast.Program, LineMap]:
    """Parse preprocessed text (with or without cpp line markers)."""
    linemap = map_lines(text, filename)
    lark = _parser()

    def err_at(line: int, col: int, msg: str) -> CompileError:
        file, orig = linemap.origin(line)
        return CompileError(msg, file, orig, col, linemap.sources.line(file, orig))

    try:
        raw_tokens = list(lark.lex(linemap.clean_text))
    except UnexpectedCharacters as e:
        ch = linemap.clean_text[e.pos_in_stream] if e.pos_in_stream < len(linemap.clean_text) else "?"
        raise err_at(e.line, e.column, f"syntax error, unexpected character '{ch}'") from None
    stream = collapse_annotations(raw_tokens, linemap.clean_text)
    ip = lark.parse_interactive(start="start")
    type_names = TypeNames()  # the parser's scope stack, which the lexer asks
    type_names.attach(ip)
    tok = None
    try:
        for tok in mark_types(stream.tokens, type_names):
            ip.feed_token(tok)
            type_names.shifted(tok)
        tree = ip.feed_eof(tok)
    except UnexpectedToken as e:
        t = e.token
        if t.type == "$END":
            line = tok.end_line if tok is not None else 1
            col = tok.end_column if tok is not None else 1
            raise err_at(line, col, "syntax error, unexpected end of file") from None
        if t.type == "IDENTIFIER" and "TYPE_IDENTIFIER" in e.expected and not (
                e.expected & {"IDENTIFIER", "APPLY", "KEY", "STATE", "TYPE"}):
            raise err_at(t.line, t.column, f"'{t.value}' is not a declared type") from None
        raise err_at(t.line, t.column, f"syntax error, unexpected {_describe(t)}"
                                       f"{_expected(lark, e.expected)}") from None
    try:
        program = _ToAst(linemap, stream).transform(tree)
    except VisitError as e:
        if isinstance(e.orig_exc, CompileError):
            raise e.orig_exc from None
        raise
    return program, linemap


def _expected(lark: Lark, expected: set[str]) -> str:
    """"; expected ';'" when only a few tokens could come next."""
    if not expected or len(expected) > 3:
        return ""
    shown = []
    for name in sorted(expected):
        try:
            pattern = lark.get_terminal(name).pattern
        except KeyError:
            return ""
        if pattern.type != "str":
            return ""
        shown.append(f"'{pattern.value}'")
    return "; expected " + " or ".join(shown)


def _describe(tok: Token) -> str:
    if tok.type in ("IDENTIFIER", "TYPE_IDENTIFIER"):
        return f"identifier '{tok.value}'"
    if tok.type == "INTEGER":
        return f"integer '{tok.value}'"
    if tok.type == "STRING_LITERAL":
        return f"string {tok.value}"
    if tok.type == "ANNOTATION":
        return f"annotation '{tok.value}'"
    return f"'{tok.value}'"
