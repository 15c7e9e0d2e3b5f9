"""Control-plane state of a running P4 program, as plain values.

This is the one vocabulary shared by everything that writes into the pipeline: the STF runner,
the P4Runtime server and the runtime CLI all build these objects, and the executor's tables and
externs consume them. Values are Python ints already fitted to the field width; names are the
P4Info names (e.g. ``MyIngress.ipv4_lpm``, key ``hdr.ipv4.dstAddr``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class MatchKind(str, Enum):
    EXACT = "exact"
    LPM = "lpm"
    TERNARY = "ternary"
    RANGE = "range"
    OPTIONAL = "optional"
    SELECTOR = "selector"


@dataclass(frozen=True)
class Exact:
    value: int


@dataclass(frozen=True)
class Lpm:
    value: int
    prefix_len: int


@dataclass(frozen=True)
class Ternary:
    value: int
    mask: int


@dataclass(frozen=True)
class Range:
    low: int
    high: int


@dataclass(frozen=True)
class Optional:
    """``value`` None is the wildcard (the field left out of a P4Runtime entry)."""

    value: int | None


FieldMatch = Exact | Lpm | Ternary | Range | Optional


@dataclass(frozen=True)
class ActionCall:
    """An action by P4Info name with its parameters by name."""

    name: str
    params: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class MemberRef:
    """An entry of a table with an action profile: points at one member."""

    member_id: int


@dataclass(frozen=True)
class GroupRef:
    """An entry of a table with an action selector: points at a group of members."""

    group_id: int


EntryAction = ActionCall | MemberRef | GroupRef


@dataclass(frozen=True)
class MeterConfig:
    """Two-rate three-colour meter (RFC 2698): rates in units/s, bursts in units."""

    cir: int
    cburst: int
    pir: int
    pburst: int


@dataclass
class CounterData:
    packets: int = 0
    bytes: int = 0


@dataclass
class TableEntry:
    """One entry. ``match`` is keyed by key-field name; a field left out matches anything
    (allowed for ternary, range, optional and lpm). ``priority`` follows P4Runtime: larger wins.
    ``metadata`` is the controller's opaque cookie (P4Runtime ``TableEntry.metadata``): the
    switch never looks at it but must give it back on every read.
    """

    match: dict[str, FieldMatch]
    action: EntryAction
    priority: int = 0
    counter: CounterData | None = None
    meter: MeterConfig | None = None
    idle_timeout_ns: int = 0
    metadata: bytes = b""

    def copy(self) -> TableEntry:
        """A copy with its own match dict and counter (the action, meter and cookie are not
        changed in place, so they are shared). Spelled out, not ``dataclasses.replace``, which
        cost a table insert more than the rest of its bookkeeping."""
        c = self.counter
        return TableEntry(dict(self.match), self.action, self.priority,
                          None if c is None else CounterData(c.packets, c.bytes),
                          self.meter, self.idle_timeout_ns, self.metadata)


@dataclass(frozen=True)
class Replica:
    port: int
    instance: int  # egress_rid


@dataclass
class CloneSession:
    """Mirroring session: copies go to each replica (usually one port); ``truncate`` > 0 cuts
    each copy to that many bytes; ``cos`` is the class of service (priority) of the copy."""

    session_id: int
    replicas: list[Replica]
    cos: int = 0
    truncate: int = 0


# BMv2's runtime CLI lets the smaller priority win; P4Runtime and our tables let the larger one
# win. (STF files let the larger win: p4c's STF driver hands the CLI 10000 - N.)
CLI_PRIORITY_CEILING = (1 << 24) - 1


def priority_from_cli(priority: int) -> int:
    """Table priority (larger wins) for a runtime-CLI priority (smaller wins), and back."""
    return CLI_PRIORITY_CEILING - priority


class EntryError(Exception):
    """A control-plane write the program cannot take. Subclasses name the P4Runtime status."""


class InvalidEntryError(EntryError):
    """Malformed request: unknown name, wrong width, bad mask or prefix (INVALID_ARGUMENT)."""


class AlreadyExistsError(EntryError):
    """INSERT of an entry or object that exists (ALREADY_EXISTS)."""


class NotFoundError(EntryError):
    """MODIFY/DELETE/read of something that does not exist (NOT_FOUND)."""


class ResourceExhaustedError(EntryError):
    """Table or profile full (RESOURCE_EXHAUSTED)."""
