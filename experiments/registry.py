"""The named experiments: ``fabricctl experiment list`` shows these, ``run NAME`` runs one."""

from __future__ import annotations

from experiments import cc_convergence, ecn_thresholds, fct_slowdown, incast, load_balancing, loss_recovery
from experiments.base import Experiment

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    load_balancing.EXPERIMENT,
    cc_convergence.EXPERIMENT,
    loss_recovery.EXPERIMENT,
    incast.EXPERIMENT,
    ecn_thresholds.EXPERIMENT,
    fct_slowdown.EXPERIMENT,
)}


def get(name: str) -> Experiment:
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise KeyError(f"unknown experiment {name!r} (experiments: {', '.join(EXPERIMENTS)})") from None
