"""The ``type-inference`` pass: a type for every expression and declaration.

Input: the program and the ``ReferenceMap`` of ``resolve-references``. One walk over the
declarations in order, annotating the AST in place as ``ast.py`` documents: ``.type`` on
expressions, declarations and type references, ``.decl`` on names (from the reference map),
explicit ``Cast`` nodes for implicit conversions, method calls resolved with their
signatures and inferred type arguments (an overloaded call is chosen by its arguments).
Output: those annotations, read back as a ``TypeMap``. Errors: type errors, at the
offending node (the first one raises ``CompileError``).

Where a type needs a value (``bit<W + 1>``, a slice's bounds, a stack's size, the width an
integer shift amount gets), type inference asks constant folding for it on demand, as p4c's
TypeInference calls ConstantFolding on widths: after typing each expression it lets
``ConstantFolding`` fold it (``constfold.py``), which reads only the reference map and the
types already inferred. The ``constant-folding`` pass then runs over the whole typed program.
"""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError, SourceLines
from p4switch.frontend.typecheck.calls import Calls
from p4switch.frontend.typecheck.coercion import Coercion
from p4switch.frontend.typecheck.constfold import ConstantFolding
from p4switch.frontend.typecheck.declarations import Declarations
from p4switch.frontend.typecheck.expressions import Expressions
from p4switch.frontend.typecheck.instances import Instances
from p4switch.frontend.typecheck.resolve import ReferenceMap
from p4switch.frontend.typecheck.statements import Statements
from p4switch.frontend.typecheck.tables import Tables
from p4switch.frontend.typecheck.typerefs import TypeRefs


class TypeInference(TypeRefs, Declarations, Instances, Tables, Statements, Coercion,
                    Expressions, Calls):
    """What the type-inference modules share: the program, its reference map, the built-in
    error and match_kind types, and the context of the body being checked."""

    def __init__(self, program: ast.Program, refs: ReferenceMap,
                 sources: SourceLines | None = None) -> None:
        self.program = program
        self.refs = refs
        self.sources = sources
        self.folding = ConstantFolding(refs, sources)  # asked on demand, as types need values
        self.error_type = T.ErrorType()
        self.match_kind_type = T.MatchKindType()
        self.parents: dict[ast.Node, ast.Node] = {}  # local declaration -> control/parser
        self.main: ast.InstanceDecl | None = None
        self.warnings: list[str] = []  # "file:line:col: warning: message", p4c style
        # context while checking bodies
        self.return_type: T.P4Type | None = None
        # generic struct/header declarations: type class, specializations by type arguments
        self.generic_structs: dict[ast.StructLikeDecl, tuple[type, dict]] = {}
        # type parameter -> argument while the fields of a specialization are typed
        self.type_args_in_scope: dict[ast.TypeParam, T.P4Type] = {}
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

    def run(self) -> None:
        """Type every declaration in order; find the ``main`` package instance."""
        self.program.error_type = self.error_type
        self.program.match_kind_type = self.match_kind_type
        for d in self.program.declarations:
            self.check_declaration(d)
            if isinstance(d, ast.InstanceDecl) and d.name == "main":
                self.main = d
