"""The hash algorithms of v1model, computed exactly as BMv2 computes them.

BMv2 hashes a byte buffer built from the data fields (bit-packed, zero padded at the end).
- crc16: poly 0x8005, init 0, input and output reflected, no final xor (CRC-16/ARC).
- crc32: poly 0x04C11DB7, init and final xor 0xFFFFFFFF, reflected (the zlib/Ethernet CRC).
- crc16_custom / crc32_custom: the same parameters by default (BMv2's default custom config).
- csum16: the Internet checksum (ones' complement of the ones' complement sum of big-endian
  16-bit words, an odd last byte padded with zero).
- identity: the first 8 bytes of the buffer as a big-endian number.
- xor16: XOR of the big-endian 16-bit words, the last one zero padded.
- random: a random 64-bit number (BMv2 registers no such hash; v1model declares it).
"""

from __future__ import annotations

import random as _random
import zlib
from collections.abc import Callable, Sequence

from p4switch.exec.bits import bytes_of_bits
from p4switch.exec.memo import remember


def _reflected_table(poly: int, width: int) -> list[int]:
    """Table for a reflected CRC: the reflected polynomial processed LSB first."""
    rpoly = int(f"{poly:0{width}b}"[::-1], 2)
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ rpoly if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC16_TABLE = _reflected_table(0x8005, 16)


def crc16(data: bytes) -> int:
    crc = 0
    table = _CRC16_TABLE
    for b in data:
        crc = (crc >> 8) ^ table[(crc ^ b) & 0xFF]
    return crc


def crc32(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def csum16_int(n: int) -> int:
    """Internet checksum of the 16-bit words of ``n``: since 2**16 = 1 (mod 0xFFFF), the
    ones' complement sum of the words is ``n mod 0xFFFF``, read as 0xFFFF when a non-zero
    sum folds to 0."""
    s = n % 0xFFFF
    if s == 0 and n:
        s = 0xFFFF
    return ~s & 0xFFFF


def csum16(data: bytes) -> int:
    n = int.from_bytes(data, "big")
    return csum16_int(n << 8 if len(data) & 1 else n)


def identity(data: bytes) -> int:
    return int.from_bytes(data[:8], "big")


def xor16(data: bytes) -> int:
    if len(data) & 1:
        data = data + b"\x00"
    acc = 0
    for i in range(0, len(data), 2):
        acc ^= (data[i] << 8) | data[i + 1]
    return acc


class RandomHash:
    """The ``random`` algorithm; seeded per program so that runs are reproducible."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = _random.Random(seed)

    def __call__(self, data: bytes) -> int:
        return self._rng.getrandbits(64)


ALGORITHMS: dict[str, Callable[[bytes], int]] = {
    "crc16": crc16,
    "crc16_custom": crc16,
    "crc32": crc32,
    "crc32_custom": crc32,
    "csum16": csum16,
    "identity": identity,
    "xor16": xor16,
}


def algorithm(name: str, seed: int = 0) -> Callable[[bytes], int]:
    """The hash function for a v1model ``HashAlgorithm`` member name."""
    if name == "random":
        return RandomHash(seed)
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ValueError(f"unsupported hash algorithm {name!r}") from None


class FieldHash:
    """``algo`` of a field list packed as BMv2 packs it (``bytes_of_bits``), remembered per
    field values (``p4switch.exec.memo``): packing the bits and running crc16 a byte at a time
    cost 24,000 instructions of an ECMP packet. ``random`` is never remembered.

    ``widths`` gives each position of the values' tuple its width; a position whose width is
    None (not part of the list) or whose value is None (a field of an invalid header, which
    BMv2 leaves out) contributes nothing.
    """

    __slots__ = ("algo", "widths", "memo")

    def __init__(self, algo: Callable[[bytes], int], widths: Sequence[int | None]) -> None:
        self.algo = algo
        self.widths = tuple(widths)
        self.memo: dict[tuple, int] | None = None if isinstance(algo, RandomHash) else {}

    def __call__(self, values: tuple) -> int:
        memo = self.memo
        if memo is not None:
            h = memo.get(values)
            if h is not None:
                return h
        h = self.algo(bytes_of_bits([(v, w) for v, w in zip(values, self.widths) if w and v is not None]))
        return h if memo is None else remember(memo, values, h)


def hash_with_base(h: int, base: int, max_: int) -> int:
    """v1model ``hash()``: ``base + (h % max)`` when max >= 1, else ``base`` (BMv2 docs)."""
    return base + (h % max_) if max_ >= 1 else base
