"""Verbs-level types of the NIC model: what an application posts and what it gets back.

Named after libibverbs (ibv_wc_status, ibv_wc_opcode, access flags) so that people who know
RDMA read them at once; the model keeps one completion queue per NIC.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from enum import Enum, IntFlag


class VerbsError(ValueError):
    """A verbs call with bad arguments (unknown QP, range outside a memory region, ...).
    Nothing is posted when it is raised."""


def parse_mac(mac: bytes | str) -> bytes:
    """6 bytes from ``"02:00:00:00:00:01"`` (or bytes as they are)."""
    if isinstance(mac, str):
        try:
            b = bytes.fromhex(mac.replace(":", "").replace("-", ""))
        except ValueError:
            raise VerbsError(f"MAC address {mac!r} is not hex") from None
    else:
        b = bytes(mac)
    if len(b) != 6:
        raise VerbsError(f"MAC address {mac!r} is not 6 bytes")
    return b


def parse_ip(ip: bytes | str) -> bytes:
    """4 bytes from ``"10.0.0.1"`` (or bytes as they are)."""
    if isinstance(ip, str):
        try:
            return ipaddress.IPv4Address(ip).packed
        except ValueError as e:
            raise VerbsError(str(e)) from None
    if len(ip) != 4:
        raise VerbsError(f"IPv4 address {ip!r} is not 4 bytes")
    return bytes(ip)


class Reliability(Enum):
    """Loss recovery of an RC queue pair."""

    GO_BACK_N = "gbn"  # RoCEv2 as NICs ship it: out-of-order packets dropped and NAKed
    SELECTIVE_REPEAT = "sr"  # IRN-style: out-of-order placement, SACK, resend only holes


class LossDetection(Enum):
    """How a selective-repeat requester decides that a SACK hole is lost (not just late).

    RACK (RFC 8985, the default): by time. A hole is lost once a packet sent after it has
    been acknowledged and the hole is overdue by more than a reorder window (a fraction of
    the minimum RTT, widened when duplicate reports show a resend was spurious). Packet
    spraying reorders every flow by up to the delay spread between paths, which in packet
    counts grows with the line rate and is unbounded; in time it is bounded by the queueing
    difference between paths, so only a time rule tells reordering from loss there.

    COUNT: classic duplicate threshold (TCP's dupthresh, IRN): a hole is lost once a PSN
    ``sack_reorder_threshold`` above it is SACKed. Fine on single-path (ECMP) fabrics;
    under spraying it resends packets that were only overtaken."""

    RACK = "rack"
    COUNT = "count"


class QpState(Enum):
    RESET = "reset"  # created, no destination yet
    RTS = "rts"  # connected: ready to send and receive
    ERROR = "error"  # fatal error: posted work completes with WR_FLUSH_ERR


class Access(IntFlag):
    LOCAL_WRITE = 1
    REMOTE_WRITE = 2
    REMOTE_READ = 4
    ALL = 7


class WcStatus(Enum):
    SUCCESS = "success"
    LOC_LEN_ERR = "local_length_error"  # incoming SEND larger than the receive buffer
    REM_INV_REQ_ERR = "remote_invalid_request_error"
    REM_ACCESS_ERR = "remote_access_error"
    REM_OP_ERR = "remote_operational_error"
    RETRY_EXC_ERR = "transport_retry_counter_exceeded"
    RNR_RETRY_EXC_ERR = "rnr_retry_counter_exceeded"
    WR_FLUSH_ERR = "work_request_flushed_error"


class WcOpcode(Enum):
    SEND = "send"
    RDMA_WRITE = "rdma_write"
    RECV = "recv"
    RECV_RDMA_WITH_IMM = "recv_rdma_with_imm"


@dataclass(frozen=True, slots=True)
class Completion:
    """One work completion. Requester completions (SEND, RDMA_WRITE) come when the
    responder has acknowledged every packet of the message; responder completions (RECV,
    RECV_RDMA_WITH_IMM) when the whole message has arrived in order."""

    wr_id: int
    qpn: int
    status: WcStatus
    opcode: WcOpcode
    byte_len: int
    time_ns: int
    imm: int | None = None


class MemoryRegion:
    """A registered buffer: ``addr`` is the virtual base address remote peers use with
    ``rkey``; local work requests name it by the object itself and an offset.

    ``buf`` is None for a *sink* region (used by large simulations): sends from it carry zero
    bytes and writes into it are checked and counted but not stored."""

    __slots__ = ("lkey", "rkey", "addr", "length", "buf", "access")

    def __init__(self, key: int, addr: int, length: int, buf: bytearray | None,
                 access: Access) -> None:
        self.lkey = key
        self.rkey = key
        self.addr = addr
        self.length = length
        self.buf = buf
        self.access = access

    def __repr__(self) -> str:
        return (f"MemoryRegion(rkey={self.rkey:#x}, addr={self.addr:#x}, length={self.length}, "
                f"sink={self.buf is None})")


def ack_timeout_ns(exponent: int) -> int:
    """IBA Local ACK Timeout: 4.096 us x 2^exponent (14 -> 67.1 ms, 7 -> 524 us)."""
    return 4096 << exponent


@dataclass
class QpConfig:
    """Settings of one RC queue pair. Each default and its source: nicmodel/README.md,
    "Parameters and their sources".

    Sizes are bytes, times integer nanoseconds of fabric time."""

    mtu: int = 1024  # IB path MTU: 256, 512, 1024, 2048 or 4096 payload bytes
    reliability: Reliability = Reliability.GO_BACK_N
    priority: int = 3  # PFC class (0..7) the QP's packets travel in
    dscp: int = 26  # IPv4 DSCP of data and ACK packets
    ecn: bool = True  # data packets ECN-capable (ECT(0)); False: Not-ECT, never CE-marked
    initial_psn: int = 0  # first PSN this QP sends
    udp_sport: int | None = None  # flow entropy (UDP source port); None = derived from QPN
    pkey: int = 0xFFFF
    ack_every: int = 4  # responder ACKs every N packets (and at message end / A bit)
    rto_ns: int = 500_000  # retransmission timeout (see local_ack_timeout)
    rto_max_ns: int = 1 << 31  # cap of the backed-off timeout (2.1 s, IBA exponent 19)
    rto_backoff: bool = True  # double the timeout per consecutive timeout (IBA: False)
    local_ack_timeout: int | None = None  # IBA exponent n: timeout 4.096 us x 2^n, replaces rto_ns
    nak_interval_ns: int | None = 500_000  # GBN: repeat a gap's NAK after this long (None: never)
    retry_count: int = 7  # consecutive timeouts before RETRY_EXC_ERR
    rnr_retry: int = 7  # RNR NAKs before RNR_RETRY_EXC_ERR (7 = infinite, as in IBA)
    min_rnr_timer_ns: int = 10_000  # wait the responder asks for when it has no recv WQE
    inflight_cap_bytes: int | None = None  # None: ~1 BDP (line rate x base_rtt_ns) for SR
    base_rtt_ns: int = 10_000  # used only to size the default selective-repeat cap
    loss_detection: LossDetection = LossDetection.RACK  # SR: how holes are judged lost
    reorder_window_rtt: float = 1.0  # SR, RACK: initial reorder window in minimum RTTs
    sack_reorder_threshold: int = 3  # SR, COUNT: a hole is lost once a PSN this far above it is in
    sack_window: int = 1024  # SR: PSNs ahead of the cumulative point the receiver tracks

    def base_rto_ns(self) -> int:
        """The retransmission timeout before any backoff: ``4.096 us x 2^local_ack_timeout``
        when the IBA exponent is set (IBA vol. 1 ch. 9.7, ibv_modify_qp's ``timeout``), else
        ``rto_ns``."""
        if self.local_ack_timeout is not None:
            return ack_timeout_ns(self.local_ack_timeout)
        return self.rto_ns

    def validate(self) -> None:
        if self.mtu not in (256, 512, 1024, 2048, 4096):
            raise VerbsError(f"MTU {self.mtu} is not an IB MTU (256..4096)")
        if not 0 <= self.priority <= 7:
            raise VerbsError(f"priority {self.priority} is not 0..7")
        if not 0 <= self.dscp <= 63:
            raise VerbsError(f"DSCP {self.dscp} is not 0..63")
        if not 0 <= self.initial_psn < 1 << 24:
            raise VerbsError(f"initial PSN {self.initial_psn} does not fit 24 bits")
        if self.udp_sport is not None and not 0 < self.udp_sport < 65536:
            raise VerbsError(f"UDP source port {self.udp_sport}")
        if self.ack_every < 1 or self.retry_count < 0 or self.rnr_retry < 0:
            raise VerbsError("ack_every must be >= 1 and retry counts >= 0")
        if self.local_ack_timeout is not None and not 1 <= self.local_ack_timeout <= 31:
            raise VerbsError("local_ack_timeout must be 1..31 (IBA; 0, an infinite timeout, "
                             "is not modelled)")
        if self.rto_ns <= 0 or self.rto_max_ns < self.base_rto_ns():
            raise VerbsError("the retransmission timeout must be > 0 and <= rto_max_ns")
        if self.nak_interval_ns is not None and self.nak_interval_ns <= 0:
            raise VerbsError("nak_interval_ns must be > 0 (or None: one NAK per gap)")
        if not 1 <= self.sack_window <= 255 * 32:
            raise VerbsError("sack_window must be 1..8160 PSNs (255 bitmap words)")
        if self.sack_reorder_threshold < 1:
            raise VerbsError("sack_reorder_threshold must be >= 1")
        if not isinstance(self.loss_detection, LossDetection):
            raise VerbsError(f"loss_detection must be a LossDetection, not {self.loss_detection!r}")
        if isinstance(self.reorder_window_rtt, bool) or not (
                isinstance(self.reorder_window_rtt, (int, float)) and 0 < self.reorder_window_rtt <= 16):
            raise VerbsError("reorder_window_rtt must be a number of minimum RTTs in (0, 16]")
