"""Counters a NIC and each queue pair keep (what statistics export and tests read).

Bytes count whole frames as handed to the driver (Ethernet header through ICRC), the same
unit congestion control and the in-flight cap use.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field


@dataclass
class QpCounters:
    """One queue pair, both roles: what it sent as requester and what it received as
    responder, so one QP's row tells the whole story of its flow (statistics, tests)."""

    data_pkts_sent: int = 0
    data_bytes_sent: int = 0
    retransmitted_pkts: int = 0
    spurious_retransmits: int = 0  # SR: resends the responder reported as duplicates
    reorder_peak_ns: int = 0  # SR, RACK: longest a packet arrived behind one sent after it
    data_pkts_received: int = 0  # accepted (in order or placed out of order), not dropped
    data_bytes_received: int = 0
    payload_bytes_delivered: int = 0  # message bytes handed to memory, in order
    duplicates_received: int = 0
    out_of_order_received: int = 0  # SR: kept; GBN: dropped
    out_of_order_dropped: int = 0
    acks_sent: int = 0
    acks_received: int = 0
    naks_sent: int = 0  # all NAK kinds, RNR included
    naks_repeated: int = 0  # GBN: a gap's NAK sent again after nak_interval_ns
    naks_received: int = 0
    rnr_naks_sent: int = 0
    rnr_naks_received: int = 0
    cnps_sent: int = 0
    cnps_received: int = 0
    ce_received: int = 0
    timeouts: int = 0
    stale_acks: int = 0
    messages_sent: int = 0  # requester messages completed successfully
    messages_received: int = 0  # responder messages completed in order
    reassembly_bytes: int = 0  # SR: payload bytes received beyond the cumulative point now
    reassembly_peak_bytes: int = 0
    reassembly_peak_pkts: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class NicCounters:
    """The port: frames in and out, and every frame dropped before it reached a QP, by
    reason (malformed input is counted here, never raised). Frames of the host's own
    traffic (TCP, ARP, non-RoCE UDP) are not drops: they are counted in ``host_frames``."""

    frames_received: int = 0
    frames_sent: int = 0
    host_frames: int = 0  # received frames that were not RoCE: the host stack's (roce.HOST_STACK_REASONS)
    pause_frames_received: int = 0
    pause_frames_by_prio: list = field(default_factory=lambda: [0] * 8)  # PFC frames enabling each class
    drops: Counter = field(default_factory=Counter)  # reason -> frames

    def as_dict(self) -> dict:
        d = asdict(self)
        d["drops"] = dict(self.drops)
        return d
