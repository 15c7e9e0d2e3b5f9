"""RoCEv2 wire format: the one place that packs and parses our frames.

Ethernet / IPv4 (DSCP, ECN) / UDP dport 4791 / BTH / [RETH] [ImmDt] | [AETH [ext]] / payload
/ pad / ICRC, as the InfiniBand Architecture spec (vol. 1 ch. 9) and its RoCEv2 annex (A17)
lay them out; CNP is BTH opcode 0x81 followed by 16 reserved bytes. Everything is packed with
``struct`` because this is the transport's hot path. Layouts were checked against
``scapy.contrib.roce`` and tshark's InfiniBand dissector (tests/nicmodel/test_nic_wire.py).

ICRC (IBA 9.8.1 with the RoCEv2 annex): CRC-32 (the Ethernet polynomial, zlib's crc32) over
eight 0xFF bytes standing for the absent LRH, the IPv4 header with TOS, TTL and header
checksum set to all ones, the UDP header with the checksum set to all ones, the BTH with
its reserved/FECN/BECN byte (byte 4) set to all ones, and everything after the BTH up to the
ICRC. It is sent least significant byte first (that is how NICs, scapy and Wireshark put it).

Our additions, carried in bits the standard leaves reserved so that standard dissectors still
read the packet (documented fully in nicmodel/README.md):

* ACK extension flags in the 7 reserved bits of BTH byte 8 (``resv7``): ``ACK_EXT_INT``
  (0x01) = an INT echo follows the AETH (format in p4src/include/INT_LAYOUT.md);
  ``ACK_EXT_SACK`` (0x02) = a selective-ACK block follows (after the INT echo if both);
  ``ACK_EXT_DSACK`` (0x04) = a duplicate-report block follows (after the SACK block if both):
  one byte reserved, then the 24-bit PSN of a data packet received twice (as TCP's D-SACK,
  RFC 2883: the sender learns that its resend of that PSN was spurious).
* Selective-ACK block (selective-repeat queue pairs)::

      0               1               2               3
     +---------------+-----------------------------------------------+
     | words (8)     | base PSN (24) = first PSN not yet received     |
     +---------------+-----------------------------------------------+
     | bitmap: words x 32 bits, one big-endian unsigned integer       |
     +---------------------------------------------------------------+

  Bit j of the bitmap (value 2**j of the integer) says PSN base+1+j has been received.
  The base equals the ACK's BTH PSN + 1 (the cumulative point); repeating it keeps the
  block self-contained. ``words`` is 1..255; the receiver sends as few as cover its
  highest out-of-order PSN.
* BECN set in an ACK means the acknowledged data carried CE (ECN echo), as IBA uses BECN.
"""

from __future__ import annotations

import struct
from bisect import bisect_right
from enum import IntEnum
from typing import Final

from librt.strings import BytesWriter, read_i16_be, read_i32_be, read_i32_le, write_i16_be, write_i32_be, write_i32_le
from mypy_extensions import i64
from zlib_ng import zlib_ng

from netbase.ipv4 import checksum_at as ipv4_checksum_at
from nicmodel import int_md
from nicmodel.int_md import be16, be32, put16, put32

ROCE_UDP_PORT: Final = 4791
ETH_P_IPV4: Final = 0x0800
ETH_P_VLAN: Final = 0x8100
ETH_HLEN: Final = 14
IPV4_HLEN: Final = 20
UDP_HLEN: Final = 8
BTH_LEN: Final = 12
RETH_LEN: Final = 16
AETH_LEN: Final = 4
IMM_LEN: Final = 4
ICRC_LEN: Final = 4
CNP_PAD_LEN: Final = 16
ECN_NOT_ECT: Final = 0
ECN_ECT1: Final = 1
ECN_ECT0: Final = 2
ECN_CE: Final = 3
DEFAULT_PKEY: Final = 0xFFFF
BROADCAST_MAC: Final = b"\xff" * 6

ACK_EXT_INT: Final = 0x01
ACK_EXT_SACK: Final = 0x02
ACK_EXT_DSACK: Final = 0x04


