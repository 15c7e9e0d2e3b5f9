"""Stateful v1model externs: register, counter, direct_counter, meter, direct_meter, and
the parser value_set; and the draw of ``random``.

These are the objects the control plane reads and writes (by P4Info name in
``LoadedProgram``) and the generated code calls per packet. Indices out of range behave as
BMv2 does: an access outside the array is ignored (reads give 0) rather than crashing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from librt.vecs import vec
from mypy_extensions import i64

from p4rt.entries import CounterData, InvalidEntryError, MeterConfig, NotFoundError, ResourceExhaustedError

GREEN, YELLOW, RED = 0, 1, 2


# registers up to this wide keep their cells in an ``int_array``; wider ones in a list of ints
NATIVE_CELL_BITS: Final = 63


def int_array(values: list[int]) -> vec[i64]:
    """Packet or byte counts, or a register's cells, as a native array of 64-bit ints (librt's
    ``vec``): compiled code stores an item without making an int object of each value (and
    freeing the one before), ~150 instructions a count; Python reads and writes its items as
    ints."""
    return vec[i64](values)


def random_in(randbits: Callable[[int], int], lo: int, hi: int) -> int:
    """v1model ``random(result, lo, hi)``: uniform in [lo, hi]; ``lo`` when the range is empty.
    ``randbits`` is the switch's ``random.Random().getrandbits``, bound once (compiled, a call of
    the method on the generator looked it up by name each draw).

    The draw ``rng.randint(lo, hi)`` makes (getrandbits of the range's bit length until one
    falls in the range), so a seed gives the same values; here it runs compiled with this
    module instead of through three interpreted frames of ``random.py`` (~3,500 instructions)."""
    if hi <= lo:
        return lo
    n = hi - lo + 1
    k = n.bit_length()
    r = randbits(k)
    while r >= n:
        r = randbits(k)
    return lo + r


def _check_index(kind: str, name: str, index: int, size: int) -> None:
    """Control-plane accesses must name a cell (the data plane's are ignored instead). The
    message is made only for a bad index: a telemetry sample checks thousands of good ones."""
    if not 0 <= index < size:
        raise NotFoundError(f"{kind} {name}: index {index} out of range 0..{size - 1}")


class Register:
    """``register<T, I>(size)``: an array of ``width``-bit cells, initially 0. The cells are an
    ``int_array`` up to ``NATIVE_CELL_BITS`` wide (fabric.p4's egress writes ~5 a packet, each a
    new int object in a list), else a list."""

    def __init__(self, name: str, size: int, width: int) -> None:
        self.name = name
        self.size = size
        self.width = width
        self._mask = (1 << width) - 1
        # the native array typed, for ``p_read``/``p_write`` (empty for a wide register): through
        # ``cells`` a write was a generic item store, its index and value boxed (a packet-hop's
        # queue-bytes write from the device)
        self._native = int_array([0] * size) if width <= NATIVE_CELL_BITS else vec[i64]()
        self.cells: Any = self._native if width <= NATIVE_CELL_BITS else [0] * size

    def read(self, index: int) -> int:
        _check_index("register", self.name, index, self.size)
        return self.cells[index]

    def read_cells(self, indexes: list[int]) -> list[tuple[int, int]]:
        """(index, value) of each of ``indexes``: a P4Runtime Read's selection copied in one
        compiled call, not a call from the interpreter per cell."""
        cells, name, size = self.cells, self.name, self.size
        out = []
        for i in indexes:
            _check_index("register", name, i, size)
            out.append((i, int(cells[i])))
        return out

    def write(self, index: int, value: int) -> None:
        _check_index("register", self.name, index, self.size)
        if not 0 <= value <= self._mask:
            raise InvalidEntryError(f"register {self.name}: value {value} does not fit in {self.width} bits")
        self.cells[index] = value

    def reset(self) -> None:
        cells = self.cells
        for i in range(self.size):  # in place: generated code holds the array itself
            cells[i] = 0

    # data plane
    def p_read(self, index: int) -> int:
        if not 0 <= index < self.size:
            return 0
        return int(self._native[index]) if self.width <= NATIVE_CELL_BITS else self.cells[index]

    def p_write(self, index: int, value: int) -> None:
        if 0 <= index < self.size:
            if self.width <= NATIVE_CELL_BITS:
                self._native[index] = value & self._mask
            else:
                self.cells[index] = value & self._mask


class Counter:
    """``counter(size, type)``; ``kind`` is "packets", "bytes" or "packets_and_bytes".

    Packet and byte counts are two arrays (``int_array``), not an object per cell: fabric.p4
    declares 26,000 counter cells, and making an object for each took 0.15 s of every
    switch's start (12 s for a k=8 fat tree's 80 switches) and 2 million objects in its
    simulation."""

    def __init__(self, name: str, size: int, kind: str) -> None:
        self.name = name
        self.size = size
        self.kind = kind
        self.packets = int_array([0] * size)
        self.bytes = int_array([0] * size)

    def read(self, index: int) -> CounterData:
        _check_index("counter", self.name, index, self.size)
        return CounterData(self.packets[index], self.bytes[index])

    def count_cells(self, indexes: list[int]) -> list[tuple[int, int, int]]:
        """(index, packets, bytes) of each of ``indexes``, as ``Register.read_cells`` (what a
        P4Runtime Read encodes, without a ``CounterData``, an interpreted dataclass, a cell)."""
        packets, nbytes, name, size = self.packets, self.bytes, self.name, self.size
        out = []
        for i in indexes:
            _check_index("counter", name, i, size)
            out.append((i, packets[i], nbytes[i]))
        return out

    def write(self, index: int, data: CounterData) -> None:
        _check_index("counter", self.name, index, self.size)
        self.packets[index], self.bytes[index] = data.packets, data.bytes


class DirectCounter:
    """``direct_counter(type)``: one CounterData per entry of its table (``entry.counter``);
    the table counts a hit whether or not the action calls ``count()`` (BMv2)."""

    def __init__(self, name: str, kind: str) -> None:
        self.name = name
        self.kind = kind
        self.table: str | None = None


@dataclass
class _Bucket:
    """RFC 2698 token buckets of one meter cell, in units (packets or bytes)."""

    config: MeterConfig
    tc: float
    tp: float
    last_us: int


class MeterState:
    """Two-rate three-colour marking (RFC 2698, colour blind), the way BMv2's meters mark:
    a packet larger than the peak bucket is RED, larger than the committed bucket YELLOW,
    else GREEN; an unconfigured meter marks everything GREEN."""

    def __init__(self, by_bytes: bool) -> None:
        self.by_bytes = by_bytes

    @staticmethod
    def new_bucket(config: MeterConfig, now_us: int) -> _Bucket:
        return _Bucket(config, float(config.cburst), float(config.pburst), now_us)

    def execute(self, bucket: _Bucket | None, nbytes: int, now_us: int) -> int:
        if bucket is None:
            return GREEN
        cfg = bucket.config
        dt = max(0, now_us - bucket.last_us) / 1e6
        bucket.last_us = max(now_us, bucket.last_us)
        bucket.tc = min(float(cfg.cburst), bucket.tc + cfg.cir * dt)
        bucket.tp = min(float(cfg.pburst), bucket.tp + cfg.pir * dt)
        units = nbytes if self.by_bytes else 1
        if bucket.tp < units:
            return RED
        if bucket.tc < units:
            bucket.tp -= units
            return YELLOW
        bucket.tp -= units
        bucket.tc -= units
        return GREEN


def _check_meter_config(name: str, config: MeterConfig | None) -> None:
    if config is None:
        return
    if min(config.cir, config.cburst, config.pir, config.pburst) < 0:
        raise InvalidEntryError(f"meter {name}: negative rate or burst")
    if config.pir < config.cir:
        raise InvalidEntryError(f"meter {name}: peak rate {config.pir} below committed rate {config.cir}")


class Meter(MeterState):
    """``meter(size, type)``: an array of trTCM meters; ``kind`` is "packets" or "bytes"."""

    def __init__(self, name: str, size: int, kind: str) -> None:
        super().__init__(kind == "bytes")
        self.name = name
        self.size = size
        self.kind = kind
        self.buckets: list[_Bucket | None] = [None] * size

    def set_config(self, index: int, config: MeterConfig | None) -> None:
        """Configure one meter cell (None: unconfigured, everything GREEN); its buckets
        start full."""
        _check_index("meter", self.name, index, self.size)
        _check_meter_config(self.name, config)
        # full buckets; time 0 as the last update only refills them (capped) on the first packet
        self.buckets[index] = None if config is None else self.new_bucket(config, 0)

    def get_config(self, index: int) -> MeterConfig | None:
        _check_index("meter", self.name, index, self.size)
        b = self.buckets[index]
        return None if b is None else b.config

    def p_execute(self, index: int, nbytes: int, now_us: int) -> int:
        if not 0 <= index < self.size:
            return GREEN
        return self.execute(self.buckets[index], nbytes, now_us)


class DirectMeter(MeterState):
    """``direct_meter(type)``: the configuration lives in ``entry.meter``; the bucket state
    per entry is kept here. The table marks on every hit and leaves the colour in
    ``self.color`` for the action's ``read()`` (BMv2 behaves as if every action reads it)."""

    def __init__(self, name: str, kind: str) -> None:
        super().__init__(kind == "bytes")
        self.name = name
        self.kind = kind
        self.table: str | None = None
        self.color = GREEN
        self._buckets: dict[int, _Bucket] = {}

    def check_config(self, config: MeterConfig | None) -> None:
        _check_meter_config(self.name, config)

    def forget(self, entry_id: int) -> None:
        self._buckets.pop(entry_id, None)

    def mark(self, entry_id: int, config: MeterConfig | None, nbytes: int, now_us: int) -> int:
        if config is None:
            self.color = GREEN
            return GREEN
        b = self._buckets.get(entry_id)
        if b is None or b.config != config:
            b = self._buckets[entry_id] = self.new_bucket(config, now_us)
        self.color = self.execute(b, nbytes, now_us)
        return self.color


class ValueSet:
    """Parser ``value_set<T>(size)``: the control plane installs up to ``size`` (value, mask)
    members; a select case naming the set matches a key equal to a member under its mask."""

    def __init__(self, name: str, size: int, width: int) -> None:
        self.name = name
        self.size = size
        self.width = width
        self.members: list[tuple[int, int]] = []

    def set_members(self, members: list[tuple[int, int]]) -> None:
        full = (1 << self.width) - 1
        if len(members) > self.size:
            raise ResourceExhaustedError(f"value set {self.name} holds at most {self.size} members")
        for v, m in members:
            if not (0 <= v <= full and 0 <= m <= full):
                raise InvalidEntryError(f"value set {self.name}: member {v:#x}/{m:#x} does not fit in {self.width} bits")
        self.members = [(v & m, m) for v, m in members]

    def contains(self, key: int) -> bool:
        for v, m in self.members:
            if key & m == v:
                return True
        return False
