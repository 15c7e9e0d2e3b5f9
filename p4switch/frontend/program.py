"""The compiled form of a program and the two compile entry points.

``CheckedProgram`` is what every consumer (executor, P4Info generator, STF runner, switch)
receives: the annotated AST, the v1model pipeline stages of the ``main`` package instance,
the preprocessed text, and the control-plane naming rules p4c applies.
"""

from __future__ import annotations

import sys

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import CompileError
from p4switch.frontend.parser import parse_program
from p4switch.frontend.passes import TARGET_PASSES, run_front_end, run_target_passes
from p4switch.frontend.preprocess import preprocess
from p4switch.frontend.pretty import key_text
from p4switch.frontend.typecheck.checker import TypeInference

# V1Switch parameters in order, by the stage names the executor uses.
V1_STAGES = ("parser", "verify_checksum", "ingress", "egress", "compute_checksum", "deparser")


class CheckedProgram:
    def __init__(self, program: ast.Program, source_text: str, checker: TypeInference,
                 filename: str = "<prog>.p4") -> None:
        self.program = program
        self.filename = filename
        self.source_text = source_text
        self._parents = checker.parents
        self.main = checker.main
        self.warnings: list[str] = checker.warnings  # p4c-style, for the CLI to print
        if self.main is None:
            self.warnings.append(f"{filename}: warning: the program has no package instance "
                                 f"named 'main'")
        self._checker = checker
        self._pipeline: dict[str, ast.Node] | None = None

    @property
    def pipeline(self) -> dict[str, ast.Node]:
        """The V1Switch stages of ``main``. Checked on first use, as p4c's v1model back end
        does after its front end: any well-typed program compiles (p4test accepts programs
        for other architectures or without ``main``); running one needs a V1Switch."""
        if self._pipeline is None:
            self._pipeline = self._v1_pipeline(self._checker)
        return self._pipeline

    def _v1_pipeline(self, checker: TypeInference) -> dict[str, ast.Node]:
        main = self.main
        if main is None:
            raise CompileError("the program has no package instance named 'main'",
                               self.filename, 0, 0)
        t = main.type
        pkg = t.base if isinstance(t, T.SpecializedType) else t
        if not isinstance(pkg, T.PackageType) or pkg.name != "V1Switch":
            raise checker.err(main, f"'main' must be a V1Switch package, not {pkg}")
        if len(pkg.params) < len(V1_STAGES):
            raise checker.err(main, f"'main' must be v1model's V1Switch, with {len(V1_STAGES)} "
                                    f"parameters, not a package of {len(pkg.params)}")
        out: dict[str, ast.Node] = {}
        for stage, p in zip(V1_STAGES, pkg.params):
            arg = main.ctor_args[p.name]
            if isinstance(arg, ast.MethodCall):
                decl = arg.decl
            elif isinstance(arg, ast.InstanceDecl):
                decl = arg.type_ref.decl
            else:
                raise checker.err(main, f"argument '{p.name}' of V1Switch must be a parser or "
                                        f"control instance")
            out[stage] = decl
        return out

    # -- names -------------------------------------------------------------------------------
    def enclosing_block(self, decl: ast.Node) -> ast.Node | None:
        """The control or parser declaration a local declaration belongs to (None at top)."""
        return self._parents.get(decl)

    def control_plane_name(self, decl: ast.Node, prefix: str | None = None) -> str:
        """P4Info / BMv2 name: enclosing control/parser name + "." + local name, with
        ``@name`` honoured (a leading "." makes it absolute); top-level objects keep their
        own name. ``prefix`` replaces the enclosing block's name for objects of a control
        instantiated inside another one, which p4c names by instance path
        (``FabricIngress.dlb.flowlet_time`` for register ``flowlet_time`` of control ``Dlb``
        instantiated as ``dlb`` in ``FabricIngress``)."""
        local = getattr(decl, "name", "")
        ann = decl.annotation("name") if isinstance(decl, ast.Declaration) else None
        if ann is not None and ann.args and isinstance(ann.args[0], ast.StringLiteral):
            local = ann.args[0].value
            if local.startswith("."):
                return local[1:]
        block = self._parents.get(decl)
        if block is None:
            return local
        return f"{prefix if prefix is not None else block.name}.{local}"

    def inline_instance_name(self, prop: ast.TableProperty) -> str | None:
        """Name of an extern constructed in place as a table property
        (``@name("ap") implementation = action_profile(32w128);``), or None when the property
        has no ``@name``. p4c (1.2.4) names such an instance by the property's ``@name`` as
        written, not qualified by the table's control (a leading "." is dropped), and refuses
        to expose an unnamed one over P4Runtime; P4Info and the executor both ask here."""
        ann = ast.find_annotation(prop.annotations, "name")
        if ann is None or not ann.args or not isinstance(ann.args[0], ast.StringLiteral):
            return None
        return ann.args[0].value.lstrip(".")

    def key_name(self, key: ast.KeyElement) -> str:
        """Match field name of a table key element (``@name``, or p4c's name for the
        expression: ``pretty.key_text``)."""
        ann = ast.find_annotation(key.annotations, "name")
        if ann is not None and ann.args and isinstance(ann.args[0], ast.StringLiteral):
            return ann.args[0].value
        return key_text(key.expr)

    def declarations(self, cls: type) -> list:
        """Every declaration of a given AST class, top level and inside controls/parsers."""
        out = []
        for d in self.program.declarations:
            if isinstance(d, cls):
                out.append(d)
            if isinstance(d, (ast.ControlDecl, ast.ParserDecl)):
                out.extend(x for x in d.locals if isinstance(x, cls))
        return out


def compile_source(text: str, filename: str = "<prog>.p4", target: str | None = "bmv2") -> CheckedProgram:
    """Parse and check P4 text that is already preprocessed (line markers allowed).

    ``target="bmv2"`` (the default: our switch claims BMv2 parity) also refuses what p4c's
    BMv2 back end refuses in a V1Switch program (``bmv2_limits``); ``None`` checks the
    language only, as p4test does."""
    if target not in TARGET_PASSES:
        raise ValueError(f"unknown target {target!r} (known: bmv2, or None for the front end only)")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10000))  # deep expression nesting in generated code
    try:
        program, linemap = parse_program(text, filename)
        checked = CheckedProgram(program, text, run_front_end(program, linemap.sources).typer,
                                 filename)
        run_target_passes(checked, target, linemap.sources)
        return checked
    except RecursionError:
        raise CompileError("program nesting is too deep to compile (statements or expressions "
                           "nested thousands of levels)", filename, 0, 0) from None
    finally:
        sys.setrecursionlimit(limit)


def compile_file(path: str, include_dirs: list[str] | None = None,
                 defines: dict[str, str | None] | None = None, target: str | None = "bmv2") -> CheckedProgram:
    """Preprocess ``path`` with cpp (our core.p4/v1model.p4 on the include path), parse and
    check it (``target``: as for ``compile_source``)."""
    text = preprocess(path, include_dirs, defines)
    return compile_source(text, path, target)