class Opcode(IntEnum):
    """BTH opcodes of the RC transport (IBA table 37) and the RoCEv2 CNP."""

    SEND_FIRST = 0x00
    SEND_MIDDLE = 0x01
    SEND_LAST = 0x02
    SEND_LAST_WITH_IMMEDIATE = 0x03
    SEND_ONLY = 0x04
    SEND_ONLY_WITH_IMMEDIATE = 0x05
    RDMA_WRITE_FIRST = 0x06
    RDMA_WRITE_MIDDLE = 0x07
    RDMA_WRITE_LAST = 0x08
    RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09
    RDMA_WRITE_ONLY = 0x0A
    RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B
    ACKNOWLEDGE = 0x11
    CNP = 0x81


OP_SEND: Final = frozenset(range(0x00, 0x06))
OP_WRITE: Final = frozenset(range(0x06, 0x0C))
OP_DATA: Final = OP_SEND | OP_WRITE
OP_FIRST: Final = frozenset({0x00, 0x06})
OP_MIDDLE: Final = frozenset({0x01, 0x07})
OP_LAST: Final = frozenset({0x02, 0x03, 0x08, 0x09})
OP_ONLY: Final = frozenset({0x04, 0x05, 0x0A, 0x0B})
OP_STARTS: Final = OP_FIRST | OP_ONLY  # a message begins with this packet
OP_ENDS: Final = OP_LAST | OP_ONLY  # a message ends with this packet
OP_HAS_RETH: Final = frozenset({0x06, 0x0A, 0x0B})
OP_HAS_IMM: Final = frozenset({0x03, 0x05, 0x09, 0x0B})

# (first, middle, last, only) opcodes per message kind, without and with immediate data.
SEND_OPS: Final = (0x00, 0x01, 0x02, 0x04)
SEND_IMM_OPS: Final = (0x00, 0x01, 0x03, 0x05)
WRITE_OPS: Final = (0x06, 0x07, 0x08, 0x0A)
WRITE_IMM_OPS: Final = (0x06, 0x07, 0x09, 0x0B)

# AETH syndrome (IBA 9.7.5.1): bits 6..5 say ACK (00), RNR NAK (01) or NAK (11).
SYN_KIND_MASK: Final = 0x60
SYN_ACK: Final = 0x00
SYN_RNR: Final = 0x20
SYN_NAK: Final = 0x60
NAK_PSN_SEQUENCE: Final = 0
NAK_INVALID_REQUEST: Final = 1
NAK_REMOTE_ACCESS: Final = 2
NAK_REMOTE_OPERATIONAL: Final = 3
CREDITS_INVALID: Final = 0x1F  # "no end-to-end credit information"

# End-to-end credit encoding (IBA table 45): code -> number of receive WQEs.
CREDIT_TABLE: Final = (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512,
                768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768)
# RNR NAK timer encoding (IBA table 46): code -> minimum wait in nanoseconds.
RNR_TIMER_NS: Final = (655_360_000, 10_000, 20_000, 30_000, 40_000, 60_000, 80_000, 120_000,
                160_000, 240_000, 320_000, 480_000, 640_000, 960_000, 1_280_000, 1_920_000,
                2_560_000, 3_840_000, 5_120_000, 7_680_000, 10_240_000, 15_360_000,
                20_480_000, 30_720_000, 40_960_000, 61_440_000, 81_920_000, 122_880_000,
                163_840_000, 245_760_000, 327_680_000, 491_520_000)

_ETH: Final = struct.Struct("!6s6sH")
_LRH_STANDIN: Final = b"\xff" * 8
# zlib-ng's CRC-32 (carry-less multiply): 392 -> 62 ns on a 1 KiB payload against zlib's; compiled,
# a module's function is a look-up by name per call (four a data packet), a Final one is not
_crc32: Final = zlib_ng.crc32
_LRH_CRC: Final = _crc32(_LRH_STANDIN)  # the ICRC's running value after the LRH stand-in
_CNP_PAD: Final = bytes(CNP_PAD_LEN)
_IP_HEAD_MASKED: Final = b"\x45\xff"  # version and IHL, then the TOS masked (as icrc() masks it)


