"""INT-MD metadata as fabric.p4 carries it (p4src/include/INT_LAYOUT.md is the contract).

Three jobs: read the INT stack out of a data packet (UDP dport 4792), turn the hop records
into :class:`nicmodel.cc.base.HopInt` for congestion control, and pack/unpack the "INT echo"
the receiving NIC puts after the AETH of its ACKs (1-byte hop count, the 12-byte INT-MD
header, the hops as they were in the stack, newest first). ``push_hop`` / ``strip`` do what
an INT source/transit hop and a sink do to a frame, for simulated switches and tests.
``parse_report`` reads the telemetry reports a sink sends to the collector (p4src/README.md,
"INT report format"), for tests; ``report_hops`` only their hop records, in place
(``report_stack`` finds them; the controller's collector reads their fields there too).
"""

from __future__ import annotations

import struct
from typing import Final, NamedTuple

from librt.strings import BytesWriter, read_i16_be, read_i32_be, write_i16_be, write_i32_be
from mypy_extensions import i64

from netbase import ipv4
from nicmodel.cc.base import HopInt

INT_UDP_PORT: Final = 4792
SHIM_LEN: Final = 4
MD_LEN: Final = 12
HOP_WORDS: Final = 8
HOP_LEN: Final = 4 * HOP_WORDS
INT_TYPE_MD: Final = 1
NPT_UDP_PORT: Final = 1
MD_VERSION: Final = 2
INSTRUCTIONS: Final = 0xFF00
DOMAIN_ID: Final = 0x0AF1
DEFAULT_MAX_HOPS: Final = 5
# INT-MD ds_flags: the units of the hop records (fabric.p4's time_unit table sets them)
DS_TIME_NS: Final = 0x0001  # timestamps and hop latency in nanoseconds (else microseconds)
DS_QUEUE_BYTES: Final = 0x0002  # queue occupancy in bytes (else packets)
# INT-MD time_scale (INT_LAYOUT.md): timestamp ticks per fabric tick, for a target whose clock
# runs faster than the fabric it models (BMv2 stamps wall-clock time while the live fabric runs
# D times slower). 16 bits: mantissa in bits 11..0, exponent in bits 15..12, scale = m << e;
# 0 means 1. Rounded to the nearest such value: within 1/4096 of any scale up to 2^27.
SCALE_MANTISSA_BITS: Final = 12
_SCALE_MANTISSA_MAX: Final = (1 << SCALE_MANTISSA_BITS) - 1
_SCALE_EXP_MAX: Final = 15

REPORT_HDR_LEN: Final = 16
REPORT_VERSION: Final = 1
REPORT_KIND_INT: Final = 1

_SHIM: Final = struct.Struct("!BBH")
_REPORT: Final = struct.Struct("!BBHIII")
# a hop record: switch id, ingress port, egress port, hop latency, queue id (8 bits) and
# occupancy (24), ingress and egress timestamps, tx bytes, link rate (INT_LAYOUT.md); the
# readers of received stacks take its fields in place at these offsets
_HOP: Final = struct.Struct("!IHHIIIIII")
HOP_SWITCH_ID: Final = 0
HOP_INGRESS_PORT: Final = 4
HOP_EGRESS_PORT: Final = 6
HOP_LATENCY: Final = 8
HOP_QUEUE: Final = 12
HOP_INGRESS_TS: Final = 16
HOP_EGRESS_TS: Final = 20
HOP_TX_BYTES: Final = 24
HOP_LINK_RATE: Final = 28
_U16: Final = struct.Struct("!H")


def be16(buf: bytes, off: i64) -> int:
    """The big-endian 16-bit field at ``off`` of a received frame: one word read (librt's,
    compiled to C; signed, so masked back), ~27 instructions a call compiled where two byte
    reads took ~48 (a 32-bit field: ~29 where four took ~120) and a struct call ~1,000 (the
    NIC's codec reads its headers with these too). The offset is a machine integer, as the
    read takes it: a caller's ``off + 2`` is then an add, not a tagged-int call converted."""
    return int(read_i16_be(buf, off)) & 0xFFFF


