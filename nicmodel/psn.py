"""Packet sequence number arithmetic.

The wire carries 24-bit PSNs that wrap; the transport keeps *absolute* sequence numbers
(plain Python ints that never wrap) so that every comparison inside the core is ordinary
integer comparison. A wire PSN is turned back into an absolute one relative to a reference
the receiver already knows (its expected PSN, or the sender's oldest unacknowledged PSN):
the nearest absolute number with those low 24 bits, i.e. within half the PSN space.
"""

from __future__ import annotations

from typing import Final

PSN_BITS: Final = 24
PSN_MOD: Final = 1 << PSN_BITS
PSN_MASK: Final = PSN_MOD - 1
_HALF: Final = PSN_MOD >> 1
PSN_WINDOW = _HALF  # most packets a requester may have unacknowledged: half the PSN space (IBA vol. 1 ch. 9.7)


def to_wire(seq: int) -> int:
    """The 24-bit PSN carried in the BTH for absolute sequence number ``seq``."""
    return seq & PSN_MASK


def unwrap(psn: int, ref: int) -> int:
    """The absolute sequence number closest to ``ref`` whose low 24 bits are ``psn``."""
    d = (psn - ref) & PSN_MASK
    if d >= _HALF:
        d -= PSN_MOD
    return ref + d


def psn_add(psn: int, n: int) -> int:
    """``psn + n`` modulo 2^24."""
    return (psn + n) & PSN_MASK


def psn_diff(a: int, b: int) -> int:
    """Signed distance ``a - b`` between two wire PSNs, in [-2^23, 2^23)."""
    d = (a - b) & PSN_MASK
    return d - PSN_MOD if d >= _HALF else d
