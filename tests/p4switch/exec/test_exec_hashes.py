"""Hash algorithms against published check values and hand-computed vectors."""

import random

from p4switch.exec import hashes, memo
from p4switch.exec.bits import bytes_of_bits, sat_add_s, sat_sub_s, shr_s, to_signed


def test_crc16_is_crc16_arc():
    assert hashes.crc16(b"123456789") == 0xBB3D  # CRC-16/ARC check value
    assert hashes.algorithm("crc16_custom")(b"123456789") == 0xBB3D


def test_crc32_is_the_ethernet_crc():
    assert hashes.crc32(b"123456789") == 0xCBF43926
    assert hashes.crc32(b"") == 0


def test_csum16_is_the_internet_checksum():
    hdr = bytes.fromhex("450000730000400040110000" "c0a80001c0a800c7")
    assert hashes.csum16(hdr) == 0xB861  # the Wikipedia IPv4 header example, checksum field zeroed
    assert hashes.csum16(b"\x01") == 0xFEFF  # odd byte padded with zero on the right


def test_identity_and_xor16():
    assert hashes.identity(bytes.fromhex("0102030405060708090a")) == 0x0102030405060708
    assert hashes.xor16(bytes.fromhex("12345678ab")) == 0x1234 ^ 0x5678 ^ 0xAB00


def test_hash_with_base_and_zero_max():
    assert hashes.hash_with_base(1000, 5, 7) == 5 + 1000 % 7
    assert hashes.hash_with_base(1000, 5, 0) == 5


def test_random_algorithm_is_reproducible():
    a, b = hashes.algorithm("random", seed=3), hashes.algorithm("random", seed=3)
    assert [a(b"") for _ in range(3)] == [b(b"") for _ in range(3)]


def test_bit_packing_pads_at_the_end():
    assert bytes_of_bits([(0xA, 4), (0x1, 1)]) == bytes([0b10101000])
    assert bytes_of_bits([(0x0800, 16)]) == b"\x08\x00"


def test_signed_helpers():
    assert to_signed(0xFF, 8) == -1
    assert sat_add_s(0x7F, 0x01, 8) == 0x7F
    assert sat_sub_s(0x80, 0x01, 8) == 0x80
    assert shr_s(0xF0, 2, 8) == 0xFC


def test_field_hash_is_the_hash_of_the_packed_fields_and_remembers_it(monkeypatch):
    """Remembering changes no result: fields left out (None value or width) as BMv2 leaves
    them out, the same values hashing the same on every call; the memo is bounded."""
    monkeypatch.setattr(memo, "ENTRIES", 8)
    fh = hashes.FieldHash(hashes.crc32, [16, None, 8, 4])
    rng = random.Random(5)
    for _ in range(200):
        a, b = rng.getrandbits(16), rng.getrandbits(8)
        if rng.random() < 0.3:
            a = None
        values = (a, rng.getrandbits(32), b, 0xF)
        want = hashes.crc32(bytes_of_bits([(v, w) for v, w in ((a, 16), (b, 8), (0xF, 4)) if v is not None]))
        assert fh(values) == want
        assert fh(values) == want
        assert len(fh.memo) <= 8


def test_field_hash_never_remembers_random():
    fh = hashes.FieldHash(hashes.algorithm("random", seed=1), [8])
    ref = hashes.algorithm("random", seed=1)
    assert [fh((5,)) for _ in range(4)] == [ref(b"\x05") for _ in range(4)]
    assert len(set(fh((5,)) for _ in range(4))) > 1