def be32(buf: bytes, off: i64) -> int:
    """The big-endian 32-bit field at ``off`` of a received frame (as ``be16``)."""
    return int(read_i32_be(buf, off)) & 0xFFFFFFFF


def put16(out: BytesWriter, value: int) -> None:
    """Write the unsigned 16-bit ``value`` big-endian to ``out`` (librt's writer is signed:
    the value is moved into its range by flipping and subtracting the sign bit)."""
    write_i16_be(out, (value ^ 0x8000) - 0x8000)


def put32(out: BytesWriter, value: int) -> None:
    """Write the unsigned 32-bit ``value`` big-endian to ``out`` (as ``put16``)."""
    write_i32_be(out, (value ^ 0x80000000) - 0x80000000)


def _u16(buf: bytes | bytearray, off: int) -> int:
    """``be16`` of a frame being edited (a bytearray too: compiled, a generic index)."""
    return buf[off] << 8 | buf[off + 1]


class IntStack:
    """The INT carried by one data packet. A class, not a named tuple as ``HopInt``: compiled,
    a named tuple is made by a Python call of its class (~4,400 instructions), this one by a C
    call, once a data packet a NIC receives."""

    __slots__ = ("orig_dport", "md_header", "hops_raw", "hop_ml")

    def __init__(self, orig_dport: int, md_header: bytes, hops_raw: bytes, hop_ml: int) -> None:
        self.orig_dport = orig_dport
        self.md_header = md_header  # the 12-byte INT-MD header as received
        self.hops_raw = hops_raw  # per-hop metadata, newest hop first
        self.hop_ml = hop_ml  # words per hop

    def __repr__(self) -> str:
        return (f"IntStack(orig_dport={self.orig_dport}, md_header={self.md_header!r}, "
                f"hops_raw={self.hops_raw!r}, hop_ml={self.hop_ml})")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, IntStack) and self.orig_dport == other.orig_dport
                and self.md_header == other.md_header and self.hops_raw == other.hops_raw
                and self.hop_ml == other.hop_ml)

    @property
    def nbytes(self) -> int:
        """Bytes the INT added to the packet (shim, header, hops)."""
        return SHIM_LEN + MD_LEN + len(self.hops_raw)

    @property
    def hop_count(self) -> int:
        return len(self.hops_raw) // (4 * self.hop_ml)

    def hops(self) -> tuple[HopInt, ...]:
        """Hop records, source-side hop first (the order congestion control wants)."""
        return decode_hops(self.hops_raw, self.hop_ml, ds_flags(self.md_header), time_scale_field(self.md_header))


def ds_flags(md: bytes, off: int = 0) -> int:
    """The ds_flags of the 12-byte INT-MD header at ``off`` of ``md``."""
    return be16(md, off + 10)


def time_scale_field(md: bytes, off: int = 0) -> int:
    """The time_scale field of the 12-byte INT-MD header at ``off`` of ``md``, as carried (see
    :func:`decode_time_scale`)."""
    return be16(md, off + 6)


def encode_time_scale(scale: float) -> int:
    """The 16-bit time_scale field for ``scale`` timestamp ticks per fabric tick (>= 1)."""
    if not 1 <= scale <= _SCALE_MANTISSA_MAX << _SCALE_EXP_MAX:
        raise ValueError(f"INT time scale {scale:g} is outside 1..{_SCALE_MANTISSA_MAX << _SCALE_EXP_MAX}")
    exp = 0
    while round(scale / (1 << exp)) > _SCALE_MANTISSA_MAX:
        exp += 1
    mantissa = round(scale / (1 << exp))
    return 0 if (mantissa, exp) == (1, 0) else exp << SCALE_MANTISSA_BITS | mantissa


def decode_time_scale(field: int) -> int:
    """Timestamp ticks per fabric tick that a time_scale field carries."""
    return ((field & _SCALE_MANTISSA_MAX) << (field >> SCALE_MANTISSA_BITS)) or 1


