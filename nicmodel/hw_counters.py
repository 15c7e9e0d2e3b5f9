"""The NIC's statistics under the names RDMA NICs export, so an operator's habits carry over.

ConnectX NICs publish RoCE hardware counters (``/sys/class/infiniband/<dev>/ports/1/hw_counters``,
``rdma statistic show``) and port counters (``ethtool -S``); the names below are theirs
(mlx5 documentation, "Understanding mlx5 Linux counters"). This table is the one mapping
from the model's counters (``workloads.nic_counters``, summed over QPs) to those names;
``rnic stats --hw`` and ``fabricctl counters HOST`` print it, so
``ethtool -S eth0 | grep -Ei 'pause|cnp|ecn|drop'`` has the direct equivalent
``rnic stats --hw | grep -Ei 'pause|cnp|ecn|drop'``.

| operator name | model counter | meaning |
|---|---|---|
| `np_cnp_sent` | `cnps_sent` | CNPs sent as notification point (for CE-marked packets) |
| `np_ecn_marked_roce_packets` | `ce_received` | RoCE packets received with ECN CE |
| `rp_cnp_handled` | `cnps_received` | CNPs handled as reaction point (DCQCN rate cuts) |
| `out_of_sequence` | `out_of_order_received` | packets received out of sequence (GBN drops them, SR keeps) |
| `packet_seq_err` | `naks_received` | NAK-sequence-error packets received |
| `local_ack_timeout_err` | `timeouts` | retransmission timer expiries |
| `duplicate_request` | `duplicates_received` | duplicate requests received |
| `rnr_nak_retry_err` | `rnr_naks_received` | RNR NAKs received |
| `roce_retransmitted_packets` (ours: mlx5 has no plain counter) | `retransmitted_pkts` | packets resent |
| `rx_discards_phy` | `frames_dropped` | frames dropped before any QP (malformed, bad ICRC, unknown QP) |
| `rx_packets_phy`, `tx_packets_phy` | `frames_received`, `frames_sent` | frames on the port |
| `rx_pause_ctrl_phy` | `pause_frames_received` | PFC/PAUSE frames received |
| `rx_prio{N}_pause` | `pause_frames_prio{N}` | PFC frames pausing priority N |
| `rx_prio{N}_pause_duration` | `pause_ns_prio{N}` / 1000 | microseconds priority N was paused |
| `tx_prio{N}_pause`, `tx_pause_ctrl_phy` | (always 0) | the model never sends PFC: the switch does |
"""

from __future__ import annotations

from collections.abc import Mapping

PRIORITIES = 8
# operator name -> model counter (scalars)
HW_NAMES: dict[str, str] = {
    "np_cnp_sent": "cnps_sent",
    "np_ecn_marked_roce_packets": "ce_received",
    "rp_cnp_handled": "cnps_received",
    "out_of_sequence": "out_of_order_received",
    "packet_seq_err": "naks_received",
    "local_ack_timeout_err": "timeouts",
    "duplicate_request": "duplicates_received",
    "rnr_nak_retry_err": "rnr_naks_received",
    "roce_retransmitted_packets": "retransmitted_pkts",
    "rx_discards_phy": "frames_dropped",
    "rx_packets_phy": "frames_received",
    "tx_packets_phy": "frames_sent",
    "rx_pause_ctrl_phy": "pause_frames_received",
}


def hw_counters(counters: Mapping[str, float]) -> dict[str, int]:
    """The operator-named counters of one NIC from its model counters (missing ones are 0)."""
    out = {hw: int(counters.get(model, 0)) for hw, model in HW_NAMES.items()}
    out["tx_pause_ctrl_phy"] = 0
    for p in range(PRIORITIES):
        out[f"rx_prio{p}_pause"] = int(counters.get(f"pause_frames_prio{p}", 0))
        out[f"rx_prio{p}_pause_duration"] = int(counters.get(f"pause_ns_prio{p}", 0) // 1000)
        out[f"tx_prio{p}_pause"] = 0
    return out


def format_hw(counters: Mapping[str, float], all_values: bool = True) -> str:
    """``name: value`` lines, in ethtool -S's shape."""
    return "\n".join(f"     {name}: {v}" for name, v in hw_counters(counters).items() if all_values or v)
