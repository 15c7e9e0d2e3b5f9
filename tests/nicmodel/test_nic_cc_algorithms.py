"""Congestion-control algorithms against hand-computed values (no transport involved)."""

from __future__ import annotations

import pytest

from nicmodel.cc import AckInfo, Dcqcn, DcqcnParams, HopInt, Hpcc, HpccParams, Timely, TimelyParams, create_cc, params_of

G100 = 100e9
B = 150 * 1024


# ---------------------------------------------------------------------------- DCQCN
def test_dcqcn_cut_on_cnp_and_alpha_update() -> None:
    cc = Dcqcn(G100, DcqcnParams(alpha_init=0.5))
    cc.on_cnp(0)
    assert cc.target_rate_bps == G100
    assert cc.rate_bps == pytest.approx(G100 * (1 - 0.5 / 2))  # Rc * (1 - alpha/2)
    alpha1 = (1 - 1 / 256) * 0.5 + 1 / 256
    assert cc.alpha_at(0) == pytest.approx(alpha1)
    # alpha decays by (1 - g) per full 55 us period without CNP
    assert cc.alpha_at(54_999) == pytest.approx(alpha1)
    assert cc.alpha_at(110_000) == pytest.approx(alpha1 * (255 / 256) ** 2)
    # the second cut uses the decayed alpha and raises it again
    rc = cc.rate_bps
    cc.on_cnp(110_000)
    a = alpha1 * (255 / 256) ** 2
    assert cc.target_rate_bps == pytest.approx(rc)
    assert cc.rate_bps == pytest.approx(rc * (1 - a / 2))
    assert cc.alpha_at(110_000) == pytest.approx((1 - 1 / 256) * a + 1 / 256)


def test_dcqcn_fast_recovery_then_additive_then_hyper() -> None:
    cc = Dcqcn(G100, DcqcnParams(byte_counter=B))  # the deployment table's byte counter
    assert cc.next_timer() is None  # nothing to recover before the first CNP
    cc.on_cnp(0)  # alpha 1: Rt = 100G, Rc = 50G
    cc.on_cnp(1_000)  # Rt = 50G, Rc = 25G
    rt, rc = 50e9, 25e9
    assert (cc.target_rate_bps, cc.rate_bps) == (pytest.approx(rt), pytest.approx(rc))
    # 5 timer expiries (T = 55 us from the last CNP): fast recovery, Rt unchanged
    for k in range(1, 6):
        assert cc.next_timer() == 1_000 + 55_000 * k
        cc.on_timer(cc.next_timer())
        rc = (rt + rc) / 2
        assert cc.stage == "fast"
        assert cc.target_rate_bps == pytest.approx(rt)
        assert cc.rate_bps == pytest.approx(rc)
    # 6th timer expiry: additive increase by R_AI = 40 Mb/s
    cc.on_timer(1_000 + 55_000 * 6)
    rt += 40e6
    rc = (rt + rc) / 2
    assert cc.stage == "additive"
    assert cc.target_rate_bps == pytest.approx(rt) and cc.rate_bps == pytest.approx(rc)
    # the byte counter (B = 150 KB) drives events too: 5 fast-recovery-or-additive events
    # (timer count is already > F, so these are additive), the 6th makes both counters > F
    for _ in range(5):
        cc.on_packet_sent(400_000, B, 0)
        rt += 40e6
        rc = (rt + rc) / 2
        assert cc.rate_bps == pytest.approx(rc)
    assert cc.stage == "additive"
    cc.on_packet_sent(400_000, B, 0)  # j = 6 > F and i = 6 > F: hyper increase, R_HAI = 400 Mb/s
    rt += 400e6
    rc = (rt + rc) / 2
    assert cc.byte_events == 6 and cc.timer_events == 6
    assert cc.target_rate_bps == pytest.approx(rt) and cc.rate_bps == pytest.approx(rc)
    assert cc.stage == "hyper"