# Reasons that mean "not RoCE at all": the host's own traffic (TCP, ARP, other UDP), which a
# real RNIC hands to the kernel's network device rather than dropping (the NIC model's kernel
# sees the same frames on its interface and takes them).
HOST_STACK_REASONS: Final = frozenset({"unknown_ethertype", "not_udp", "not_roce"})


class Malformed(Exception):
    """A frame we cannot accept; ``reason`` is the drop-counter key."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def encode_credits(available: int) -> int:
    """Largest credit code whose value does not exceed ``available`` (>= 0) receive WQEs: one
    C bisection of the ascending table (a search written out boxed an index a step)."""
    return bisect_right(CREDIT_TABLE, available) - 1


def rnr_code_for(ns: int) -> int:
    """Smallest RNR timer code (1..31) that waits at least ``ns`` (code 0 is the longest)."""
    for code in range(1, 32):
        if RNR_TIMER_NS[code] >= ns:
            return code
    return 0


def _put_udp(out: BytesWriter, sport: int, length: int, checksum: int) -> None:
    """A RoCEv2 packet's UDP header (destination port 4791) written to ``out``."""
    put16(out, sport)
    put16(out, ROCE_UDP_PORT)
    put16(out, length)
    put16(out, checksum)


def icrc(frame: bytes, ip_off: int, ihl: int, bth_off: int, end: int, grown: int = 0) -> int:
    """ICRC of the RoCEv2 packet in ``frame`` (its IPv4 header at ``ip_off``, ``ihl`` bytes
    long, then UDP; its BTH at ``bth_off``; the ICRC at ``end``) as its sender built it: an INT
    stack of ``grown`` bytes between the UDP header and the BTH left out, the IPv4 total length
    and UDP length less as much, the UDP port RoCEv2's. Covered: a Local Route Header of all
    ones, the headers with their variant fields all ones (IBA A17.8.3: IPv4 TOS, TTL and
    checksum, the UDP checksum, the BTH's reserved byte), written into one ``BytesWriter``,
    then the rest of the packet. The frame's words are copied as words (a slice of them was a
    bytes object made and freed, ~200 instructions, four a frame)."""
    udp = ip_off + ihl
    m = BytesWriter()
    m.append(frame[ip_off])
    m.append(0xFF)  # TOS
    put16(m, be16(frame, ip_off + 2) - grown)
    write_i32_be(m, read_i32_be(frame, ip_off + 4))  # identification, flags, fragment offset
    m.append(0xFF)  # TTL
    m.append(frame[ip_off + 9])
    put16(m, 0xFFFF)  # header checksum
    for at in range(ip_off + 12, udp, 4):  # addresses (and options: whole words)
        write_i32_be(m, read_i32_be(frame, at))
    _put_udp(m, be16(frame, udp), be16(frame, udp + 4) - grown, 0xFFFF)  # the checksum masked
    write_i32_be(m, read_i32_be(frame, bth_off))
    m.append(0xFF)  # the BTH's reserved byte
    m.append(frame[bth_off + 5])  # the destination QP, then the PSN's word
    write_i16_be(m, read_i16_be(frame, bth_off + 6))
    write_i32_be(m, read_i32_be(frame, bth_off + 8))
    return _crc32(frame[bth_off + BTH_LEN:end], _crc32(m.getvalue(), _LRH_CRC))


def pack_bth(opcode: int, dqpn: int, psn: int, *, se: bool = False, pad: int = 0,
             pkey: int = DEFAULT_PKEY, fecn: bool = False, becn: bool = False,
             ackreq: bool = False, resv7: int = 0, migreq: bool = False) -> bytes:
    """Base Transport Header (IBA 9.2), transport header version 0, written with librt's writer
    (compiled, a ``struct`` pack is a method call by name, ~1,000 instructions, every frame a NIC
    sends)."""
    out = BytesWriter()
    out.append(opcode)
    out.append((se << 7) | (migreq << 6) | ((pad & 3) << 4))
    put16(out, pkey)
    put32(out, (fecn << 31) | (becn << 30) | (dqpn & 0xFFFFFF))
    put32(out, (ackreq << 31) | ((resv7 & 0x7F) << 24) | (psn & 0xFFFFFF))
    return out.getvalue()


