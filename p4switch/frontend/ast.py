"""AST of P4-16 programs, built by the parser and annotated in place by the type checker.

Every node is a dataclass with a ``loc`` (``SourceLoc(file, line, col)``, 1-based, mapped back
through the preprocessor's line markers to the user's file). Nodes compare and hash by
identity, so they can be used as dictionary keys (e.g. declaration -> runtime object).

What the front-end passes (``passes.py``) add to nodes — consumers may rely on all of these after
``compile_file``/``compile_source`` returned:

Expressions (every ``Expression`` subclass)
    ``.type``       the semantic type (``types.P4Type``). Integer literals whose width the
                    context fixes get a ``BitsType``; unconstrained ones keep ``types.INT``.
    ``.is_const``   True for compile-time-known expressions; ``.value`` then holds the folded
                    Python value: ``int`` for bit/int/ser-enum/``int`` (already wrapped to the
                    type's width), ``bool``, ``str`` for strings, the member name (``"NoError"``,
                    ``"packets"``) for ``error`` and plain enum members, a list for constant
                    list expressions, a dict for constant untyped struct expressions.
                    A consumer may replace any node with ``is_const`` by its ``value``.
    ``.is_lvalue``  True where the expression is written (out/inout args, assignment lhs).
``NameRef.decl``    the declaration the name resolves to: a ``VarDecl``, ``ConstDecl``,
                    ``Parameter``, ``InstanceDecl``, ``TableDecl``, ``ActionDecl``,
                    ``FunctionDecl``, ``ExternFunctionDecl`` or ``ParserState`` (transition
                    targets; ``accept``/``reject`` are ``resolve.ACCEPT``/``resolve.REJECT``).
                    Enum and error members (``E.A``, ``error.NoError``) are
                    ``Member(TypeExpression(...), name)``.
``NamedTypeRef.decl`` the declaration of the type named; inside a generic struct the
                    ``TypeParam`` (its specializations bind it).
``Member.decl``     for enum members the ``EnumMember``, for error members the name; for
                    fields None. (``Member.name_loc`` is the member name's own position.)
                    ``Member.kind`` is one of "field", "enum", "error", "stack" (next, last,
                    lastIndex, size), "apply_result" (hit/miss/action_run), "method" (the
                    target of a call: isValid, extract, apply, read ...).
``MethodCall``      ``.kind``: "extern_method" (methods of v1model externs), "packet_in"
                    and "packet_out" (methods of those core externs), "extern_function",
                    "verify" (core.p4's verify), "action", "function", "table_apply",
                    "control_apply", "parser_apply" (``inst.apply(...)`` of a sub-block or
                    direct ``T.apply(...)``), "header_method" (isValid/setValid/setInvalid,
                    and minSizeInBits & co. folded to constants), "union_method" (isValid),
                    "stack_method" (push_front/pop_front), "constructor" (``MyIngress()``,
                    ``action_selector(...)``; ``.ctor_args`` by parameter name).
                    ``.decl``: the called declaration (``MethodDecl``,
                    ``ExternFunctionDecl``, ``ActionDecl``, ``FunctionDecl``, ``TableDecl``,
                    ``InstanceDecl`` of a sub-control/parser, the type declaration for
                    constructors) or None for built-in methods. ``.target.type`` (for
                    ``Member`` targets) is the resolved signature. ``.method_name``: the name
                    called. ``.signature``: the ``types.FunctionType`` after substituting
                    type arguments (inferred or explicit), ``.type_args``: the resolved type
                    arguments by type-variable name. ``.args`` is reordered by the checker to
                    follow the parameter order; omitted optional/default parameters are
                    filled in, so ``args[i]`` matches ``signature.params[i]``.
``Cast``            implicit conversions are materialised as ``Cast`` nodes with
                    ``implicit=True`` and ``type_ref=None`` (e.g. ``x + 1`` with ``x: bit<8>``
                    keeps ``1`` as ``IntLiteral`` typed ``bit<8>``; ``bit<8> y = E.A`` with a
                    ser enum becomes ``Cast``).
Type references     ``TypeRef.type`` is the resolved semantic type.
Declarations        ``.type`` on ``ConstDecl``, ``VarDecl``, ``Parameter``, ``InstanceDecl``,
                    ``TableDecl`` (``TableType``), ``ActionDecl`` (``ActionType``),
                    struct/header/enum/typedef/extern/parser/control/package declarations.
                    ``ConstDecl.value`` is the folded constant value.
``InstanceDecl``    ``.ctor_args`` maps constructor parameter names to folded values (or to the
                    ``InstanceDecl``/``MethodCall`` for parser/control arguments);
                    ``.type`` is the instantiated (specialized) type.
``TableDecl``       ``.key``, ``.actions``, ``.default_action``, ``.entries`` are parsed
                    into dedicated fields, other properties (size, implementation, counters,
                    meters, support_timeout, custom) are ``.prop(name)``; ``ActionRef.decl``
                    is the ``ActionDecl``; ``KeyElement.match_kind`` is the kind name;
                    ``TableEntry`` keysets are typed against the key fields and
                    ``.priority_value`` holds the folded ``priority =``/``@priority`` value,
                    ``.match_priority`` the effective one as p4c/BMv2 order them (larger wins).
``SwitchCase``      for ``switch (t.apply().action_run)`` labels ``.action`` is the ``ActionDecl``.
``Program``         ``.error_type`` (``types.ErrorType``), ``.match_kind_type``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NOWHERE = SourceLoc("<builtin>", 0, 0)


def _ann(default: Any = None) -> Any:
    """A checker annotation: keyword-only, not part of repr/compare."""
    return field(default=default, kw_only=True, repr=False, compare=False)


@dataclass(eq=False)
class Node:
    loc: SourceLoc = field(default=NOWHERE, kw_only=True, repr=False, compare=False)

    def children(self) -> Iterator["Node"]:
        """Direct child nodes, in source order (used by generic walkers)."""
        for f in self.__dataclass_fields__.values():
            if f.kw_only:
                continue
            v = getattr(self, f.name)
            if isinstance(v, Node):
                yield v
            elif isinstance(v, list):
                for x in v:
                    if isinstance(x, Node):
                        yield x

    def walk(self) -> Iterator["Node"]:
        """This node and all its descendants, pre-order (iterative: deep expression trees
        do not hit Python's recursion limit)."""
        stack: list[Node] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(list(node.children())))


