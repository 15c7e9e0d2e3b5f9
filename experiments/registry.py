"""The named experiments: ``fabricctl experiment list`` shows these, ``run NAME`` and
``fabricctl sweep NAME`` find them here."""

from __future__ import annotations

from experiments.base import Experiment

EXPERIMENTS: dict[str, Experiment] = {}


def get(name: str) -> Experiment:
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise KeyError(f"unknown experiment {name!r} (experiments: {', '.join(EXPERIMENTS)})") from None
