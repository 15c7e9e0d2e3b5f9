"""The contract between an experiment, the runner and the sweep engine.

A :class:`Point` is everything one simulation needs, as plain JSON-able data, so it can be
shipped to a Dask worker, written into a results file and run again alone with the same
outcome. ``Experiment.run_point`` must be a pure function of the point (seeded, virtual time):
the sweep's test checks that a point run on a worker equals the same point run alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class Point:
    """One simulation: which experiment, which variant of it (``params``: the experiment's own
    knobs such as ``{"lb": "spray-rr"}`` plus dotted setting overrides such as
    ``{"ecn.kmin_bytes": 5000, "cc.algo": "hpcc"}``), the seed, and the quick/full form."""

    experiment: str
    params: dict[str, Any]
    seed: int = 1
    quick: bool = True

    def key(self) -> str:
        """A stable name for the point (file names, progress lines, result rows)."""
        inner = ",".join(f"{k}={self.params[k]}" for k in sorted(self.params))
        return f"{self.experiment}[{inner}]seed={self.seed}"

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "params": dict(self.params), "seed": self.seed, "quick": self.quick}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Point:
        return cls(d["experiment"], dict(d["params"]), int(d.get("seed", 1)), bool(d.get("quick", True)))


@dataclass
class PointResult:
    """What a point produced: its metrics (numbers and short strings, JSON-able), or the error
    that stopped it (after the runner's retry); never silently missing."""

    point: Point
    metrics: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    attempts: int = 1

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Claim:
    """One statement of the literature and how a run checks its direction."""

    source: str  # e.g. "HPCC (Li et al., SIGCOMM 2019), section 5"
    statement: str  # what the literature says
    # how the report decides: given the results, (what this run measured, whether the direction holds)


@dataclass
class ClaimCheck:
    claim: Claim
    measured: str
    holds: bool


class Experiment(Protocol):
    """A named experiment. Implementations live in ``experiments/<name>.py`` and register in
    ``experiments.registry``."""

    name: str
    title: str
    claims: list[Claim]

    def points(self, quick: bool, seeds: int = 1) -> list[Point]:
        """The experiment's own variants (quick: a small form that runs in seconds)."""

    def run_point(self, point: Point) -> dict[str, Any]:
        """Run one simulation and return its metrics; deterministic for a given point."""

    def check(self, results: list[PointResult]) -> list[ClaimCheck]:
        """One check per claim, from the points' metrics."""

    def report(self, results: list[PointResult], out: Path) -> str:
        """Write the table, plots (PNG) and claim lines under ``out``; return the text report."""