@dataclass(eq=False)
class Annotation(Node):
    """``@name``, ``@name(args)``. ``args`` are parsed expressions when the body parses as an
    expression list, else empty with the raw token text in ``raw``."""

    name: str
    args: list["Expression"] = field(default_factory=list)
    raw: str = ""


def find_annotation(annotations: list[Annotation], name: str) -> Annotation | None:
    for a in annotations:
        if a.name == name:
            return a
    return None


# ---------------------------------------------------------------------------------------------
# Type references (syntax)


@dataclass(eq=False)
class TypeRef(Node):
    type: Any = _ann()  # types.P4Type after checking


@dataclass(eq=False)
class BaseTypeRef(TypeRef):
    """``bool``, ``error``, ``string``, ``void``, ``match_kind``, ``int`` (width None),
    ``bit<W>``/``int<W>``/``varbit<W>`` (kind "bit", "int", "varbit" with width), plain
    ``bit`` (width 1)."""

    kind: str
    width: "Expression | None" = None


@dataclass(eq=False)
class NamedTypeRef(TypeRef):
    """A declared type name, optionally specialized: ``headers``, ``register<bit<32>>``.
    A leading dot (``.T``) looks the name up at top level only."""

    name: str
    type_args: list[TypeRef] = field(default_factory=list)
    top_level: bool = False
    decl: Any = _ann()


@dataclass(eq=False)
class StackTypeRef(TypeRef):
    elem: TypeRef
    size: "Expression"


@dataclass(eq=False)
class TupleTypeRef(TypeRef):
    elems: list[TypeRef] = field(default_factory=list)


