"""The report every experiment writes: a table of its points, PNG plots, one line per claim.

``Tabular`` gives an experiment ``report()`` from three things it declares: the columns of
its table, its claim checks and its plots. Plots use matplotlib's Agg backend (no display).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from controller.textfmt import table
from experiments.base import ClaimCheck, PointResult
from experiments.sim import EXTENSIONS_NOTE


def claim_line(c: ClaimCheck) -> str:
    verdict = "HOLDS" if c.holds else "DOES NOT HOLD"
    return f"[{verdict}] {c.claim.statement} ({c.claim.source}). Measured: {c.measured}"


def mean_by(results: list[PointResult], key: Callable[[PointResult], Any], metric: str) -> dict[Any, float]:
    """Mean of ``metric`` over the successful points sharing ``key`` (seeds averaged)."""
    acc: dict[Any, list[float]] = defaultdict(list)
    for r in results:
        v = r.metrics.get(metric) if r.ok else None
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v):
            acc[key(r)].append(float(v))
    return {k: sum(v) / len(v) for k, v in acc.items()}


def fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


class Tabular:
    """Mixin: ``report`` from ``columns`` (metric names), ``check`` and ``plots``."""

    name: str
    title: str
    columns: Sequence[str] = ()

    def check(self, results: list[PointResult]) -> list[ClaimCheck]:  # pragma: no cover - overridden
        raise NotImplementedError

    def plots(self, results: list[PointResult], out: Path) -> list[Path]:
        return []

    def table(self, results: list[PointResult]) -> str:
        params = sorted({k for r in results for k in r.point.params})
        rows = []
        for r in results:
            cells = [fmt(r.point.params.get(k, "")) for k in params] + [r.point.seed]
            if r.ok:
                cells += [fmt(r.metrics.get(c, "")) for c in self.columns]
            else:
                cells += [f"error: {r.error}"] + [""] * (len(self.columns) - 1)
            rows.append(cells)
        return table([*params, "seed", *self.columns], rows)

    def report(self, results: list[PointResult], out: Path) -> str:
        out.mkdir(parents=True, exist_ok=True)
        checks = self.check(results)
        pngs = self.plots(results, out)
        lines = [f"# {self.title}", "", "```", self.table(results), "```", "", "Claims:", ""]
        lines += [f"- {claim_line(c)}" for c in checks]
        if any(r.metrics.get("nonstandard_roce") for r in results):
            lines += ["", f"Note: rows with nonstandard_roce=yes use {EXTENSIONS_NOTE}."]
        failed = [r for r in results if not r.ok]
        if failed:
            lines += ["", f"{len(failed)} point(s) failed:"] + [f"- {r.point.key()}: {r.error}" for r in failed]
        if pngs:
            lines += ["", "Plots:"] + [f"- {p.name}" for p in pngs]
        text = "\n".join(lines) + "\n"
        (out / "report.md").write_text(text)
        return text


def pyplot():
    """matplotlib's pyplot on the Agg backend (files only)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def bar_plot(path: Path, title: str, ylabel: str, groups: dict[str, dict[str, float]]) -> Path:
    """Grouped bars: ``groups[series][category] = value``."""
    plt = pyplot()
    cats = sorted({c for g in groups.values() for c in g}, key=str)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / max(1, len(groups))
    for i, (series, values) in enumerate(groups.items()):
        xs = [j + i * width for j in range(len(cats))]
        ax.bar(xs, [values.get(c, 0.0) for c in cats], width, label=str(series))
    ax.set_xticks([j + width * (len(groups) - 1) / 2 for j in range(len(cats))])
    ax.set_xticklabels([str(c) for c in cats], rotation=15, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if len(groups) > 1:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def line_plot(path: Path, title: str, xlabel: str, ylabel: str, series: dict[str, tuple[Sequence[float], Sequence[float]]],
              logx: bool = False, logy: bool = False) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for name, (xs, ys) in series.items():
        ax.plot(list(xs), list(ys), marker="." if len(xs) < 30 else None, label=name, linewidth=1)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