def tick_ns(flags: int, scale_field: int) -> float:
    """One tick of the hop records' timestamps and latency in fabric ns, from the INT-MD
    header's ds_flags ``flags`` and time_scale ``scale_field``: 1 ns (ds_flags bit 0) or 1 us
    of the target's clock, which runs the time scale times faster than fabric time."""
    return (1 if flags & DS_TIME_NS else 1000) / decode_time_scale(scale_field)


def decode_hops(raw: bytes, hop_ml: int = HOP_WORDS, flags: int = 0, scale_field: int = 0) -> tuple[HopInt, ...]:
    """HopInt tuples (source-side first) from a newest-first hop stack, in the units the
    INT-MD header's ds_flags ``flags`` and time_scale ``scale_field`` give: a tick is
    1 ns (ds_flags bit 0) or 1 us of the target's clock, that clock runs the time scale
    times faster than fabric time, and ``HopInt.ts_unit_ns`` is a tick in fabric ns."""
    size = 4 * hop_ml
    if hop_ml < HOP_WORDS or len(raw) % size:
        raise ValueError(f"hop stack of {len(raw)} bytes with {hop_ml} words per hop")
    unit = tick_ns(flags, scale_field)
    in_bytes = bool(flags & DS_QUEUE_BYTES)
    # the record's fields read in place (words past its 8 are padding), the newest record first
    # on the wire, so the source side's is the last: compiled, a word read is a C call, where
    # ``_HOP.iter_unpack`` made a tuple of ints of each record
    out = []
    off = len(raw) - size
    while off >= 0:
        q = be32(raw, off + HOP_QUEUE)
        out.append(HopInt(be32(raw, off + HOP_SWITCH_ID), be16(raw, off + HOP_INGRESS_PORT),
                          be16(raw, off + HOP_EGRESS_PORT), be32(raw, off + HOP_LATENCY), q >> 24, q & 0xFFFFFF,
                          be32(raw, off + HOP_INGRESS_TS), be32(raw, off + HOP_EGRESS_TS),
                          be32(raw, off + HOP_TX_BYTES), be32(raw, off + HOP_LINK_RATE), unit, in_bytes))
        off -= size
    return tuple(out)


def encode_hop(h: HopInt) -> bytes:
    """One 32-byte per-hop record."""
    return _HOP.pack(h.switch_id & 0xFFFFFFFF, h.ingress_port, h.egress_port,
                     h.hop_latency_us & 0xFFFFFFFF,
                     ((h.queue_id & 0xFF) << 24) | (h.qdepth_pkts & 0xFFFFFF),
                     h.ingress_ts_us & 0xFFFFFFFF, h.egress_ts_us & 0xFFFFFFFF,
                     h.tx_bytes & 0xFFFFFFFF, h.link_rate_mbps & 0xFFFFFFFF)


def parse_stack(buf: bytes, off: int, end: int) -> tuple[IntStack, int]:
    """Parse shim + INT-MD header + hops starting at ``off`` (right after the UDP header);
    returns the stack and the offset of what follows (the BTH). Raises ValueError."""
    dport, hop_ml, after = _stack_bounds(buf, off, end)
    md = off + SHIM_LEN
    return IntStack(dport, buf[md:md + MD_LEN], buf[md + MD_LEN:after], hop_ml), after


def _stack_bounds(buf: bytes, off: int, end: int) -> tuple[int, int, int]:
    """Check the shim, INT-MD header and hop stack at ``off`` (as :func:`parse_stack`);
    returns the original UDP port, the words per hop and the offset after the hops."""
    if end - off < SHIM_LEN + MD_LEN:
        raise ValueError("truncated INT header")
    tn, length, dport = buf[off], buf[off + 1], be16(buf, off + 2)
    if tn >> 4 != INT_TYPE_MD:
        raise ValueError(f"INT shim type {tn >> 4} is not INT-MD")
    if (tn >> 2) & 3 != NPT_UDP_PORT:
        raise ValueError("INT shim does not carry the original UDP port")
    nbytes = 4 * length
    if nbytes < MD_LEN or end - off - SHIM_LEN < nbytes:
        raise ValueError(f"INT length {length} words does not fit the packet")
    md = off + SHIM_LEN
    if buf[md] >> 4 != MD_VERSION:
        raise ValueError(f"INT-MD version {buf[md] >> 4}")
    hop_ml = buf[md + 2] & 0x1F
    hops_len = nbytes - MD_LEN
    if hop_ml < HOP_WORDS or hops_len % (4 * hop_ml):
        raise ValueError(f"hop stack of {hops_len} bytes with {hop_ml} words per hop")
    return dport, hop_ml, md + nbytes


