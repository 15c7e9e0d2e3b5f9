"""Ethernet framing facts used for line-rate and pacing arithmetic."""

from __future__ import annotations

from typing import Final

# Preamble + SFD (8), FCS (4) and inter-frame gap (12): what a frame costs on the wire beyond
# the bytes a raw socket or driver carries. Every serializer (switch port, NIC pacer,
# simulated link) adds it, so rates read as line rates.
WIRE_OVERHEAD_BYTES: Final = 24


def wire_time_ns(nbytes: int, rate_bps: float) -> float:
    """Exact time (ns) a frame of ``nbytes`` occupies a link of ``rate_bps``, wire overhead
    included: the one formula behind the NIC's port and pacer and the simulated link.
    Callers round as their clock needs (a pacer floors, a simulated wire never returns 0)."""
    return (nbytes + WIRE_OVERHEAD_BYTES) * 8e9 / rate_bps
