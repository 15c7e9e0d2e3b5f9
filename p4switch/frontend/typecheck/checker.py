"""The ``typecheck`` pass: name resolution, type inference and constant folding.

One walk over the declarations in order (P4 requires declaration before use), annotating
the AST in place as ``ast.py`` documents: ``.type`` on expressions and declarations,
``.decl`` on names, folded ``.value``/``.is_const``, explicit ``Cast`` nodes for implicit
conversions, resolved method calls with their signatures and inferred type arguments.
Resolution, inference and folding share the walk because each needs the others' results
where it stands: a width ``bit<W + 1>`` needs ``W`` resolved and folded, an overloaded call
is resolved by its arguments' types. Each concern is its own module; ``Checker`` holds the
state they share. The first error found raises ``CompileError`` at the offending node.
"""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError, SourceLines
from p4switch.frontend.typecheck.calls import Calls
from p4switch.frontend.typecheck.coercion import Coercion
from p4switch.frontend.typecheck.declarations import Declarations
from p4switch.frontend.typecheck.expressions import Expressions
from p4switch.frontend.typecheck.instances import Instances
from p4switch.frontend.typecheck.scopes import NameResolution, Scope
from p4switch.frontend.typecheck.statements import Statements
from p4switch.frontend.typecheck.tables import Tables
from p4switch.frontend.typecheck.typerefs import TypeRefs


class Checker(NameResolution, TypeRefs, Declarations, Instances, Tables, Statements, Coercion,
              Expressions, Calls):
    """What the type-check modules share: the program, its top-level scope, the built-in
    error and match_kind types, and the context of the body being checked."""

    def __init__(self, program: ast.Program, sources: SourceLines | None = None) -> None:
        self.program = program
        self.sources = sources
        self.error_type = T.ErrorType()
        self.match_kind_type = T.MatchKindType()
        self.top = Scope()
        self.parents: dict[ast.Node, ast.Node] = {}  # local declaration -> control/parser
        self.main: ast.InstanceDecl | None = None
        self.warnings: list[str] = []  # "file:line:col: warning: message", p4c style
        # context while checking bodies
        self.return_type: T.P4Type | None = None
        # generic struct/header declarations: declaring scope, type class, specializations
        self.generic_structs: dict[ast.StructLikeDecl, tuple[Scope, type, dict]] = {}
        self.in_parser = False
        self.loop_depth = 0  # enclosing for loops: break/continue are allowed inside one
        self.in_action: ast.ActionDecl | None = None
        self.in_function: ast.FunctionDecl | None = None
        self.switch_subject: ast.Expression | None = None

    def err(self, node: ast.Node | ast.SourceLoc, msg: str) -> CompileError:
        loc = node if isinstance(node, ast.SourceLoc) else node.loc
        return CompileError.at(loc, msg, self.sources)

    def warn(self, node: ast.Node, msg: str) -> None:
        self.warnings.append(f"{node.loc}: warning: {msg}")

    def check(self) -> None:
        """Check every declaration in order; find the ``main`` package instance."""
        self.program.error_type = self.error_type
        self.program.match_kind_type = self.match_kind_type
        for d in self.program.declarations:
            self.check_declaration(d, self.top)
        mains = self.top.names.get("main")
        if mains and isinstance(mains[0], ast.InstanceDecl):
            self.main = mains[0]