def pack_u32(value: int) -> bytes:
    """The unsigned 32-bit ``value`` big-endian, as 4 bytes of their own (an ACK's AETH, its
    SACK block's first word, an ImmDt)."""
    out = BytesWriter()
    put32(out, value)
    return out.getvalue()


def pack_reth(va: int, rkey: int, dma_len: int) -> bytes:
    """RDMA Extended Transport Header: virtual address, R_Key, DMA length (written as
    ``pack_bth``: a struct's pack is a method call by name, every message's first packet)."""
    out = BytesWriter()
    put32(out, va >> 32)
    put32(out, va & 0xFFFFFFFF)
    put32(out, rkey)
    put32(out, dma_len)
    return out.getvalue()


def pack_aeth(syndrome: int, msn: int) -> bytes:
    """ACK Extended Transport Header: syndrome and 24-bit message sequence number."""
    return pack_u32(((syndrome & 0xFF) << 24) | (msn & 0xFFFFFF))


def pack_sack(base_psn: int, bitmap: int) -> bytes:
    """Selective-ACK block (see the module docstring); ``bitmap`` bit j = PSN base+1+j."""
    words = max(1, (bitmap.bit_length() + 31) // 32)
    if words > 255:
        raise ValueError("SACK bitmap longer than 255 words")
    return pack_u32((words << 24) | (base_psn & 0xFFFFFF)) + bitmap.to_bytes(4 * words, "big")


def pack_dsack(psn: int) -> bytes:
    """Duplicate-report block: the 24-bit PSN of a data packet that arrived twice."""
    return pack_u32(psn & 0xFFFFFF)


def unpack_sack(buf: bytes, off: int) -> tuple[int, int, int]:
    """(base PSN, bitmap, offset after the block) of a selective-ACK block at ``off``."""
    if len(buf) < off + 4:
        raise Malformed("truncated", "SACK block")
    word = be32(buf, off)
    words = word >> 24
    end = off + 4 + 4 * words
    if words == 0 or len(buf) < end:
        raise Malformed("truncated", "SACK bitmap")
    return word & 0xFFFFFF, int.from_bytes(buf[off + 4:end], "big"), end


class FrameTemplate:
    """Pre-packed Ethernet/IPv4/UDP prefix of one flow (source and destination fixed): only
    lengths and the IP checksum change per packet. DF is set and the IP ID is 0 (RFC 6864:
    atomic datagrams), the UDP checksum is 0 as RoCEv2 allows."""

    __slots__ = ("_prefix", "_addrs", "_sport", "_csum_base", "_icrc_ip_tail", "_ip_mid")

    def __init__(self, src_mac: bytes, dst_mac: bytes, src_ip: bytes, dst_ip: bytes,
                 sport: int, dscp: int, ecn: int, ttl: int = 64) -> None:
        tos = ((dscp & 0x3F) << 2) | (ecn & 3)
        self._prefix = _ETH.pack(dst_mac, src_mac, ETH_P_IPV4) + bytes((0x45, tos))  # to the total length
        self._addrs = src_ip + dst_ip
        self._sport = sport
        self._csum_base = (0x4500 | tos) + 0x4000 + (ttl << 8 | 17) + be16(src_ip, 0) + be16(src_ip, 2) \
            + be16(dst_ip, 0) + be16(dst_ip, 2)
        self._ip_mid = b"\x00\x00\x40\x00" + bytes((ttl, 17))
        # masked IP header after the total length: id, flags, TTL=ff, proto, csum=ffff, addrs
        # (icrc() masks the same fields; here they are fixed per flow, so build() hashes
        # pre-masked bytes instead of masking every packet: the transmit fast path)
        self._icrc_ip_tail = b"\x00\x00\x40\x00\xff\x11\xff\xff" + src_ip + dst_ip

    def build(self, bth: bytes, ext: bytes, payload: bytes) -> bytes:
        """Frame = prefix / BTH / ``ext`` (RETH, ImmDt, AETH, ...) / payload / ICRC.
        ``payload`` must already include the BTH pad bytes. What the ICRC covers (the
        headers with their variant fields all ones, after the LRH stand-in) and the frame are
        each written into one ``BytesWriter``: compiled, a 16-bit field is a store, where
        packing and concatenating made a bytes object of each piece."""
        udp_len = UDP_HLEN + BTH_LEN + len(ext) + len(payload) + ICRC_LEN
        total = IPV4_HLEN + udp_len
        s = self._csum_base + total
        s = (s & 0xFFFF) + (s >> 16)
        s = (s & 0xFFFF) + (s >> 16)
        masked = BytesWriter()
        masked.write(_IP_HEAD_MASKED)
        put16(masked, total)
        masked.write(self._icrc_ip_tail)
        _put_udp(masked, self._sport, udp_len, 0xFFFF)  # the checksum masked
        masked.write(bth)
        masked[len(masked) - BTH_LEN + 4] = 0xFF  # the BTH's reserved byte
        masked.write(ext)
        crc = _crc32(payload, _crc32(masked.getvalue(), _LRH_CRC))
        frame = BytesWriter()
        frame.write(self._prefix)
        put16(frame, total)
        frame.write(self._ip_mid)
        put16(frame, ~s & 0xFFFF)
        frame.write(self._addrs)
        _put_udp(frame, self._sport, udp_len, 0)  # no UDP checksum
        frame.write(bth)
        frame.write(ext)
        frame.write(payload)
        write_i32_le(frame, (crc ^ 0x80000000) - 0x80000000)  # the ICRC, little-endian, unsigned
        return frame.getvalue()


# Bytes a data packet carries besides its payload and padding: Ethernet, IPv4, UDP, BTH, ICRC
DATA_HEADER_BYTES: Final = ETH_HLEN + IPV4_HLEN + UDP_HLEN + BTH_LEN + ICRC_LEN


def write_frame_bytes(mtu: int) -> int:
    """A full-MTU WRITE frame on the wire (Ethernet to ICRC, without preamble or FCS)."""
    return DATA_HEADER_BYTES + RETH_LEN + mtu


def message_frame_bytes(length: int, mtu: int, write: bool = True, imm: bool = False) -> int:
    """Frame bytes (Ethernet header through ICRC) of all packets of one ``length``-byte
    message at path MTU ``mtu``: payload, per-packet headers, the RETH of a WRITE's first
    packet, immediate data on its last, and the pad of the last packet to 4 bytes. Add
    ``netbase.ethernet.WIRE_OVERHEAD_BYTES`` per packet for time on the wire."""
    npkts = max(1, -(-length // mtu))
    last = length - (npkts - 1) * mtu
    return (length + (-last & 3) + npkts * DATA_HEADER_BYTES + (RETH_LEN if write else 0)
            + (IMM_LEN if imm else 0))


def cnp_body() -> bytes:
    """What follows the BTH of a CNP (RoCEv2 annex A17.9.2): 16 reserved bytes."""
    return _CNP_PAD


class Packet:
    """A parsed RoCEv2 frame (fields as on the wire; ``payload`` without pad and ICRC)."""

    __slots__ = ("frame_len", "src_mac", "src_ip", "dst_ip", "ecn", "dscp", "sport", "opcode", "se", "pad",
                 "pkey", "fecn", "becn", "dqpn", "ackreq", "resv7", "psn", "reth", "imm",
                 "syndrome", "msn", "ext", "payload", "int_stack")

    frame_len: int  # bytes of the whole frame (counters count frames)
    src_mac: bytes
    src_ip: bytes
    dst_ip: bytes
    ecn: int
    dscp: int
    sport: int
    opcode: int
    se: bool
    pad: int
    pkey: int
    fecn: bool
    becn: bool
    dqpn: int
    ackreq: bool
    resv7: int
    psn: int
    reth: tuple[int, int, int] | None  # (va, rkey, dma_len)
    imm: int | None
    syndrome: int | None
    msn: int | None
    ext: bytes  # bytes after the AETH (INT echo, SACK) on ACKs
    payload: bytes
    int_stack: int_md.IntStack | None


def parse(frame: bytes, my_mac: bytes | None = None, my_ip: bytes | None = None,
          verify_icrc: bool = True) -> Packet:
    """Parse an Ethernet frame into a :class:`Packet`, or raise :class:`Malformed` with the
    drop reason. When ``my_mac``/``my_ip`` are given, frames for someone else are rejected
    (``wrong_dst_mac`` / ``wrong_dst_ip``). An INT stack (UDP dport 4792) is parsed and the
    ICRC is checked over the packet as its sender built it (INT removed, port restored)."""
    n = len(frame)
    if n < ETH_HLEN:
        raise Malformed("truncated", "Ethernet header")
    # fields read byte by byte at their offsets (compiled, a byte read is a few instructions;
    # a struct unpack_from ~900 with its tuple of fields)
    dst_mac, src_mac, etype = frame[0:6], frame[6:12], be16(frame, 12)
    off: i64 = ETH_HLEN  # a machine integer: its sums are adds, and reads take it as it is
    if etype == ETH_P_VLAN:
        if n < off + 4:
            raise Malformed("truncated", "VLAN tag")
        etype = be16(frame, off + 2)
        off += 4
    if my_mac is not None and dst_mac != my_mac and dst_mac != BROADCAST_MAC:
        raise Malformed("wrong_dst_mac")
    if etype != ETH_P_IPV4:
        raise Malformed("unknown_ethertype", hex(etype))
    if n < off + IPV4_HLEN:
        raise Malformed("truncated", "IPv4 header")
    vihl, tos, total, proto = frame[off], frame[off + 1], be16(frame, off + 2), frame[off + 9]
    src_ip, dst_ip = frame[off + 12:off + 16], frame[off + 16:off + 20]
    ihl = (vihl & 0x0F) * 4
    if vihl >> 4 != 4 or ihl < IPV4_HLEN:
        raise Malformed("bad_ip_header")
    if total < ihl + UDP_HLEN or off + total > n:
        raise Malformed("truncated", "IPv4 total length")
    if ipv4_checksum_at(frame, off, ihl) != 0:
        raise Malformed("bad_ip_checksum")
    if my_ip is not None and dst_ip != my_ip:
        raise Malformed("wrong_dst_ip")
    if proto != 17:
        raise Malformed("not_udp")
    ip_off = off
    end = off + total  # ignore Ethernet padding after the IP datagram
    off += ihl
    sport, dport, ulen = be16(frame, off), be16(frame, off + 2), be16(frame, off + 4)
    if ulen != total - ihl:
        raise Malformed("bad_udp_length")
    off += UDP_HLEN
    stack = None
    if dport == int_md.INT_UDP_PORT:
        try:
            stack, off = int_md.parse_stack(frame, off, end)
        except ValueError as e:
            raise Malformed("bad_int", str(e)) from None
        dport = stack.orig_dport
    if dport != ROCE_UDP_PORT:
        raise Malformed("not_roce", f"UDP port {dport}")
    if end - off < BTH_LEN + ICRC_LEN:
        raise Malformed("truncated", "BTH")
    bth_off = off
    opcode, b1, pkey, w2, w3 = frame[off], frame[off + 1], be16(frame, off + 2), be32(frame, off + 4), be32(frame, off + 8)
    if b1 & 0x0F:
        raise Malformed("bad_transport_version")
    body_end = end - ICRC_LEN
    if verify_icrc:
        want = icrc(frame, ip_off, ihl, bth_off, body_end, 0 if stack is None else stack.nbytes)
        # little-endian on the wire; librt's read (compiled, a few instructions), signed: masked
        if int(read_i32_le(frame, body_end)) & 0xFFFFFFFF != want:
            raise Malformed("bad_icrc")
    off += BTH_LEN
    p = Packet()
    p.frame_len = n
    p.src_mac = src_mac
    p.src_ip = src_ip
    p.dst_ip = dst_ip
    p.ecn = tos & 3
    p.dscp = tos >> 2
    p.sport = sport
    p.opcode = opcode
    p.se = bool(b1 & 0x80)
    p.pad = (b1 >> 4) & 3
    p.pkey = pkey
    p.fecn = bool(w2 & 0x80000000)
    p.becn = bool(w2 & 0x40000000)
    p.dqpn = w2 & 0xFFFFFF
    p.ackreq = bool(w3 & 0x80000000)
    p.resv7 = (w3 >> 24) & 0x7F
    p.psn = w3 & 0xFFFFFF
    p.reth = None
    p.imm = None
    p.syndrome = None
    p.msn = None
    p.ext = b""
    p.int_stack = stack
    if opcode in OP_DATA:
        if opcode in OP_HAS_RETH:
            if body_end - off < RETH_LEN:
                raise Malformed("truncated", "RETH")
            p.reth = (be32(frame, off) << 32 | be32(frame, off + 4), be32(frame, off + 8), be32(frame, off + 12))
            off += RETH_LEN
        if opcode in OP_HAS_IMM:
            if body_end - off < IMM_LEN:
                raise Malformed("truncated", "ImmDt")
            p.imm = be32(frame, off)
            off += IMM_LEN
        if body_end - off < p.pad:
            raise Malformed("truncated", "pad")
        p.payload = frame[off:body_end - p.pad]
    elif opcode == Opcode.ACKNOWLEDGE:
        if body_end - off < AETH_LEN:
            raise Malformed("truncated", "AETH")
        w = be32(frame, off)
        p.syndrome = w >> 24
        p.msn = w & 0xFFFFFF
        p.ext = frame[off + AETH_LEN:body_end]
        p.payload = b""
    elif opcode == Opcode.CNP:
        p.payload = b""
    else:
        raise Malformed("unsupported_opcode", hex(opcode))
    return p


class AckExtensions:
    """Decoded extensions of an ACK: echoed INT hops (source-side first), SACK block and
    the duplicate report (PSN of a data packet received twice, or None). A class, as
    ``int_md.IntStack``: compiled, a named tuple is made by a Python call of its class, this
    one by a C call, once an ACK."""

    __slots__ = ("hops", "sack_base", "sack_bitmap", "dsack_psn")

    def __init__(self, hops: tuple, sack_base: int | None, sack_bitmap: int, dsack_psn: int | None = None) -> None:
        self.hops = hops
        self.sack_base = sack_base
        self.sack_bitmap = sack_bitmap
        self.dsack_psn = dsack_psn

    def __repr__(self) -> str:
        return (f"AckExtensions(hops={self.hops!r}, sack_base={self.sack_base}, "
                f"sack_bitmap={self.sack_bitmap:#x}, dsack_psn={self.dsack_psn})")


def parse_ack_ext(p: Packet) -> AckExtensions:
    """Decode the INT echo and SACK block an ACK's ``resv7`` flags announce."""
    off = 0
    hops: tuple = ()
    base = None
    bitmap = 0
    try:
        if p.resv7 & ACK_EXT_INT:
            hops, off = int_md.decode_echo(p.ext, off)
    except ValueError as e:
        raise Malformed("bad_int_echo", str(e)) from None
    if p.resv7 & ACK_EXT_SACK:
        base, bitmap, off = unpack_sack(p.ext, off)
    dsack = None
    if p.resv7 & ACK_EXT_DSACK:
        if len(p.ext) < off + 4:
            raise Malformed("truncated", "duplicate-report block")
        dsack = be32(p.ext, off) & 0xFFFFFF
    return AckExtensions(hops, base, bitmap, dsack)
