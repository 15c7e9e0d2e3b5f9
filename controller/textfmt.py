"""Plain-text tables and a progress bar: how every command shows its results."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    numeric = [all(_is_number(r[i]) for r in rows) and bool(rows) for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()

    out = [line(list(headers)), line(["-" * w for w in widths])]
    out.extend(line(row) for row in cells)
    return "\n".join(out)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    if v is None:
        return "-"
    return str(v)


def shown_path(path: Path | str) -> str:
    """A file the user may open next: relative to the current directory when it is below it
    (``out/plots/fct_cdf.png``), else absolute."""
    p = Path(path).resolve()
    try:
        return str(p.relative_to(Path(os.getcwd()).resolve()))
    except ValueError:
        return str(p)


class ProgressBar:
    """``[#####.....]  42%  note`` redrawn in place on a terminal; into a log or pipe only one line
    per quarter (0, 25, 50, 75, 100 %), so CI logs stay readable."""

    def __init__(self, label: str, stream: TextIO | None = None, width: int = 30) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.width = width
        self.tty = self.stream.isatty()
        self._last_step = -1

    def update(self, fraction: float, note: str = "") -> None:
        fraction = min(max(fraction, 0.0), 1.0)
        filled = int(fraction * self.width)
        text = f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {fraction * 100:3.0f}% {note}"
        if self.tty:
            self.stream.write("\r" + text.ljust(self.width + len(self.label) + 40))
        elif int(fraction * 4) != self._last_step:
            self._last_step = int(fraction * 4)
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self, note: str = "done") -> None:
        self.update(1.0, note)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
