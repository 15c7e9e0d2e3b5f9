"""Ethernet framing facts used for line-rate and pacing arithmetic."""

from __future__ import annotations

# Preamble + SFD (8), FCS (4) and inter-frame gap (12): what a frame costs on the wire beyond
# the bytes a raw socket or driver carries. Every serializer (switch port, NIC pacer,
# simulated link) adds it, so rates read as line rates.
WIRE_OVERHEAD_BYTES = 24