def md_header(remaining_hops: int = DEFAULT_MAX_HOPS, exceeded: bool = False) -> bytes:
    """A fresh INT-MD header as an INT source writes it."""
    b0 = (MD_VERSION << 4) | (exceeded << 2)
    return bytes((b0, 0, HOP_WORDS, remaining_hops & 0xFF)) + struct.pack(
        "!HHHH", INSTRUCTIONS, 0, DOMAIN_ID, 0)


# each byte value as a bytes object (compiled, ``bytes((n,))`` calls the type: a generic call)
_BYTES: Final = [bytes((n,)) for n in range(256)]


def encode_echo(stack: IntStack) -> bytes:
    """The INT echo placed after an ACK's AETH."""
    return _BYTES[stack.hop_count] + stack.md_header + stack.hops_raw


def decode_echo(buf: bytes, off: int) -> tuple[tuple[HopInt, ...], int]:
    """Hops (source-side first) of an INT echo at ``off``, and the offset after it."""
    if len(buf) < off + 1 + MD_LEN:
        raise ValueError("truncated INT echo")
    count = buf[off]
    md = buf[off + 1:off + 1 + MD_LEN]
    hop_ml = md[2] & 0x1F
    start = off + 1 + MD_LEN
    stop = start + count * 4 * hop_ml
    if len(buf) < stop:
        raise ValueError("truncated INT echo hops")
    return decode_hops(buf[start:stop], hop_ml, ds_flags(md), time_scale_field(md)), stop


# --- what switches do to a frame (simulated fabric, tests) -------------------------------

_ETH_HLEN: Final = 14


def _ip_udp(frame: bytes, eth: int = 0) -> tuple[int, int]:
    """Offsets of the IPv4 and UDP headers of the Ethernet frame at ``eth`` (``bytes``: its
    reads are native, where ``bytes | bytearray`` made each a generic index, ~1,700
    instructions a call)."""
    ip = eth + _ETH_HLEN
    if len(frame) < ip + 28 or be16(frame, eth + 12) != 0x0800 or frame[ip + 9] != 17:
        raise ValueError("not an IPv4/UDP frame")
    return ip, ip + (frame[ip] & 0x0F) * 4


def _grow(frame: bytearray, ip: int, udp: int, delta: int) -> None:
    total = _u16(frame, ip + 2) + delta
    frame[ip + 2:ip + 4] = _U16.pack(total)
    frame[udp + 4:udp + 6] = _U16.pack(_u16(frame, udp + 4) + delta)
    ipv4.set_checksum(frame, ip)


