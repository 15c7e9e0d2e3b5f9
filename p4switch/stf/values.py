"""Parsing of STF key and argument values into p4rt.entries matches.

Forms (as p4c's BMv2 STF runner accepts them): ``0x0a0b``, ``10``, ``0b101``; ternary
``V&&&M`` or hex/binary digits with ``*`` wildcard nibbles/bits; lpm ``V/LEN`` or ``*``
wildcards; range ``LO->HI`` (BMv2 CLI) or ``LO..HI``; optional ``V`` or ``*``."""

from __future__ import annotations

from p4rt.entries import Exact, FieldMatch, Lpm, MatchKind, Optional, Range, Ternary


class ValueError_(ValueError):
    pass


def parse_int(text: str) -> int:
    t = text.strip().replace("_", "")
    try:
        if t.lower().startswith("0x"):
            return int(t[2:], 16)
        if t.lower().startswith("0b"):
            return int(t[2:], 2)
        if t.lower().startswith("0o"):
            return int(t[2:], 8)
        return int(t, 10)
    except ValueError:
        raise ValueError_(f"bad number {text!r}") from None


def wildcard(text: str, width: int) -> tuple[int, int, int]:
    """(value, mask, number of significant bits) of a value that may contain ``*`` digits."""
    t = text.strip()
    low = t.lower()
    if low.startswith("0x"):
        digits, bits = t[2:], 4
    elif low.startswith("0b"):
        digits, bits = t[2:], 1
    elif "*" in t:
        raise ValueError_(f"wildcards need a hex or binary value: {text!r}")
    else:
        v = parse_int(t)
        return v, (1 << width) - 1, width
    value = mask = 0
    base = 16 if bits == 4 else 2
    for ch in digits:
        if ch == "_":
            continue
        value <<= bits
        mask <<= bits
        if ch != "*":
            value |= int(ch, base)
            mask |= (1 << bits) - 1
    total = len(digits.replace("_", "")) * bits
    if total < width:  # digits are the least significant bits; missing high bits are exact
        mask |= ((1 << width) - 1) ^ ((1 << total) - 1)
    elif total > width:
        value &= (1 << width) - 1
        mask &= (1 << width) - 1
    return value, mask, total


def _fit(v: int, width: int, text: str) -> int:
    if not 0 <= v < (1 << width):
        raise ValueError_(f"value {text!r} does not fit in {width} bits")
    return v


def parse_match(text: str, kind: MatchKind, width: int) -> FieldMatch | None:
    full = (1 << width) - 1
    t = text.strip()
    if kind == MatchKind.EXACT:
        return Exact(_fit(parse_int(t), width, t))
    if kind == MatchKind.TERNARY:
        if "&&&" in t:
            v, m = t.split("&&&", 1)
            mask = parse_int(m) & full
            return Ternary(parse_int(v) & mask, mask)
        v, m, _ = wildcard(t, width)
        return Ternary(v & m, m)
    if kind == MatchKind.LPM:
        if "/" in t:
            v, plen = t.split("/", 1)
            n = parse_int(plen)
            pm = full ^ ((1 << (width - n)) - 1)
            return Lpm(parse_int(v) & pm, n)
        v, m, _ = wildcard(t, width)
        n = bin(m).count("1")
        return Lpm(v & m, n)
    if kind == MatchKind.RANGE:
        for sep in ("->", ".."):
            if sep in t:
                lo, hi = t.split(sep, 1)
                return Range(parse_int(lo) & full, parse_int(hi) & full)
        v = _fit(parse_int(t), width, t)
        return Range(v, v)
    if kind == MatchKind.OPTIONAL:
        if t == "*":
            return Optional(None)
        return Optional(_fit(parse_int(t), width, t))
    raise ValueError_(f"cannot match a {kind.value} field in STF")
