"""P4Runtime object IDs and aliases, assigned exactly as the reference compiler (p4c) does.

A controller that cached IDs from a p4c-generated P4Info must find the same IDs on our target,
so the algorithm is the reference one, reimplemented from its definition:

* id = (resource-type prefix << 24) | (Jenkins one-at-a-time hash of the name & 0xffffff);
* names without an ``@id`` are hashed in sorted (byte-wise) order, and a collision is resolved by
  linear probing on the *hash value* (hash+1, hash+2, ...), so the prefix byte never changes;
* an ``@id(N)`` is used as given, with the prefix added when its top byte is 0 (a wrong
  non-zero prefix is an error), and it is reserved before any hashed id is chosen;
* the alias of an object is the shortest dot-separated suffix of its name that no other
  P4Runtime-visible name shares.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2

Prefix = p4info_pb2.P4Ids.Prefix
ACTION = Prefix.Value("ACTION")
TABLE = Prefix.Value("TABLE")
VALUE_SET = Prefix.Value("VALUE_SET")
CONTROLLER_HEADER = Prefix.Value("CONTROLLER_HEADER")
ACTION_PROFILE = Prefix.Value("ACTION_PROFILE")
COUNTER = Prefix.Value("COUNTER")
DIRECT_COUNTER = Prefix.Value("DIRECT_COUNTER")
METER = Prefix.Value("METER")
DIRECT_METER = Prefix.Value("DIRECT_METER")
REGISTER = Prefix.Value("REGISTER")
DIGEST = Prefix.Value("DIGEST")

_MASK32 = 0xFFFFFFFF


class IdError(ValueError):
    """An ``@id`` that cannot be honoured (wrong prefix, used twice, out of range)."""


def jenkins_one_at_a_time(data: bytes) -> int:
    """Bob Jenkins' one-at-a-time hash on 32-bit unsigned arithmetic."""
    h = 0
    for byte in data:
        h = (h + byte) & _MASK32
        h = (h + (h << 10)) & _MASK32
        h ^= h >> 6
    h = (h + (h << 3)) & _MASK32
    h ^= h >> 11
    h = (h + (h << 15)) & _MASK32
    return h


def hashed_id(prefix: int, name: str) -> int:
    """The id a name gets when nothing collides with it."""
    return (prefix << 24) | (jenkins_one_at_a_time(name.encode()) & 0xFFFFFF)


def explicit_id(prefix: int, value: int, what: str) -> int:
    """Apply the resource prefix to an ``@id`` value, rejecting a conflicting one."""
    if not 0 < value <= _MASK32:
        raise IdError(f"{what}: @id should be an unsigned 32-bit integer, got {value}")
    top = value >> 24
    if top not in (0, prefix):
        raise IdError(f"{what}: @id has the wrong 8-bit prefix 0x{top:02x} (expected 0x{prefix:02x})")
    return value | (prefix << 24)


@dataclass
class SymbolTable:
    """Collects (resource type, name, optional @id) and then assigns every id at once.

    Ids can only be computed with global knowledge (collisions, reserved @ids), so the table
    is filled first and :meth:`assign` is called once, like p4c's two-phase symbol table.
    """

    _requested: dict[int, dict[str, int | None]] = field(default_factory=dict)
    _ids: dict[tuple[int, str], int] = field(default_factory=dict)
    _names: list[str] = field(default_factory=list)

    def add(self, prefix: int, name: str, at_id: int | None = None) -> None:
        names = self._requested.setdefault(prefix, {})
        if name in names:
            return  # the same object reached twice (e.g. a global action used by two controls)
        names[name] = None if at_id is None else explicit_id(prefix, at_id, name)
        if name not in self._names:
            self._names.append(name)

    def assign(self) -> None:
        taken: set[int] = set()
        for prefix, names in self._requested.items():
            for name, wanted in names.items():
                if wanted is None:
                    continue
                if wanted in taken:
                    raise IdError(f"@id {wanted} is assigned to multiple declarations")
                taken.add(wanted)
                self._ids[(prefix, name)] = wanted
        for prefix in sorted(self._requested):
            for name in sorted(n for n, w in self._requested[prefix].items() if w is None):
                value = jenkins_one_at_a_time(name.encode())
                start = value
                while ((prefix << 24) | (value & 0xFFFFFF)) in taken:
                    value = (value + 1) & _MASK32
                    if value == start:
                        raise IdError(f"no available id to represent {name} in P4Runtime")
                chosen = (prefix << 24) | (value & 0xFFFFFF)
                taken.add(chosen)
                self._ids[(prefix, name)] = chosen

    def id_of(self, prefix: int, name: str) -> int:
        return self._ids[(prefix, name)]

    def alias_of(self, name: str) -> str:
        return shortest_unique_suffix(name, self._names)


def shortest_unique_suffix(name: str, all_names: list[str]) -> str:
    """The fewest trailing dot-components of ``name`` that no other name in the set ends with."""
    parts = name.split(".")
    others = [n.split(".") for n in set(all_names) if n != name]
    for count in range(1, len(parts) + 1):
        suffix = parts[-count:]
        if not any(o[-count:] == suffix for o in others if len(o) >= count):
            return ".".join(suffix)
    return name