def push_hop(frame: bytes, hop: HopInt, max_hops: int = DEFAULT_MAX_HOPS) -> bytes:
    """Add one hop's metadata the way an INT source (first hop: inserts shim and header,
    moves the UDP port into the shim) or transit hop does. When the remaining hop count is
    0 the hop only sets the E bit, as INT-MD specifies. ``frame`` itself is not changed."""
    ip, udp = _ip_udp(frame)
    out = bytearray(frame)
    dport = _u16(out, udp + 2)
    pos = udp + 8
    grown = 0  # lengths and the IP checksum are fixed once, at the end
    if dport != INT_UDP_PORT:
        shim = _SHIM.pack((INT_TYPE_MD << 4) | (NPT_UDP_PORT << 2), MD_LEN // 4, dport)
        out[pos:pos] = shim + md_header(max_hops)
        out[udp + 2:udp + 4] = _U16.pack(INT_UDP_PORT)
        grown = SHIM_LEN + MD_LEN
    md = pos + SHIM_LEN
    remaining = out[md + 3]
    if remaining == 0:
        out[md] |= 0x04
    else:
        out[md + 3] = remaining - 1
        out[md + MD_LEN:md + MD_LEN] = encode_hop(hop)
        out[pos + 1] += HOP_WORDS
        grown += HOP_LEN
    if grown:
        _grow(out, ip, udp, grown)
    return bytes(out)


def strip(frame: bytes) -> tuple[bytes, IntStack | None]:
    """What an INT sink does: remove shim, header and hops, restore the UDP port.
    Returns the frame and the removed stack (None when the frame carried no INT)."""
    ip, udp = _ip_udp(frame)
    if _u16(frame, udp + 2) != INT_UDP_PORT:
        return frame, None
    total = _u16(frame, ip + 2)
    stack, after = parse_stack(frame, udp + 8, ip + total)
    out = bytearray(frame)
    del out[udp + 8:after]
    out[udp + 2:udp + 4] = _U16.pack(stack.orig_dport)
    _grow(out, ip, udp, -stack.nbytes)
    return bytes(out), stack


# --- telemetry reports (sink -> collector) ------------------------------------------------


class Report(NamedTuple):
    """One INT report: the sink's report header and the reported packet (a named tuple)."""

    hop_count: int  # hop records in the inner stack, the sink's own included
    switch_id: int  # the sink
    seq_no: int  # per sink, from 0
    ingress_ts_us: int  # low 32 bits of the packet's ingress time at the sink
    inner: bytes  # the packet as it reached the sink, with the sink's hop, cut after its BTH

    def stack(self) -> IntStack:
        """The INT stack the reported packet carried."""
        return parse_stack(self.inner, _reported_int(self.inner, 0), len(self.inner))[0]


def parse_report(frame: bytes) -> Report:
    """A report frame: Ethernet / IPv4 / UDP (to the port the control plane chose) / 16-byte
    report header / inner packet. Raises ValueError for anything else."""
    off = _report_header(frame)
    _, hops, _, switch_id, seq, ts = _REPORT.unpack_from(frame, off)
    return Report(hops, switch_id, seq, ts, bytes(frame[off + REPORT_HDR_LEN:]))


def report_hops(frame: bytes) -> tuple[HopInt, ...]:
    """Hop records (source-side first; the sink's own record last) of one report frame: what
    ``parse_report(frame).stack().hops()`` gives, read in place (no Report, no IntStack, no
    copy of the inner packet). Raises ValueError where those do, and when the header's hop
    count is not the stack's."""
    md, hop_ml, after = report_stack(frame)
    return decode_hops(frame[md + MD_LEN:after], hop_ml, ds_flags(frame, md), time_scale_field(frame, md))


def report_stack(frame: bytes) -> tuple[int, int, int]:
    """Where one report frame's hops are, checked: the offset of the reported packet's INT-MD
    header, its words per hop and the offset after its hop stack."""
    header = _report_header(frame)
    hop_count = frame[header + 1]  # the header's second byte (_REPORT)
    off = _reported_int(frame, header + REPORT_HDR_LEN)
    _, hop_ml, after = _stack_bounds(frame, off, len(frame))
    md = off + SHIM_LEN
    carried = (after - md - MD_LEN) // (4 * hop_ml)
    if carried != hop_count:
        raise ValueError(f"report header says {hop_count} hops, the reported packet carries {carried}")
    return md, hop_ml, after


def _report_header(frame: bytes) -> int:
    """Offset of the report header (version/kind, hop count, reserved, switch id, sequence
    number, ingress time: ``_REPORT``), checked; the inner packet follows it."""
    _, udp = _ip_udp(frame)
    off = udp + 8
    if len(frame) < off + REPORT_HDR_LEN:
        raise ValueError("truncated INT report header")
    verkind = frame[off]
    if verkind != (REPORT_VERSION << 4 | REPORT_KIND_INT):
        raise ValueError(f"report version/kind {verkind:#04x} is not INT-MD version 1")
    return off


def _reported_int(buf: bytes, eth: int) -> int:
    """Offset of the INT shim in the reported packet at ``eth`` (a report's inner packet)."""
    _, udp = _ip_udp(buf, eth)
    if be16(buf, udp + 2) != INT_UDP_PORT:
        raise ValueError("the reported packet carries no INT")
    return udp + 8
