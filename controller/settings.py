"""Every knob the controller sets on the fabric, with units, defaults and allowed values.

Profiles (``profiles.py``) and ``fabricctl set`` are both just overrides of these fields, so
one validator guards them all: an unknown section or key, a value of the wrong type or out of
range is refused with a message naming it, before anything is written to a switch or NIC.
Sizes are bytes and times microseconds of fabric time; the controller converts to what the
data plane counts in (queue depth in packets, see ``fabric_rules``).
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from netbase.ethernet import WIRE_OVERHEAD_BYTES
from netbase.pfc import WATCHDOG_DEFAULT_NS
from nicmodel.settings import NicSettings
from nicmodel.settings import SettingsError as NicSettingsError

LB_MODES = ("ecmp", "dlb", "spray")
SPRAY_ALGOS = ("round_robin", "random", "best_of_two")
# INT sink on host ports: strip + report to the collector; forward to the NIC for HPCC to echo;
# or both, so HPCC keeps fabric-wide telemetry
INT_SINK_MODES = ("report", "echo", "echo+report")
# fabric.p4 forgets a PFC-counted packet between stale_us and 2 x stale_us after counting it (a 32-bit
# microsecond parameter); earlier than the PFC watchdog's detection it could forget packets that are only
# held by a legitimate pause, and resume a sender too soon
PFC_STALE_MIN_US = WATCHDOG_DEFAULT_NS // 1000
PFC_STALE_MAX_US = (1 << 31) - 1
PFC_FRAME_WIRE_BYTES = 64 + WIRE_OVERHEAD_BYTES  # a PFC frame is a minimum-size Ethernet frame


class SettingsError(ValueError):
    """An override the fabric cannot take."""


def pfc_headroom_bytes(rate_gbps: float, delay_us: float, frame_bytes: int) -> int:
    """Bytes a port may still receive after its switch decides to pause it, which the queue must
    hold above XOFF for the class to stay lossless. The usual PFC headroom budget (as switch
    vendors size per-port headroom): the cable's round trip at the port's rate
    (the pause travels up while data keeps arriving), one full frame the switch was sending when
    it decided (strict priority does not preempt a frame on the wire), one full frame the sender
    had started when the pause arrived, and the PFC frame itself. The switches and the NIC model
    react on receipt, so no further response time is added."""
    cable = 2 * rate_gbps * 1e9 * delay_us * 1e-6 / 8
    return math.ceil(cable) + 2 * (frame_bytes + WIRE_OVERHEAD_BYTES) + PFC_FRAME_WIRE_BYTES


@dataclass
class LoadBalancing:
    data_mode: str = "ecmp"  # RoCE data class: ecmp | dlb | spray
    control_mode: str = "ecmp"  # ACK/NAK/CNP and everything else
    spray_algo: str = "round_robin"
    hash_qp: bool = True  # add the BTH destination QP to the ECMP hash (E-ECMP)
    flowlet_timeout_us: int = 200  # DLB: a gap longer than this starts a new flowlet

    def check(self) -> None:
        _one_of("lb.data_mode", self.data_mode, LB_MODES)
        _one_of("lb.control_mode", self.control_mode, LB_MODES)
        _one_of("lb.spray_algo", self.spray_algo, SPRAY_ALGOS)
        _range("lb.flowlet_timeout_us", self.flowlet_timeout_us, 1, 10_000_000)


@dataclass
class Classes:
    data_dscp: int = 26  # RoCEv2 data, lossless
    cnp_dscp: int = 48  # CNP and ACK/NAK, high priority
    data_priority: int = 3
    cnp_priority: int = 6
    default_priority: int = 0

    def check(self) -> None:
        for name in ("data_dscp", "cnp_dscp"):
            _range(f"classes.{name}", getattr(self, name), 0, 63)
        for name in ("data_priority", "cnp_priority", "default_priority"):
            _range(f"classes.{name}", getattr(self, name), 0, 7)
        if self.data_dscp == self.cnp_dscp:
            raise SettingsError("classes.data_dscp and classes.cnp_dscp must differ")


@dataclass
class Ecn:
    enabled: bool = True
    kmin_bytes: int = 5_000
    kmax_bytes: int = 20_000
    pmax: float = 0.2  # marking probability at Kmax (DCQCN paper: 1%..20%)

    def check(self) -> None:
        _range("ecn.kmin_bytes", self.kmin_bytes, 0, 1 << 30)
        _range("ecn.kmax_bytes", self.kmax_bytes, 1, 1 << 30)
        _range("ecn.pmax", self.pmax, 0.0, 1.0)
        if self.kmin_bytes > self.kmax_bytes:
            raise SettingsError(f"ecn.kmin_bytes ({self.kmin_bytes}) must not exceed ecn.kmax_bytes ({self.kmax_bytes})")


@dataclass
class Pfc:
    enabled: bool = True
    xoff_bytes: int = 40_000
    xon_bytes: int = 20_000
    # a counted packet not gone after this long is taken as lost (tail or watchdog drop) and no longer
    # holds its sender paused (p4src/README.md, "Lost packets"); SONiC's watchdog default is 200 ms
    stale_us: int = 200_000

    def check(self) -> None:
        _range("pfc.xoff_bytes", self.xoff_bytes, 1, 1 << 30)
        _range("pfc.xon_bytes", self.xon_bytes, 0, 1 << 30)
        if isinstance(self.stale_us, int) and 0 <= self.stale_us < PFC_STALE_MIN_US:
            raise SettingsError(f"pfc.stale_us: {self.stale_us} is below the PFC watchdog's detection time "
                                f"({PFC_STALE_MIN_US} us); a packet held by a pause would be forgotten too early")
        _range("pfc.stale_us", self.stale_us, PFC_STALE_MIN_US, PFC_STALE_MAX_US)
        if self.xon_bytes >= self.xoff_bytes:
            raise SettingsError(f"pfc.xon_bytes ({self.xon_bytes}) must be below pfc.xoff_bytes ({self.xoff_bytes})")

    def check_fits(self, queue_depth_pkts: int, xoff_pkts: int, headroom_pkts: int, port: str) -> None:
        """XOFF plus the port's headroom must fit in one switch queue, or the queue tail-drops
        packets of the lossless class before the pause reaches the sender. Called by the
        controller, which knows the topology, before it writes anything to a switch. (Several
        ports feeding one queue need more: ``fabric_rules.lossless_queue_depth``.)"""
        if self.enabled and xoff_pkts + headroom_pkts > queue_depth_pkts:
            raise SettingsError(
                f"pfc.xoff_bytes ({self.xoff_bytes} = {xoff_pkts} packets) plus the PFC headroom of {port} "
                f"({headroom_pkts} packets) exceeds the queue depth ({queue_depth_pkts} packets): the queue would "
                f"tail-drop before the pause takes effect; lower pfc.xoff_bytes or raise the topology's "
                f"queue_depth_pkts to at least {xoff_pkts + headroom_pkts}")


@dataclass
class Int:
    enabled: bool = True
    sink_mode: str = "report"
    max_hops: int = 5
    watch_data: bool = True  # put RoCE data flows on the INT watch list

    def check(self) -> None:
        _one_of("int.sink_mode", self.sink_mode, INT_SINK_MODES)
        _range("int.max_hops", self.max_hops, 1, 15)


@dataclass
class Nic:
    """The NIC settings the controller chooses per profile: fields of the NIC model's schema
    (``nicmodel.settings.NicSettings``), which also checks them; MTU, DSCP, priority and ECN
    come from the topology and the ``classes``/``ecn`` sections."""

    cc: str = "dcqcn"
    reliability: str = NicSettings.reliability
    cc_params: dict[str, float] = field(default_factory=dict)  # passed to the NIC's algorithm as-is
    loss_detection: str = NicSettings.loss_detection  # selective repeat: how a hole is judged lost
    reorder_window_rtt: float = NicSettings.reorder_window_rtt  # rack: reordering tolerated, in min RTTs

    def check(self) -> None:
        try:
            NicSettings(**asdict(self)).validate()
        except NicSettingsError as e:
            raise SettingsError(f"nic.{e}") from None


@dataclass
class Settings:
    lb: LoadBalancing = field(default_factory=LoadBalancing)
    classes: Classes = field(default_factory=Classes)
    ecn: Ecn = field(default_factory=Ecn)
    pfc: Pfc = field(default_factory=Pfc)
    int: Int = field(default_factory=Int)
    nic: Nic = field(default_factory=Nic)

    def check(self) -> None:
        for f in fields(self):
            getattr(self, f.name).check()

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return asdict(self)

    def with_overrides(self, overrides: dict[str, dict[str, Any]]) -> Settings:
        """A validated copy with ``{"section": {"key": value}}`` applied; self is unchanged."""
        out = copy.deepcopy(self)
        sections = {f.name for f in fields(self)}
        if not isinstance(overrides, dict):
            raise SettingsError("overrides must be a mapping of sections")
        for section, values in overrides.items():
            if section not in sections:
                raise SettingsError(f"unknown section {section!r} (sections: {', '.join(sorted(sections))})")
            if not isinstance(values, dict):
                raise SettingsError(f"{section}: expected key=value settings")
            target = getattr(out, section)
            known = {f.name: f for f in fields(target)}
            for key, value in values.items():
                if key not in known:
                    raise SettingsError(f"unknown setting {section}.{key} (known: {', '.join(sorted(known))})")
                setattr(target, key, _coerce(f"{section}.{key}", value, getattr(target, key)))
        out.check()
        return out


def parse_value(text: str) -> Any:
    """A command-line value: true/false, int, float, else the string itself."""
    low = text.lower()
    if low in ("true", "on", "yes"):
        return True
    if low in ("false", "off", "no"):
        return False
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _coerce(name: str, value: Any, current: Any) -> Any:
    if isinstance(current, bool):
        if isinstance(value, bool):
            return value
        raise SettingsError(f"{name}: expected true or false, got {value!r}")
    if isinstance(current, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise SettingsError(f"{name}: expected an integer, got {value!r}")
    if isinstance(current, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise SettingsError(f"{name}: expected a number, got {value!r}")
    if isinstance(current, str):
        if isinstance(value, str):
            return value
        raise SettingsError(f"{name}: expected a word, got {value!r}")
    if isinstance(current, dict):
        if isinstance(value, dict):
            return {**current, **value}
        raise SettingsError(f"{name}: expected a mapping, got {value!r}")
    raise SettingsError(f"{name}: cannot set")


def _one_of(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise SettingsError(f"{name}: {value!r} is not one of {', '.join(allowed)}")


def _range(name: str, value: Any, lo: float, hi: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise SettingsError(f"{name}: {value!r} is outside {lo}..{hi}")
