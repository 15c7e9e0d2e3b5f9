"""The named experiments: ``fabricctl experiment``, ``fabricctl sweep`` and the runner find an
experiment here by name. Each experiment module registers its instance with ``register``."""

from __future__ import annotations

from experiments.base import Experiment

_EXPERIMENTS: dict[str, Experiment] = {}


class UnknownExperiment(ValueError):
    """A name no experiment is registered under; the message lists the known ones."""


def register(exp: Experiment) -> Experiment:
    if _EXPERIMENTS.get(exp.name, exp) is not exp:
        raise ValueError(f"two experiments named {exp.name!r}")
    _EXPERIMENTS[exp.name] = exp
    return exp


def get(name: str) -> Experiment:
    try:
        return _EXPERIMENTS[name]
    except KeyError:
        raise UnknownExperiment(f"unknown experiment {name!r} (experiments: {', '.join(names()) or 'none'})") from None


def names() -> list[str]:
    return sorted(_EXPERIMENTS)
