"""P4-16 types as the type checker computes them.

These are *semantic* types, distinct from the syntactic type references in ``ast.py``
(``ast.BitTypeRef`` etc.): the checker resolves every type reference to one of the classes
here and stores it on the node as ``.type``. Everything downstream (executor, P4Info
generator) reads only these classes, so they are kept stable; changes are additive.

Equality rules, following the language spec:
- Structural types compare by value: ``BitsType(8, False) == BitsType(8, False)``; the same for
  ``VarbitType``, ``TupleType``, ``StackType`` and the singletons (``BOOL``, ``INT``, ...).
- Named (nominal) types compare by identity: two struct declarations with the same fields are
  different types. ``StructType``, ``HeaderType``, ``HeaderUnionType``, ``EnumType``,
  ``SerEnumType``, ``NewType``, ``ParserType``, ``ControlType``, ``PackageType`` and
  ``TypeVar`` are one object per declaration.
- ``ExternType`` compares by declaration plus type arguments, so ``register<bit<32>>`` used
  twice is one type.

``typedef`` declarations are aliases and vanish during checking: a field declared with a
typedef'd name carries the target type. ``type`` declarations (``type bit<9> PortId_t;``)
create a ``NewType``, a distinct type that casts to and from its underlying type.

Where the checker puts these types: ``node.type`` on every expression, on declarations
(``ConstDecl``, ``VarDecl``, ``Parameter``, ``InstanceDecl`` -> specialized ``ExternType`` or
``SpecializedType`` for the package, ``TableDecl`` -> ``TableType``, ``ActionDecl`` ->
``ActionType``, type declarations -> the type they define) and on every ``TypeRef``;
``MethodCall.signature`` is a ``FunctionType`` with type variables already substituted.
The full list of node annotations is in ``ast.py``'s docstring.

Values of these types, as folded constants and as the executor represents them: ``bit<W>``
and serializable enums are non-negative ints, ``int<W>`` signed ints (``BitsType.fit``),
``bool`` Python bools, ``error`` and plain enums the member name (``ErrorType.code`` gives
BMv2's numeric error code).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - imports only for annotations
    from p4switch.frontend import ast


class P4Type:
    """Base class of every semantic type."""

    def is_fixed_width(self) -> bool:
        """True for ``bit<W>``/``int<W>`` (and types that behave like them: ser enums, new types)."""
        return False

    def bit_width(self) -> int:
        """Serialized width in bits (headers, structs of bits, ``bit``/``int``, bool = 1)."""
        raise TypeError(f"type {self} has no fixed bit width")


# ---------------------------------------------------------------------------------------------
# Base types


@dataclass(frozen=True)
class BitsType(P4Type):
    """``bit<W>`` (unsigned) or ``int<W>`` (signed, two's complement). Arithmetic wraps."""

    width: int
    signed: bool = False

    def is_fixed_width(self) -> bool:
        return True

    def bit_width(self) -> int:
        return self.width

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def fit(self, value: int) -> int:
        """Wrap an arbitrary Python int into this type's value range."""
        value &= self.mask
        if self.signed and self.width and value >> (self.width - 1):
            value -= 1 << self.width
        return value

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"


@dataclass(frozen=True)
class VarbitType(P4Type):
    """``varbit<W>``: a field of 0..W bits whose length is set by ``extract``."""

    max_width: int

    def bit_width(self) -> int:
        return self.max_width

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True)
class BoolType(P4Type):
    def bit_width(self) -> int:
        return 1

    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class IntType(P4Type):
    """The arbitrary-precision ``int`` of untyped integer literals and compile-time constants."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class StringType(P4Type):
    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True)
class VoidType(P4Type):
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True)
class DontCareType(P4Type):
    """Type of ``_`` as an argument or in a select keyset; matches anything."""

    def __str__(self) -> str:
        return "_"


BOOL = BoolType()
INT = IntType()
STRING = StringType()
VOID = VoidType()
DONT_CARE = DontCareType()


@dataclass(eq=False)
class ErrorType(P4Type):
    """The single ``error`` type; ``members`` accumulates every ``error { ... }`` declaration
    in declaration order. A member's numeric code is its index (NoError = 0), which is what
    BMv2 uses for ``standard_metadata.parser_error``."""

    members: list[str] = field(default_factory=list)

    def code(self, name: str) -> int:
        return self.members.index(name)

    def __str__(self) -> str:
        return "error"


@dataclass(eq=False)
class MatchKindType(P4Type):
    """The single ``match_kind`` type; members from every ``match_kind { ... }`` declaration."""

    members: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return "match_kind"


# ---------------------------------------------------------------------------------------------
# Named aggregate types


@dataclass(eq=False)
class Field:
    """One field of a struct, header or header union, in declaration order."""

    name: str
    type: P4Type
    annotations: list["ast.Annotation"] = field(default_factory=list)


@dataclass(eq=False)
class StructLikeType(P4Type):
    """Common part of structs, headers and header unions: a name and ordered fields."""

    name: str
    fields: list[Field] = field(default_factory=list)
    decl: "ast.Node | None" = None

    def field_type(self, name: str) -> P4Type | None:
        for f in self.fields:
            if f.name == name:
                return f.type
        return None

    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def bit_width(self) -> int:
        return sum(f.type.bit_width() for f in self.fields)

    def __str__(self) -> str:
        if self.name is None:  # the type of a `{ f = v, ... }` expression not yet typed
            return "{ " + "; ".join(f"{f.type} {f.name}" for f in self.fields) + " }"
        return self.name


@dataclass(eq=False)
class StructType(StructLikeType):
    """``struct``. ``name`` is None for the anonymous type of an untyped ``{a = 1}`` literal."""


@dataclass(eq=False)
class HeaderType(StructLikeType):
    """``header``: fields are ``bit``/``int``/``varbit``/ser-enum/bool; has a validity bit."""

    def has_varbit(self) -> bool:
        return any(isinstance(f.type, VarbitType) for f in self.fields)


@dataclass(eq=False)
class HeaderUnionType(StructLikeType):
    """``header_union``: at most one member header is valid at a time."""


@dataclass(frozen=True)
class StackType(P4Type):
    """Header stack ``H[size]``."""

    elem: P4Type
    size: int

    def bit_width(self) -> int:
        return self.elem.bit_width() * self.size

    def __str__(self) -> str:
        return f"{self.elem}[{self.size}]"


@dataclass(frozen=True)
class TupleType(P4Type):
    """``tuple<...>``; also the type of list expressions ``{a, b}``."""

    elems: tuple[P4Type, ...]

    def bit_width(self) -> int:
        return sum(t.bit_width() for t in self.elems)

    def __str__(self) -> str:
        return "tuple<" + ", ".join(str(t) for t in self.elems) + ">"


@dataclass(frozen=True)
class ListType(P4Type):
    """``list<T>``: a compile-time list of any length (no run-time representation)."""

    elem: P4Type

    def bit_width(self) -> int:
        raise TypeError("list<> values have no bit width")

    def __str__(self) -> str:
        return f"list<{self.elem}>"


@dataclass(eq=False)
class EnumType(P4Type):
    """Plain ``enum E { A, B }``: no numeric representation visible to the program."""

    name: str
    members: list[str] = field(default_factory=list)
    decl: "ast.Node | None" = None

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class SerEnumType(P4Type):
    """Serializable ``enum bit<W> E { A = 1, ... }``: members map to values of ``underlying``."""

    name: str
    underlying: BitsType
    members: dict[str, int] = field(default_factory=dict)
    decl: "ast.Node | None" = None

    def is_fixed_width(self) -> bool:
        return True

    def bit_width(self) -> int:
        return self.underlying.width

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class NewType(P4Type):
    """``type T1 T2;``: a distinct type with the representation of ``underlying``.
    (``typedef`` is an alias and never produces a type object of its own.)"""

    name: str
    underlying: P4Type
    decl: "ast.Node | None" = None

    def is_fixed_width(self) -> bool:
        return self.underlying.is_fixed_width()

    def bit_width(self) -> int:
        return self.underlying.bit_width()

    def __str__(self) -> str:
        return self.name


# The brief's name for ``type`` declarations; other modules may import either name.
TypedefType = NewType


# ---------------------------------------------------------------------------------------------
# Generic machinery


@dataclass(eq=False)
class TypeVar(P4Type):
    """A type parameter (``T`` in ``extern register<T>``). One object per declaration site."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class Param:
    """A parameter of a method, function, action, parser, control or package."""

    name: str
    direction: str | None  # "in", "out", "inout" or None (directionless)
    type: P4Type
    default: Any = None  # folded default value, or None
    has_default: bool = False
    optional: bool = False  # declared with @optional
    decl: "ast.Node | None" = None

    def __str__(self) -> str:
        d = f"{self.direction} " if self.direction else ""
        return f"{d}{self.type} {self.name}"


