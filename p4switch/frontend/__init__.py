"""P4-16 front end of the p4switch software target.

    from p4switch.frontend import compile_file, compile_source, CompileError
    checked = compile_file("prog.p4", include_dirs=[...], defines={...})
    checked.program        # ast.Program, annotated by the type checker (see ast.py)
    checked.pipeline       # {"parser": ParserDecl, "verify_checksum": ControlDecl, ...}
    checked.source_text    # preprocessed text with line markers (for device configs)
    checked.control_plane_name(decl)
    checked.warnings       # "file:line:col: warning: ..." (e.g. a constant truncated)

Bad programs raise ``CompileError`` (``str(e)`` is ``file:line:col: error: message`` with
the source line and a caret).
"""

from __future__ import annotations

from p4switch.frontend.errors import CompileError
from p4switch.frontend.program import CheckedProgram, compile_file, compile_source

__all__ = ["CheckedProgram", "CompileError", "compile_file", "compile_source"]
