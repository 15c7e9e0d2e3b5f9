"""Scheduling lag histogram: percentiles, one run's share of a long-lived total, text round trip."""

from __future__ import annotations

from netbase.lag import SchedulingLag


def test_quantiles_bound_the_lateness_from_above() -> None:
    lag = SchedulingLag()
    for late in [0] * 98 + [300, 5000]:
        lag.record(1000, 1000 + late)
    assert lag.timers == 100
    assert lag.quantile_ns(0.5) == 0
    assert 300 <= lag.quantile_ns(0.99) < 600  # the bucket holding 300 (256..511)
    assert lag.quantile_ns(1.0) == lag.max_ns == 5000
    lag.record(2000, 1500)  # acted on before it was due: counts as on time
    assert lag.timers == 101 and lag.max_ns == 5000


def test_empty_histogram_reports_nothing_late() -> None:
    assert SchedulingLag().quantile_ns(0.99) == 0 and SchedulingLag().timers == 0


def test_since_keeps_only_the_later_lag() -> None:
    lag = SchedulingLag()
    lag.record(0, 1_000_000)  # an early run's 1 ms stall
    before = SchedulingLag.from_fields(lag.as_fields())
    for _ in range(10):
        lag.record(0, 10)
    run = lag.since(before)
    assert run.timers == 10
    assert run.max_ns < 16  # not the earlier 1 ms
    assert run.quantile_ns(0.99) < 16


def test_fields_round_trip_through_text() -> None:
    lag = SchedulingLag()
    for late in (0, 7, 700, 70_000):
        lag.record(0, late)
    text = "\n".join(f"{k}={v}" for k, v in lag.as_fields().items())  # as switch_stats prints it
    back = SchedulingLag.from_fields(dict(line.split("=") for line in text.splitlines()))
    assert back.counts == lag.counts and back.max_ns == 70_000
    assert lag.as_fields()["sched_lag.p99_ns"] == lag.quantile_ns(0.99)