@dataclass(eq=False)
class FunctionType(P4Type):
    """Signature of an extern function, extern method, P4 function or constructor."""

    name: str
    type_params: list[TypeVar] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    return_type: P4Type = VOID
    decl: "ast.Node | None" = None

    def __str__(self) -> str:
        tp = "<" + ", ".join(t.name for t in self.type_params) + ">" if self.type_params else ""
        return f"{self.return_type} {self.name}{tp}(" + ", ".join(str(p) for p in self.params) + ")"


@dataclass(eq=False)
class ExternDeclType(P4Type):
    """What an ``extern X<T...> { ... }`` declaration defines (before specialization):
    its constructors and methods (methods may be overloaded by arity)."""

    name: str
    type_params: list[TypeVar] = field(default_factory=list)
    constructors: list[FunctionType] = field(default_factory=list)
    methods: dict[str, list[FunctionType]] = field(default_factory=dict)
    decl: "ast.Node | None" = None

    def __str__(self) -> str:
        return self.name


class ExternType(P4Type):
    """An extern type, possibly specialized: ``register<bit<32>>`` is
    ``ExternType(register_decl, (BitsType(32),))``. ``bindings`` maps the declaration's
    type variables to the arguments. Equality is by declaration and arguments."""

    def __init__(self, extern: ExternDeclType, type_args: tuple[P4Type, ...] = ()) -> None:
        self.extern = extern
        self.type_args = tuple(type_args)

    @property
    def name(self) -> str:
        return self.extern.name

    @property
    def bindings(self) -> dict[TypeVar, P4Type]:
        return dict(zip(self.extern.type_params, self.type_args))

    @property
    def methods(self) -> dict[str, list[FunctionType]]:
        return self.extern.methods

    @property
    def decl(self) -> "ast.Node | None":
        return self.extern.decl

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ExternType) and other.extern is self.extern
                and other.type_args == self.type_args)

    def __hash__(self) -> int:
        return hash((id(self.extern), self.type_args))

    def __str__(self) -> str:
        if self.type_args:
            return f"{self.name}<" + ", ".join(str(t) for t in self.type_args) + ">"
        return self.name

    __repr__ = __str__


