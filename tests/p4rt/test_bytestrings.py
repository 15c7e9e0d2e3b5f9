"""P4Runtime binary strings <-> integers (P4Runtime 1.4.1, section 8.3)."""

import grpc
import pytest

from p4rt import bytestrings
from p4rt.errors import P4RuntimeError


def test_any_length_is_accepted_when_the_value_fits():
    """P4Runtime 1.4.1 section 8.3: canonical, padded and longer strings alike."""
    assert bytestrings.to_int(b"\x01", 9, "port") == 1
    assert bytestrings.to_int(b"\x00\x01", 9, "port") == 1
    assert bytestrings.to_int(b"\x00\x00\x01", 9, "port") == 1
    assert bytestrings.to_int(b"\x00\x0a\x00\x00\x01", 32, "addr") == 0x0A000001
    assert bytestrings.canonical(0) == b"\x00"
    assert bytestrings.canonical(0x1234) == b"\x12\x34"
    assert bytestrings.padded(1, 9) == b"\x00\x01"


@pytest.mark.parametrize("data, width, message", [
    (b"", 8, "empty"),
    (b"\x02\x00", 9, "does not fit in 9 bits"),
    (b"\x00\x02\x00", 9, "does not fit in 9 bits"),
    (b"\x01\x00\x00\x00\x00", 32, "does not fit in 32 bits"),
])
def test_bytestrings_that_do_not_fit_are_out_of_range(data, width, message):
    with pytest.raises(P4RuntimeError, match=message) as info:
        bytestrings.to_int(data, width, "f")
    assert info.value.code == grpc.StatusCode.OUT_OF_RANGE