@dataclass(eq=False)
class ListTypeRef(TypeRef):
    """``list<T>`` (P4-16 1.2.4): compile-time lists, e.g. extern constructor arguments."""

    elem: TypeRef = None  # type: ignore[assignment]


@dataclass(eq=False)
class DontCareTypeRef(TypeRef):
    """``_`` as a type argument: infer it."""


# ---------------------------------------------------------------------------------------------
# Expressions


@dataclass(eq=False)
class Expression(Node):
    type: Any = _ann()
    value: Any = _ann()
    is_const: bool = _ann(False)
    is_lvalue: bool = _ann(False)


@dataclass(eq=False)
class IntLiteral(Expression):
    """``value`` is the literal's numeric value; ``width``/``signed`` are set for ``8w5`` and
    ``8s-1`` forms (None width = arbitrary-precision ``int``). ``text`` is the source spelling."""

    value: int = 0  # type: ignore[assignment]
    width: int | None = None
    signed: bool = False
    text: str = ""


@dataclass(eq=False)
class BoolLiteral(Expression):
    value: bool = False  # type: ignore[assignment]


@dataclass(eq=False)
class StringLiteral(Expression):
    value: str = ""  # type: ignore[assignment]


@dataclass(eq=False)
class NameRef(Expression):
    """An identifier in expression position. ``top_level`` for ``.name``."""

    name: str = ""
    top_level: bool = False
    decl: Any = _ann()


@dataclass(eq=False)
class Member(Expression):
    """``expr.name`` (field access, enum member, ``error.X``, stack ``.next`` ...)."""

    expr: Expression = None  # type: ignore[assignment]
    name: str = ""
    decl: Any = _ann()
    kind: str = _ann("")
    name_loc: SourceLoc | None = _ann()  # where the member name itself is (for messages)


@dataclass(eq=False)
class ArrayIndex(Expression):
    """``stack[i]``."""

    expr: Expression = None  # type: ignore[assignment]
    index: Expression = None  # type: ignore[assignment]


@dataclass(eq=False)
class Slice(Expression):
    """``expr[hi:lo]``; ``.hi_value``/``.lo_value`` are set to the folded bounds."""

    expr: Expression = None  # type: ignore[assignment]
    hi: Expression = None  # type: ignore[assignment]
    lo: Expression = None  # type: ignore[assignment]
    hi_value: int = _ann(0)
    lo_value: int = _ann(0)


@dataclass(eq=False)
class Unary(Expression):
    """``op`` in ``!``, ``~``, ``-`` (negation), ``+``."""

    op: str = ""
    expr: Expression = None  # type: ignore[assignment]


@dataclass(eq=False)
class Binary(Expression):
    """``op`` is the P4 spelling: ``* / % + - |+| |-| << >> <= >= < > != == & ^ | && || ++``.
    (``&&&`` and ``..`` are ``Mask``/``Range``.)"""

    op: str = ""
    left: Expression = None  # type: ignore[assignment]
    right: Expression = None  # type: ignore[assignment]


@dataclass(eq=False)
class Ternary(Expression):
    cond: Expression = None  # type: ignore[assignment]
    then: Expression = None  # type: ignore[assignment]
    else_: Expression = None  # type: ignore[assignment]


@dataclass(eq=False)
class Cast(Expression):
    """``(T) expr``; ``implicit`` for conversions the checker inserted (``type_ref`` None)."""

    type_ref: TypeRef | None = None
    expr: Expression = None  # type: ignore[assignment]
    implicit: bool = False


@dataclass(eq=False)
class Argument(Node):
    """A call argument, optionally named (``f(x = 1)``). ``value`` is ``DontCare`` for ``_``."""

    value: Expression
    name: str | None = None


@dataclass(eq=False)
class MethodCall(Expression):
    """``target<type_args>(args)``: every call, including constructor-style instantiation
    arguments like ``MyIngress()`` and ``action_selector(...)``."""

    target: Expression = None  # type: ignore[assignment]
    type_arg_refs: list[TypeRef] = field(default_factory=list)
    args: list[Argument] = field(default_factory=list)
    kind: str = _ann("")
    decl: Any = _ann()
    method_name: str = _ann("")
    signature: Any = _ann()
    type_args: dict = _ann()
    ctor_args: dict = _ann()  # kind "constructor": arguments by constructor parameter name


