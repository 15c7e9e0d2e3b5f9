"""The one exception the front end raises for bad P4 input.

``str(CompileError)`` is what the user sees, in the format of p4c and gcc:

    file:line:col: error: message
    <the source line>
    <caret under the column>

Callers (CLI, switch, STF runner) print it and exit non-zero; a Python traceback for a bad
program is a front-end bug.
"""

from __future__ import annotations

import os


class CompileError(Exception):
    def __init__(self, message: str, file: str = "<unknown>", line: int = 0, col: int = 0,
                 source_line: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        if source_line is None:
            source_line = _read_line(file, line)
        self.source_line = source_line

    @classmethod
    def at(cls, loc, message: str, sources: "SourceLines | None" = None) -> "CompileError":
        """Error at an ``ast.SourceLoc``; ``sources`` supplies the line text when the file
        is not on disk (``compile_source``)."""
        text = sources.line(loc.file, loc.line) if sources is not None else None
        return cls(message, loc.file, loc.line, loc.col, text)

    def __str__(self) -> str:
        head = f"{self.file}:{self.line}:{self.col}: error: {self.message}"
        if not self.source_line:
            return head
        line = self.source_line.rstrip("\n").expandtabs(1)
        caret = " " * max(self.col - 1, 0) + "^"
        return f"{head}\n{line}\n{caret}"


def _read_line(file: str, line: int) -> str | None:
    if line <= 0 or not os.path.isfile(file):
        return None
    try:
        with open(file, encoding="utf-8", errors="replace") as f:
            for i, text in enumerate(f, 1):
                if i == line:
                    return text
    except OSError:
        return None
    return None


class SourceLines:
    """Original source lines by (file, line), recovered from preprocessed text when the
    file itself cannot be read (text given to ``compile_source``)."""

    def __init__(self) -> None:
        self._lines: dict[tuple[str, int], str] = {}

    def add(self, file: str, line: int, text: str) -> None:
        self._lines.setdefault((file, line), text)

    def line(self, file: str, line: int) -> str | None:
        disk = _read_line(file, line)
        if disk is not None:
            return disk
        return self._lines.get((file, line))


def plural(count: int, word: str) -> str:
    """"1 argument", "2 arguments": counts in diagnostics."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
