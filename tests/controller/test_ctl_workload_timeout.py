"""A run that times out says where each unfinished NIC stood (from its statistics), not only
its progress: which messages it started and did not complete, on which queue pair, and how
often its transport timed out and resent: the difference between a flow that kept timing out
behind a broken switch and one that never started."""

from __future__ import annotations

from controller.workloads import stuck_detail
from nicmodel.stats import RunStats


def _stats(counters: dict[str, int]) -> RunStats:
    stats = RunStats(line_rate_bps=100e9, base_rtt_ns=8_000)
    stats.nic_counters["10.1.1.2"] = counters
    return stats


def test_unfinished_messages_and_the_recovery_counters_are_named() -> None:
    stats = _stats({"timeouts": 4, "retransmitted_pkts": 61, "naks_received": 0})
    done = stats.message_started("10.1.1.2", "10.1.2.2", 65536, 0, qpn=257)
    RunStats.message_done(done, 40_000)
    stats.message_started("10.1.1.2", "10.2.1.2", 65536, 0, qpn=258)
    detail = stuck_detail(stats.to_dict())
    assert detail == ("1 message(s) unfinished: to 10.2.1.2 on QP 258 (65536 B); "
                      "4 ack timeouts, 61 packets resent, 0 NAKs")


def test_many_unfinished_are_cut_short_and_a_receiver_says_it_waits() -> None:
    stats = _stats({"timeouts": 0, "retransmitted_pkts": 0, "naks_received": 2})
    for qpn in range(256, 261):
        stats.message_started("10.1.1.2", f"10.2.1.{qpn - 250}", 1024, 0, qpn=qpn)
    detail = stuck_detail(stats.to_dict())
    assert detail.startswith("5 message(s) unfinished: to 10.2.1.6 on QP 256 (1024 B), ")
    assert " and 2 more; 0 ack timeouts, 0 packets resent, 2 NAKs" in detail
    assert stuck_detail(_stats({}).to_dict()) == ("every message it sent completed (waiting to receive); "
                                                  "0 ack timeouts, 0 packets resent, 0 NAKs")