def test_dcqcn_partial_bytes_accumulate_and_recovery_stops_at_line_rate() -> None:
    cc = Dcqcn(G100, DcqcnParams(alpha_init=0.02, byte_counter=B))
    cc.on_cnp(0)  # Rc = 99G, Rt = 100G
    cc.on_packet_sent(10, B // 2, 0)
    assert cc.byte_events == 0
    cc.on_packet_sent(20, B // 2, 1)
    assert cc.byte_events == 1
    for _ in range(200):
        if cc.next_timer() is None:
            break
        cc.on_timer(cc.next_timer())
    assert cc.rate_bps == G100 and cc.next_timer() is None


def test_dcqcn_rate_never_below_min_rate() -> None:
    cc = Dcqcn(G100, DcqcnParams(min_rate_bps=30e9))
    for t in range(5):
        cc.on_cnp(t)
    assert cc.rate_bps == 30e9


# ----------------------------------------------------------------------------- HPCC
def hop(ts_us: int, tx_bytes: int, qdepth: int, switch_id: int = 1) -> HopInt:
    return HopInt(switch_id, 1, 2, 0, 0, qdepth, ts_us, ts_us, tx_bytes, 100_000)


def ack(now: int, hops: tuple[HopInt, ...], acked_psn: int, next_psn: int) -> AckInfo:
    return AckInfo(now, 1024, None, False, hops, acked_psn, next_psn)


def test_hpcc_window_shrinks_when_over_target_and_reference_moves_once_per_rtt() -> None:
    cc = Hpcc(G100)  # T = 8 us, W_init = 100 KB, W_AI = 40 B, MTU 1024
    assert cc.window_bytes == pytest.approx(100_000)
    cc.on_ack(ack(0, (hop(100, 0, 10),), 0, 10))  # first record: reference only
    assert cc.window_bytes == pytest.approx(100_000) and cc.reference_updates == 0
    # 8 us later the hop sent 100 KB (= 100 Gb/s) and kept 10 packets queued
    cc.on_ack(ack(8_000, (hop(108, 100_000, 10),), 1, 20))
    u = 10 * 1024 * 8 / (100e9 * 8e-6) + 1.0  # qlen/(B*T) + txRate/B = 1.1024
    assert cc.utilization == pytest.approx(u)  # tau = T: EWMA takes the new sample
    w = 100_000 / (u / 0.95) + 40
    assert cc.window_bytes == pytest.approx(w)
    assert cc.reference_window == pytest.approx(w) and cc.reference_updates == 1
    assert cc.rate_bps == pytest.approx(w * 8 / 8e-6)
    # an ACK within the same RTT (acked PSN 5 < recorded snd_nxt 20): W moves, Wc does not;
    # queue 20 packets now, 10 before: HPCC takes min(qlen', qlen) = 10
    cc.on_ack(ack(12_000, (hop(112, 150_000, 20),), 5, 30))
    u2 = 10 * 1024 * 8 / (100e9 * 8e-6) + 50_000 * 8 / 4e-6 / 100e9
    big_u = 0.5 * u + 0.5 * u2  # tau = 4 us of T = 8 us
    assert cc.utilization == pytest.approx(big_u)
    assert cc.window_bytes == pytest.approx(w / (big_u / 0.95) + 40)
    assert cc.reference_window == pytest.approx(w) and cc.reference_updates == 1
    # the ACK that covers PSN 20 closes the RTT and moves Wc
    cc.on_ack(ack(20_000, (hop(120, 250_000, 10),), 20, 40))
    assert cc.reference_updates == 2 and cc.last_update_seq == 40


def test_hpcc_additive_increase_below_target_then_multiplicative_after_max_stage() -> None:
    cc = Hpcc(G100)
    cc.reference_window = cc.window_bytes = 50_000.0
    tx = 0
    cc.on_ack(ack(0, (hop(0, tx, 0),), 0, 1))
    psn = 1
    for stage in range(1, 6):  # idle link at 50 Gb/s: U = 0.5 < eta: W = Wc + W_AI
        tx += 50_000
        cc.on_ack(ack(stage * 8_000, (hop(stage * 8, tx, 0),), psn, psn + 1))
        psn += 1
        assert cc.utilization == pytest.approx(0.5)
        assert cc.window_bytes == pytest.approx(50_000 + 40 * stage)
        assert cc.inc_stage == stage
    # incStage reached maxStage = 5: W = Wc / (U / eta) + W_AI (grows toward eta)
    tx += 50_000
    cc.on_ack(ack(48_000, (hop(48, tx, 0),), psn, psn + 1))
    assert cc.window_bytes == pytest.approx((50_000 + 200) / (0.5 / 0.95) + 40)
    assert cc.inc_stage == 0


def test_hpcc_keeps_old_snapshot_until_timestamp_moves_enough() -> None:
    cc = Hpcc(G100, HpccParams(min_ts_delta_us=2))
    cc.on_ack(ack(0, (hop(10, 0, 0),), 0, 1))
    cc.on_ack(ack(300, (hop(10, 3_000, 0),), 1, 2))  # same microsecond: no sample
    assert cc.utilization == 0.0 and cc.reference_updates == 0
    assert cc.window_bytes == pytest.approx(100_000)
    cc.on_ack(ack(1_000, (hop(11, 12_000, 0),), 1, 2))  # 1 us: still below 2 us, no sample
    assert cc.utilization == 0.0 and cc.reference_updates == 0
    # next record 2 us after the *kept* snapshot: 25 KB in 2 us = 100 Gb/s
    cc.on_ack(ack(2_000, (hop(12, 25_000, 0),), 2, 3))
    assert cc.utilization == pytest.approx(1.0)  # first sample: full weight
    assert cc.reference_updates == 1
    # later samples weigh by the ACK spacing on the sender's clock: 2 us of T = 8 us
    cc.on_ack(ack(4_000, (hop(14, 50_000, 0),), 3, 4))  # 25 KB in 2 us again, U stays 1
    cc.on_ack(ack(6_000, (hop(16, 50_000, 0),), 4, 5))  # idle 2 us: sample u = 0
    assert cc.utilization == pytest.approx(0.75)


def test_hpcc_uses_most_loaded_hop_and_handles_counter_wrap() -> None:
    cc = Hpcc(G100)
    start = (1 << 32) - 1000
    cc.on_ack(ack(0, (hop(0, 0, 0, 1), hop((1 << 32) - 4, start, 0, 2)), 0, 1))
    # hop 1: 10 KB in 8 us (0.1); hop 2: wraps both counters, 90 KB in 8 us (0.9)
    cc.on_ack(ack(8_000, (hop(8, 10_000, 0, 1), hop(4, 89_000, 0, 2)), 1, 2))
    assert cc.utilization == pytest.approx(0.9)



def test_hpcc_measures_in_fabric_time_when_the_switch_clock_runs_d_times_faster() -> None:
    """BMv2 in a fabric dilated D = 76,000 times: its hop timestamps are wall microseconds
    (ts_unit_ns = 1000 / D of fabric time), its link rate the fabric's 100 Gb/s. The same
    8 us of fabric time with 100 KB sent and 10 packets queued gives the same U as above."""
    d = 76_000

    def wall_hop(fabric_us: int, tx_bytes: int, qdepth: int) -> HopInt:
        return HopInt(1, 1, 2, 0, 0, qdepth, fabric_us * d, fabric_us * d, tx_bytes, 100_000, 1000 / d)

    cc = Hpcc(G100)
    cc.on_ack(ack(0, (wall_hop(100, 0, 10),), 0, 10))
    cc.on_ack(ack(8_000, (wall_hop(108, 100_000, 10),), 1, 20))
    assert cc.utilization == pytest.approx(10 * 1024 * 8 / (100e9 * 8e-6) + 1.0)

def link(switch_id: int, egress_port: int, ts: int, tx_bytes: int, qdepth: int, ts_unit_ns: float = 1000) -> HopInt:
    return HopInt(switch_id, 1, egress_port, 0, 0, qdepth, ts, ts, tx_bytes, 100_000, ts_unit_ns)


def test_hpcc_sprayed_flow_measures_every_link_of_its_paths() -> None:
    """Per-packet spraying over two spines: consecutive ACKs echo different uplinks and
    spines, and the shared last hop. Each link is measured against this flow's previous
    record of the same link (8 us earlier): the congested spines (100 packets queued, half
    the line rate sent) give u = 1.52, above the last hop's 0.8, and the window shrinks.
    Keyed by position on the path, hops 1 and 2 changed on every ACK and were never measured."""
    cc = Hpcc(G100)
    spine_u = 100 * 1024 * 8 / (100e9 * 8e-6) + 0.5
    for k in range(12):
        t_us, leg = 4 * k, k % 2  # path A on even ACKs, path B on odd ones
        visits = k // 2  # earlier ACKs that crossed this path's uplink and spine
        hops = (link(1, 3 + leg, t_us, visits * 50_000, 0),  # uplink: 50 Gb/s over 8 us
                link(10 + leg, 2, t_us, visits * 50_000, 100),  # spine egress: 100 packets queued
                link(2, 1, t_us, k * 40_000, 0))  # last hop: 80 Gb/s over 4 us
        cc.on_ack(ack(t_us * 1000, hops, k, k + 1))
    assert cc.utilization == pytest.approx(spine_u, rel=0.01)
    assert cc.window_bytes < 100_000 * 0.95 / 1.4
    assert cc.hops_seen == 3 and cc.last_int[1].switch_id == 11


def test_hpcc_rate_is_measured_over_whole_frames_not_nanoseconds_between_them() -> None:
    """Nanosecond stamps whose spacing alternates 7 ns and 180 ns (a port catching up after a
    short idle gap, as our traffic manager and pipelines that stamp before the serializer do)
    around a line-rate average of one 1,170-byte frame per 93.5 ns. One frame over 7 ns reads
    1.3 Tb/s; the rate is measured over at least 4 MTU frames, so U stays near the link's
    real use (about 1.0) instead of averaging the spikes (about 7)."""
    cc = Hpcc(G100)
    ts = tx = 0
    for k in range(400):
        ts += 7 if k % 2 else 180
        tx += 1_170
        cc.on_ack(ack(k * 94, (link(2, 1, ts, tx, 0, ts_unit_ns=1),), k, k + 1))
    assert 0.9 < cc.utilization < 1.15


def test_hpcc_skips_a_record_older_than_the_links_previous_one() -> None:
    """With several paths an ACK can overtake another: its record of a shared link is older
    than the one already seen. It is old news: U and the window stay as they were (taken as a
    new sample, its negative time delta wraps to 4,295 s and reads an idle link)."""
    cc = Hpcc(G100)
    for k in range(4):  # 50 Gb/s on the link: U = 0.5
        cc.on_ack(ack(8_000 * k, (link(2, 1, 8 * k, 50_000 * k, 0),), k, k + 1))
    before = (cc.utilization, cc.window_bytes, cc.reference_updates)
    cc.on_ack(ack(25_000, (link(2, 1, 20, 125_000, 0),), 4, 5))
    assert (cc.utilization, cc.window_bytes, cc.reference_updates) == before
    cc.on_ack(ack(32_000, (link(2, 1, 32, 200_000, 0),), 5, 6))  # the next record measures from 24 us
    assert cc.utilization == pytest.approx(0.5)


# --------------------------------------------------------------------------- TIMELY
# Algorithm 1 by hand with the paper's 10 Gb/s thresholds and a light EWMA (alpha 0.02)
TEN_G = TimelyParams(t_low_ns=50_000, t_high_ns=500_000, delta_bps=10e6, alpha=0.02)


def test_timely_regions() -> None:
    cc = Timely(G100, TEN_G)
    cc.rate_bps = 50e9
    cc.update(60_000)  # first sample: reference only
    assert cc.rate_bps == 50e9
    cc.update(20_000)  # below T_low = 50 us: + delta
    assert cc.rate_bps == pytest.approx(50e9 + 10e6)
    cc.update(1_000_000)  # above T_high = 500 us: * (1 - beta (1 - T_high/rtt))
    assert cc.rate_bps == pytest.approx((50e9 + 10e6) * (1 - 0.8 * 0.5))
    # rtt_diff so far: -800 (20 us after 60 us), then 0.98 * -800 + 0.02 * 980 us = 18816
    assert cc.rtt_diff_ns == pytest.approx(18_816)
    r = cc.rate_bps
    cc.update(100_000)  # in the band; rtt_diff = 0.98 * 18816 + 0.02 * -900 us = 439.68 > 0
    assert cc.rtt_diff_ns == pytest.approx(439.68)
    assert cc.rate_bps == pytest.approx(r * (1 - 0.8 * 439.68 / 8_000))


def test_timely_hyperactive_increase_after_five_negative_gradients() -> None:
    cc = Timely(G100, TEN_G)
    cc.rate_bps = 50e9
    cc.update(100_000)
    for _ in range(5):  # falling then flat RTT in the band: rtt_diff stays negative
        cc.update(90_000)
    assert cc.negative_gradients == 5
    assert cc.rate_bps == pytest.approx(50e9 + 4 * 10e6 + 5 * 10e6)  # the 5th is HAI


def test_timely_positive_gradient_cuts() -> None:
    cc = Timely(G100, TEN_G)
    cc.update(100_000)
    cc.update(200_000)  # rtt_diff = 0.02 * 100 us = 2 us; gradient = 2/8
    assert cc.rate_bps == pytest.approx(G100 * (1 - 0.8 * 2_000 / 8_000))


def test_timely_updates_once_per_segment_of_acked_bytes() -> None:
    cc = Timely(G100)
    for i in range(16):
        cc.on_ack(AckInfo(i, 1024, 10_000, False, (), i, i + 1))
    assert cc.updates == 1


# ------------------------------------------------------------------------- registry
def test_create_cc_by_name_with_overrides_and_errors() -> None:
    cc = create_cc("dcqcn", G100, {"timer_ns": 30_000, "rate_ai_bps": 40e6})
    assert params_of(cc)["timer_ns"] == 30_000 and params_of(cc)["g"] == 1 / 256
    assert create_cc("none", G100).rate_bps == G100
    assert create_cc("hpcc", G100, {"base_rtt_ns": 16_000}).window_bytes == pytest.approx(200_000)
    with pytest.raises(ValueError, match="unknown congestion control"):
        create_cc("bbr", G100)
    with pytest.raises(ValueError, match="unknown dcqcn parameter"):
        create_cc("dcqcn", G100, {"gain": 0.1})
    with pytest.raises(ValueError, match="eta"):
        create_cc("hpcc", G100, {"eta": 1.5})
    with pytest.raises(ValueError, match="bad value"):
        create_cc("timely", G100, {"beta": "fast"})