@dataclass(eq=False)
class ActionType(P4Type):
    """An action: parameters with direction are data-plane ones; directionless ones are
    supplied by the control plane (table entries)."""

    name: str
    params: list[Param] = field(default_factory=list)
    decl: "ast.Node | None" = None

    def control_plane_params(self) -> list[Param]:
        return [p for p in self.params if p.direction is None]

    def __str__(self) -> str:
        return f"action {self.name}"


@dataclass(eq=False)
class ActionEnumType(P4Type):
    """Type of ``t.apply().action_run``: one member per action of table ``t``."""

    table: "ast.Node"
    actions: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return "action_list"


@dataclass(eq=False)
class TableApplyResultType(P4Type):
    """Result of ``t.apply()``: fields ``hit``, ``miss`` (bool) and ``action_run``."""

    table: "ast.Node"
    action_enum: ActionEnumType

    def field_type(self, name: str) -> P4Type | None:
        if name in ("hit", "miss"):
            return BOOL
        if name == "action_run":
            return self.action_enum
        return None

    def __str__(self) -> str:
        return "apply_result"


@dataclass(eq=False)
class TableType(P4Type):
    """A table declaration; its only method is ``apply()``."""

    name: str
    decl: "ast.Node"
    result: TableApplyResultType | None = None

    def __str__(self) -> str:
        return f"table {self.name}"


