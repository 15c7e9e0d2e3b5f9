"""The named experiments: ``fabricctl experiment list`` shows these, ``run NAME`` runs one."""

from __future__ import annotations

from experiments import load_balancing
from experiments.base import Experiment

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    load_balancing.EXPERIMENT,
)}


def get(name: str) -> Experiment:
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise KeyError(f"unknown experiment {name!r} (experiments: {', '.join(EXPERIMENTS)})") from None