@dataclass(eq=False)
class ListExpression(Expression):
    """``{a, b, c}`` (tuple / list / struct-by-position initializer, typed by context)."""

    items: list[Expression] = field(default_factory=list)


@dataclass(eq=False)
class NamedExpression(Node):
    name: str
    value: Expression


@dataclass(eq=False)
class StructExpression(Expression):
    """``{a = 1, b = 2}`` or ``(T){...}``-less typed form ``T {a = 1}`` (``type_ref``)."""

    fields: list[NamedExpression] = field(default_factory=list)
    type_ref: TypeRef | None = None
    has_dots: bool = False  # "{a = 1, ...}": the checker adds the other fields with defaults


@dataclass(eq=False)
class InvalidHeader(Expression):
    """``{#}``: an invalid header / header union, typed by context."""


@dataclass(eq=False)
class DontCare(Expression):
    """``_`` as an argument or select keyset element."""


@dataclass(eq=False)
class DefaultExpr(Expression):
    """``default`` in a select keyset or in a table entry key."""


@dataclass(eq=False)
class Dots(Expression):
    """``...`` at the end of a list or struct initializer: the remaining fields take their
    default values. The checker replaces it by explicit default values (0, false, ``{#}``),
    so checked programs contain no ``Dots``."""


@dataclass(eq=False)
class Mask(Expression):
    """``value &&& mask`` in a keyset or entry."""

    value_expr: Expression = None  # type: ignore[assignment]
    mask: Expression = None  # type: ignore[assignment]


@dataclass(eq=False)
class Range(Expression):
    """``lo .. hi`` in a keyset or entry."""

    low: Expression = None  # type: ignore[assignment]
    high: Expression = None  # type: ignore[assignment]


@dataclass(eq=False)
class TypeExpression(Expression):
    """A type used where an expression is expected (``bit<8>`` in ``lookahead``-free
    contexts such as ``T.minSizeInBits()``)."""

    type_ref: TypeRef = None  # type: ignore[assignment]


# ---------------------------------------------------------------------------------------------
# Statements


@dataclass(eq=False)
class Statement(Node):
    pass


@dataclass(eq=False)
class BlockStatement(Statement):
    statements: list[Node] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False)
class AssignmentStatement(Statement):
    """``lhs = rhs``; ``lhs op= x`` is ``lhs = lhs op x`` with ``compound`` set (``rhs.left``
    is a copy of ``lhs``, which is evaluated once)."""

    lhs: Expression
    rhs: Expression
    compound: bool = False


@dataclass(eq=False)
class MethodCallStatement(Statement):
    call: MethodCall


@dataclass(eq=False)
class IfStatement(Statement):
    cond: Expression
    then: Statement
    else_: Statement | None = None


@dataclass(eq=False)
class SwitchCase(Node):
    """``label: body``; ``label`` is ``DefaultExpr`` for ``default``; ``body`` None is a
    fall-through label (shares the next case's body)."""

    label: Expression
    body: BlockStatement | None = None
    action: Any = _ann()


@dataclass(eq=False)
class SwitchStatement(Statement):
    expr: Expression
    cases: list[SwitchCase] = field(default_factory=list)


@dataclass(eq=False)
class ReturnStatement(Statement):
    value: Expression | None = None


@dataclass(eq=False)
class ExitStatement(Statement):
    pass


@dataclass(eq=False)
class EmptyStatement(Statement):
    pass


@dataclass(eq=False)
class ForStatement(Statement):
    """``for (init; cond; updates) body``; ``init`` holds VarDecls, assignments and calls,
    ``cond`` None loops until ``break``."""

    init: list[Node] = field(default_factory=list)
    cond: Expression | None = None
    updates: list[Statement] = field(default_factory=list)
    body: Statement = None  # type: ignore[assignment]
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False)
class ForInStatement(Statement):
    """``for (T v in lo .. hi) body`` (``hi`` is included) or ``for (T v in list) body``;
    ``hi`` is None for the list form, where ``lo`` is the collection."""

    var: "VarDecl" = None  # type: ignore[assignment]
    lo: Expression = None  # type: ignore[assignment]
    hi: Expression | None = None
    body: Statement = None  # type: ignore[assignment]
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False)
class BreakStatement(Statement):
    pass