@dataclass(eq=False)
class BlockType(P4Type):
    """Common part of parser, control and package types (declared or implemented)."""

    name: str
    type_params: list[TypeVar] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)  # apply parameters
    ctor_params: list[Param] = field(default_factory=list)  # constructor parameters
    decl: "ast.Node | None" = None
    annotations: list["ast.Annotation"] = field(default_factory=list)

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class ParserType(BlockType):
    """``parser P<...>(...)``: a declaration without body is an architecture type."""


@dataclass(eq=False)
class ControlType(BlockType):
    """``control C<...>(...)``."""


@dataclass(eq=False)
class PackageType(BlockType):
    """``package V1Switch<H, M>(Parser<H, M> p, ...)``: ``params`` are the constructor params."""


@dataclass(eq=False)
class SpecializedType(P4Type):
    """A generic parser/control/package type with arguments, e.g. ``Parser<H, M>`` in a
    package's parameter list, or ``V1Switch<headers, metadata>``."""

    base: BlockType
    type_args: tuple[P4Type, ...]

    def __str__(self) -> str:
        return f"{self.base.name}<" + ", ".join(str(t) for t in self.type_args) + ">"


@dataclass(eq=False)
class StateType(P4Type):
    """A parser state name (``accept``, ``reject`` or a user state) used as transition target."""

    def __str__(self) -> str:
        return "state"


STATE = StateType()


@dataclass(frozen=True)
class SetType(P4Type):
    """Type of a select keyset element (``v &&& m``, ``lo .. hi``) over ``elem``."""

    elem: P4Type

    def __str__(self) -> str:
        return f"set<{self.elem}>"


# ---------------------------------------------------------------------------------------------
# Helpers used by the checker and by consumers


def substitute(t: P4Type, env: dict[TypeVar, P4Type]) -> P4Type:
    """Replace type variables in ``t`` by their bindings in ``env`` (unbound ones stay)."""
    if not env:
        return t
    if isinstance(t, TypeVar):
        return env.get(t, t)
    if isinstance(t, TupleType):
        return TupleType(tuple(substitute(e, env) for e in t.elems))
    if isinstance(t, StackType):
        return StackType(substitute(t.elem, env), t.size)
    if isinstance(t, ExternType):
        return ExternType(t.extern, tuple(substitute(a, env) for a in t.type_args))
    if isinstance(t, SpecializedType):
        return SpecializedType(t.base, tuple(substitute(a, env) for a in t.type_args))
    if isinstance(t, FunctionType):
        return FunctionType(t.name, [tv for tv in t.type_params if tv not in env],
                            [Param(p.name, p.direction, substitute(p.type, env), p.default,
                                   p.has_default, p.optional, p.decl) for p in t.params],
                            substitute(t.return_type, env), t.decl)
    return t


def underlying(t: P4Type) -> P4Type:
    """The representation type: strips ``type`` new types and ser-enums down to bits."""
    while True:
        if isinstance(t, NewType):
            t = t.underlying
        elif isinstance(t, SerEnumType):
            t = t.underlying
        else:
            return t
