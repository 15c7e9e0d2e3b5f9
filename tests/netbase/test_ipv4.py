"""The IPv4 header checksum against RFC 1071's definition: the 16-bit words summed with
end-around carry, complemented."""

import random
import struct

from netbase.ipv4 import checksum, checksum_at, set_checksum


def rfc1071(header: bytes) -> int:
    s = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def test_checksum_is_rfc_1071s_on_every_kind_of_header():
    rng = random.Random(3)
    headers = [rng.randbytes(rng.choice((20, 24, 40, 60))) for _ in range(20_000)]
    headers += [bytes(20), b"\xff" * 20,  # all words zero; all 0xFFFF (the sum folds to 0xFFFF)
                b"\xff\xfe\x00\x01" + bytes(16), b"\x80\x00\x7f\xff" + bytes(16)]  # sums of exactly 0xFFFF
    assert [checksum(h) for h in headers] == [rfc1071(h) for h in headers]
    # read in place, at the header's offset in a frame (the NIC's receive check)
    assert [checksum_at(b"\x11" * 14 + h + b"\xee" * 3, 14, len(h)) for h in headers] == [rfc1071(h) for h in headers]
    captured = bytes.fromhex("4500003c1c4640004006b1e6ac100a63ac100a0c")  # a real SYN's header
    assert checksum(captured) == 0


def test_set_checksum_leaves_a_header_that_checks():
    frame = bytearray(bytes(14) + bytes.fromhex("4500003c1c4640004006b1e6ac100a63ac100a0c") + b"payload")
    frame[14 + 1] = 0x03  # ECN CE marked: the stored checksum is now wrong
    assert checksum(frame[14:34]) != 0
    set_checksum(frame, 14)
    assert checksum(frame[14:34]) == 0 and frame[14 + 1] == 0x03 and frame[34:] == b"payload"
