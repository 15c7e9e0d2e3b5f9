"""Congestion-control algorithms by name, built from plain parameter dicts.

The management API, the CLI and the simulator all choose an algorithm by its name and pass
overrides as a dict (JSON-friendly); this is the one place that maps those onto the
algorithms' parameter dataclasses, so a misspelt parameter fails loudly everywhere alike.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from nicmodel.cc.base import AckInfo, CongestionControl, HopInt, LineRate
from nicmodel.cc.dcqcn import Dcqcn, DcqcnParams
from nicmodel.cc.hpcc import Hpcc, HpccParams
from nicmodel.cc.timely import Timely, TimelyParams

__all__ = [
    "ALGORITHMS",
    "AckInfo",
    "CongestionControl",
    "Dcqcn",
    "DcqcnParams",
    "HopInt",
    "Hpcc",
    "HpccParams",
    "LineRate",
    "Timely",
    "TimelyParams",
    "create_cc",
    "params_of",
]

# name -> (params dataclass or None, factory(line_rate, params))
ALGORITHMS: dict[str, tuple[type | None, Callable[[float, Any], CongestionControl]]] = {
    "none": (None, lambda rate, _p: LineRate(rate)),
    "dcqcn": (DcqcnParams, Dcqcn),
    "hpcc": (HpccParams, Hpcc),
    "timely": (TimelyParams, Timely),
}


def create_cc(
    name: str, line_rate_bps: float, params: dict[str, Any] | None = None
) -> CongestionControl:
    """Build algorithm ``name`` at ``line_rate_bps`` with ``params`` overriding defaults.

    Raises ValueError for an unknown algorithm, an unknown parameter or a bad value.
    """
    if name not in ALGORITHMS:
        raise ValueError(f"unknown congestion control {name!r}; choose one of {sorted(ALGORITHMS)}")
    if line_rate_bps <= 0:
        raise ValueError("line rate must be positive")
    params_cls, factory = ALGORITHMS[name]
    params = dict(params or {})
    if params_cls is None:
        if params:
            raise ValueError(f"congestion control {name!r} takes no parameters, got {sorted(params)}")
        return factory(line_rate_bps, None)
    fields = {f.name: f for f in dataclasses.fields(params_cls)}
    unknown = sorted(set(params) - set(fields))
    if unknown:
        raise ValueError(f"unknown {name} parameter(s) {unknown}; valid: {sorted(fields)}")
    converted: dict[str, Any] = {}
    for key, value in params.items():
        default = getattr(params_cls(), key)
        try:
            converted[key] = type(default)(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} parameter {key}: bad value {value!r}") from exc
    return factory(line_rate_bps, params_cls(**converted))


def params_of(cc: CongestionControl) -> dict[str, Any]:
    """The effective parameters of a built algorithm, as a JSON-friendly dict."""
    params = getattr(cc, "params", None)
    return dataclasses.asdict(params) if params is not None else {}
