"""The ``TypeMap``: the type type inference gave each expression and type reference."""

from __future__ import annotations

from collections.abc import Iterator

from p4switch.frontend import ast
from p4switch.frontend import types as T


class TypeMap:
    """Expression or type reference -> its ``types.P4Type`` (p4c's TypeMap), read from a
    program the ``type-inference`` pass has typed."""

    def __init__(self, types: dict[ast.Node, T.P4Type]) -> None:
        self._types = types

    @classmethod
    def of(cls, program: ast.Program) -> "TypeMap":
        return cls({n: n.type for n in program.walk()
                    if isinstance(n, (ast.Expression, ast.TypeRef)) and n.type is not None})

    def __getitem__(self, node: ast.Node) -> T.P4Type:
        return self._types[node]

    def __contains__(self, node: ast.Node) -> bool:
        return node in self._types

    def __len__(self) -> int:
        return len(self._types)

    def items(self) -> Iterator[tuple[ast.Node, T.P4Type]]:
        return iter(self._types.items())
