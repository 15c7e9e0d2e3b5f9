"""STF key values: the forms p4c's STF files use, turned into entries.py matches."""

import pytest

from p4rt.entries import Exact, Lpm, MatchKind, Optional, Range, Ternary
from p4switch.stf.values import ValueError_, parse_int, parse_match


def test_numbers():
    assert parse_int("0x0A") == 10 and parse_int("0b101") == 5 and parse_int("42") == 42
    with pytest.raises(ValueError_):
        parse_int("0xZZ")


def test_ternary_forms():
    assert parse_match("0x0800&&&0xFF00", MatchKind.TERNARY, 16) == Ternary(0x0800, 0xFF00)
    assert parse_match("0x0a**", MatchKind.TERNARY, 16) == Ternary(0x0A00, 0xFF00)
    assert parse_match("0b1*0", MatchKind.TERNARY, 3) == Ternary(0b100, 0b101)
    assert parse_match("7", MatchKind.TERNARY, 8) == Ternary(7, 0xFF)


def test_lpm_range_optional_exact_forms():
    assert parse_match("0x0A000001/8", MatchKind.LPM, 32) == Lpm(0x0A000000, 8)
    assert parse_match("0x0A0B****", MatchKind.LPM, 32) == Lpm(0x0A0B0000, 16)
    assert parse_match("10->20", MatchKind.RANGE, 16) == Range(10, 20)
    assert parse_match("0x10..0x20", MatchKind.RANGE, 16) == Range(16, 32)
    assert parse_match("5", MatchKind.RANGE, 16) == Range(5, 5)
    assert parse_match("*", MatchKind.OPTIONAL, 8) == Optional(None)
    assert parse_match("0xFF", MatchKind.EXACT, 8) == Exact(0xFF)
    with pytest.raises(ValueError_):
        parse_match("0x1FF", MatchKind.EXACT, 8)