@dataclass(eq=False)
class ContinueStatement(Statement):
    pass


# ---------------------------------------------------------------------------------------------
# Declarations


@dataclass(eq=False)
class Declaration(Node):
    name: str
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)
    type: Any = _ann()

    def annotation(self, name: str) -> Annotation | None:
        return find_annotation(self.annotations, name)


@dataclass(eq=False)
class TypeParam(Declaration):
    """A type variable declared in ``<T, U>``; ``.type`` is its ``types.TypeVar``."""


@dataclass(eq=False)
class Parameter(Declaration):
    direction: str | None
    type_ref: TypeRef
    default: Expression | None = None


@dataclass(eq=False)
class ConstDecl(Declaration):
    type_ref: TypeRef
    init: Expression
    value: Any = _ann()


@dataclass(eq=False)
class VarDecl(Declaration):
    type_ref: TypeRef
    init: Expression | None = None


@dataclass(eq=False)
class StructField(Node):
    name: str
    type_ref: TypeRef
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False)
class StructLikeDecl(Declaration):
    fields: list[StructField] = field(default_factory=list)
    type_params: list[TypeParam] = field(default_factory=list)


@dataclass(eq=False)
class HeaderDecl(StructLikeDecl):
    pass


@dataclass(eq=False)
class StructDecl(StructLikeDecl):
    pass


@dataclass(eq=False)
class HeaderUnionDecl(StructLikeDecl):
    pass


@dataclass(eq=False)
class EnumMember(Node):
    name: str
    init: Expression | None = None
    value: Any = _ann()  # folded value for serializable enums


@dataclass(eq=False)
class EnumDecl(Declaration):
    """``enum E {...}``, or serializable ``enum bit<8> E {A = 1}`` when ``underlying`` is set."""

    members: list[EnumMember] = field(default_factory=list)
    underlying: TypeRef | None = None


@dataclass(eq=False)
class ErrorDecl(Declaration):
    """``error { A, B }`` (name is "error"; repeated declarations extend the one type)."""

    members: list[str] = field(default_factory=list)


@dataclass(eq=False)
class MatchKindDecl(Declaration):
    members: list[str] = field(default_factory=list)


@dataclass(eq=False)
class TypedefDecl(Declaration):
    """``typedef T N;`` (alias) or, with ``new_type``, ``type T N;``."""

    type_ref: TypeRef
    new_type: bool = False


@dataclass(eq=False)
class MethodDecl(Declaration):
    """A method or constructor (``return_type`` None) inside an extern declaration."""

    return_type: TypeRef | None
    type_params: list[TypeParam] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    is_abstract: bool = False

    @property
    def is_constructor(self) -> bool:
        return self.return_type is None


@dataclass(eq=False)
class ExternDecl(Declaration):
    type_params: list[TypeParam] = field(default_factory=list)
    methods: list[MethodDecl] = field(default_factory=list)


@dataclass(eq=False)
class ExternFunctionDecl(Declaration):
    return_type: TypeRef
    type_params: list[TypeParam] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)


@dataclass(eq=False)
class FunctionDecl(Declaration):
    return_type: TypeRef
    type_params: list[TypeParam] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    body: BlockStatement = None  # type: ignore[assignment]


@dataclass(eq=False)
class ActionDecl(Declaration):
    params: list[Parameter] = field(default_factory=list)
    body: BlockStatement = None  # type: ignore[assignment]


@dataclass(eq=False)
class SelectCase(Node):
    """``keyset: state``; ``keyset`` is one expression or a ``ListExpression`` for tuples."""

    keyset: Expression
    state: NameRef


@dataclass(eq=False)
class SelectExpression(Expression):
    exprs: list[Expression] = field(default_factory=list)
    cases: list[SelectCase] = field(default_factory=list)


