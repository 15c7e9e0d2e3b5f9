"""The NIC's transport settings: one schema (name, default, allowed values) for every way in.

The management API's ``configure``, the ``rnic`` command line, the workloads and the
controller's ``nic`` section all speak these fields. :meth:`NicSettings.validate` is the one
check; its errors name the field and what it allows, and nothing is changed by a refused
setting. The congestion-control names are ``nicmodel.cc``'s registry, not a copy of it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any

from nicmodel.cc import ALGORITHMS, CongestionControl, create_cc
from nicmodel.verbs import LossDetection, QpConfig, Reliability

CC_ALGORITHMS = tuple(ALGORITHMS)
RELIABILITY = tuple(r.value for r in Reliability)
LOSS_DETECTION = tuple(m.value for m in LossDetection)
IB_MTUS = (256, 512, 1024, 2048, 4096)
REFERENCE_RATE_BPS = 100e9  # parameters are checked at this line rate when the NIC's is not known


class SettingsError(ValueError):
    """A setting the NIC cannot take; ``str(e)`` starts with the setting's name."""


@dataclass(frozen=True)
class OneOf:
    choices: tuple[Any, ...]

    def check(self, name: str, value: Any) -> None:
        if isinstance(value, bool) or value not in self.choices:
            raise SettingsError(f"{name}: {value!r} is not one of {', '.join(map(str, self.choices))}")

    def __str__(self) -> str:
        return " | ".join(map(str, self.choices))


@dataclass(frozen=True)
class Range:
    """``lo <= value <= hi`` (``lo < value`` when ``open_low``); ``integer``: ints only."""

    lo: float
    hi: float
    integer: bool = False
    open_low: bool = False

    def check(self, name: str, value: Any) -> None:
        kinds = int if self.integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds) or value > self.hi or \
                value < self.lo or (self.open_low and value == self.lo):
            raise SettingsError(f"{name}: {value!r} is outside {self}")

    def __str__(self) -> str:
        return f"{'(' if self.open_low else ''}{self.lo}..{self.hi}{')' if self.open_low else ''}"


@dataclass(frozen=True)
class Flag:
    def check(self, name: str, value: Any) -> None:
        if not isinstance(value, bool):
            raise SettingsError(f"{name}: expected true or false, got {value!r}")

    def __str__(self) -> str:
        return "true | false"


@dataclass(frozen=True)
class Numbers:
    """A mapping of parameter names to numbers (the algorithm checks names and ranges)."""

    def check(self, name: str, value: Any) -> None:
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) for k, v in value.items()):
            raise SettingsError(f"{name} must map parameter names to numbers, got {value!r}")

    def __str__(self) -> str:
        return "{name: number} for the algorithm"


def _setting(default: Any, rule: Any, doc: str) -> Any:
    if isinstance(default, dict):
        return field(default_factory=dict, metadata={"rule": rule, "doc": doc})
    return field(default=default, metadata={"rule": rule, "doc": doc})


@dataclass
class NicSettings:
    """Per-NIC transport settings a workload's queue pairs are created with."""

    cc: str = _setting("none", OneOf(CC_ALGORITHMS), "congestion control (nicmodel.cc)")
    cc_params: dict[str, Any] = _setting({}, Numbers(), "overrides of the algorithm's parameters")
    reliability: str = _setting("gbn", OneOf(RELIABILITY), "Go-Back-N or selective repeat")
    loss_detection: str = _setting(QpConfig.loss_detection.value, OneOf(LOSS_DETECTION),
                                   "selective repeat: time-based (RACK) or duplicate threshold")
    reorder_window_rtt: float = _setting(QpConfig.reorder_window_rtt, Range(0, 16, open_low=True),
                                         "RACK's initial reorder window, in minimum RTTs")
    mtu: int = _setting(1024, OneOf(IB_MTUS), "RoCE path MTU (bytes of payload per packet)")
    dscp: int = _setting(26, Range(0, 63, integer=True), "DSCP of data packets")
    priority: int = _setting(3, Range(0, 7, integer=True), "802.1p priority (PFC class) of data packets")
    ecn: bool = _setting(True, Flag(), "data packets ECN-capable; false: switches never mark them")
    base_rtt_ns: int = _setting(10_000, Range(1, 10**10, integer=True), "fabric base RTT (HPCC, TIMELY)")

    def validate(self, line_rate_bps: float = REFERENCE_RATE_BPS) -> None:
        """Every field against its rule, then the algorithm's parameters; SettingsError names
        the first setting that is wrong."""
        for f in fields(self):
            f.metadata["rule"].check(f.name, getattr(self, f.name))
        try:
            create_cc(self.cc, line_rate_bps, self._cc_params())
        except ValueError as e:
            raise SettingsError(f"cc_params: {e}") from None

    @classmethod
    def from_dict(cls, values: dict[str, Any], base: NicSettings | None = None) -> NicSettings:
        """``base`` (defaults if None) with ``values`` applied, validated; unknown names refused."""
        if not isinstance(values, dict):
            raise SettingsError(f"settings must be a mapping of names to values, got {values!r}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise SettingsError(f"unknown setting(s) {unknown}; valid: {sorted(known)}")
        out = dataclasses.replace(base or cls(), **values)
        out.validate()
        return out

    @classmethod
    def describe(cls) -> list[tuple[str, str, str]]:
        """(name, allowed values, meaning) of every setting, for help texts and documentation."""
        return [(f.name, str(f.metadata["rule"]), f.metadata["doc"]) for f in fields(cls)]

    def _cc_params(self) -> dict[str, Any]:
        """CC parameters with the fabric's base RTT and MTU filled in where they apply."""
        params = dict(self.cc_params)
        if self.cc == "hpcc":
            params.setdefault("base_rtt_ns", self.base_rtt_ns)
            params.setdefault("mtu_bytes", self.mtu)
        elif self.cc == "timely":
            params.setdefault("min_rtt_ns", self.base_rtt_ns)
        return params

    def qp_config(self) -> QpConfig:
        return QpConfig(mtu=self.mtu, reliability=Reliability(self.reliability), dscp=self.dscp,
                        priority=self.priority, ecn=self.ecn, base_rtt_ns=self.base_rtt_ns,
                        loss_detection=LossDetection(self.loss_detection),
                        reorder_window_rtt=self.reorder_window_rtt)

    def make_cc(self, line_rate_bps: float) -> CongestionControl:
        return create_cc(self.cc, line_rate_bps, self._cc_params())

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