@dataclass(eq=False)
class TransitionStatement(Statement):
    """``transition s;`` (``target`` a NameRef) or ``transition select(...) {...}``."""

    target: Expression  # NameRef or SelectExpression


@dataclass(eq=False)
class ParserState(Declaration):
    """A parser state; ``transition`` None (no transition statement) means ``reject``,
    as the specification defines."""

    statements: list[Node] = field(default_factory=list)
    transition: TransitionStatement | None = None


@dataclass(eq=False)
class ValueSetDecl(Declaration):
    """``value_set<T>(size) name;`` (parser value sets)."""

    elem_type: TypeRef
    size: Expression


@dataclass(eq=False)
class ParserTypeDecl(Declaration):
    """``parser P<...>(...);`` without body: an architecture parser type."""

    type_params: list[TypeParam] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)


@dataclass(eq=False)
class ParserDecl(Declaration):
    type_params: list[TypeParam] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    ctor_params: list[Parameter] = field(default_factory=list)
    locals: list[Node] = field(default_factory=list)
    states: list[ParserState] = field(default_factory=list)


@dataclass(eq=False)
class ControlTypeDecl(Declaration):
    type_params: list[TypeParam] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)


@dataclass(eq=False)
class ControlDecl(Declaration):
    type_params: list[TypeParam] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    ctor_params: list[Parameter] = field(default_factory=list)
    locals: list[Node] = field(default_factory=list)
    body: BlockStatement = None  # type: ignore[assignment]


@dataclass(eq=False)
class PackageTypeDecl(Declaration):
    type_params: list[TypeParam] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)


@dataclass(eq=False)
class InstanceDecl(Declaration):
    """``T<args>(ctor args) name;`` — extern, parser, control or package instance
    (``V1Switch(...) main``)."""

    type_ref: TypeRef
    args: list[Argument] = field(default_factory=list)
    initializer: list[Node] = field(default_factory=list)  # abstract method implementations
    ctor_args: dict = _ann()


# --- tables -------------------------------------------------------------------------------


@dataclass(eq=False)
class KeyElement(Node):
    expr: Expression
    match_kind: str
    annotations: list[Annotation] = field(default_factory=list)
    match_kind_loc: SourceLoc | None = _ann()


@dataclass(eq=False)
class ActionRef(Node):
    """An action in a table's ``actions`` list or ``default_action``/entry: name with
    (possibly partial) arguments."""

    name: NameRef
    args: list[Argument] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    decl: Any = _ann()


@dataclass(eq=False)
class TableEntry(Node):
    """A ``const entries``/``entries`` element: ``keys`` has one expression per key field
    (``DontCare`` for ``_``/``default``, ``Mask``, ``Range`` or plain values)."""

    keys: list[Expression]
    action: ActionRef
    priority: Expression | None = None
    annotations: list[Annotation] = field(default_factory=list)
    is_const: bool = False
    priority_value: int | None = _ann()
    match_priority: int | None = _ann()  # effective priority, larger wins (tables needing one)


@dataclass(eq=False)
class TableProperty(Node):
    """A table property other than key/actions/default_action/entries (size,
    implementation, counters, meters, support_timeout, custom ones)."""

    name: str
    value: Expression
    is_const: bool = False
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False)
class TableDecl(Declaration):
    key: list[KeyElement] = field(default_factory=list)
    actions: list[ActionRef] = field(default_factory=list)
    default_action: ActionRef | None = None
    default_action_const: bool = False
    entries: list[TableEntry] = field(default_factory=list)
    entries_const: bool = False
    properties: list[TableProperty] = field(default_factory=list)
    has_key_property: bool = False
    has_actions_property: bool = False  # `actions = { }` is allowed, a table without it is not

    def prop(self, name: str) -> TableProperty | None:
        for p in self.properties:
            if p.name == name:
                return p
        return None


@dataclass(eq=False)
class Program(Node):
    declarations: list[Node] = field(default_factory=list)
    error_type: Any = _ann()
    match_kind_type: Any = _ann()
