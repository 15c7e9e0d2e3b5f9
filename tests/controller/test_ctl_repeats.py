"""Repeated runs: median [min-max] cells, lag flags, and the verdict on the profiles' difference."""

from __future__ import annotations

from controller.repeats import (
    LAG_LIMIT_NS,
    compare,
    lag_flagged,
    median_runs,
    repeated_rows,
    repeated_table,
    summarize,
    verdicts,
)
from controller.results import RunResult


def run(profile: str, us: float, lag_ns: int | None = 100, ok: bool = True) -> RunResult:
    lag = {} if lag_ns is None else {"leaf1": {"timers": 10, "p50_ns": 0, "p99_ns": lag_ns, "max_ns": lag_ns},
                                     "nic h1_1": {"timers": 5, "p50_ns": 0, "p99_ns": 1, "max_ns": 1}}
    return RunResult("all-reduce", profile, {"kind": "allreduce", "size": 4096}, us, 4096 * 4, ok=ok,
                     sched_lag=lag, time_dilation=50_000.0)


def test_cells_are_median_and_range() -> None:
    assert summarize([3.0, 1.0, 2.0]) == "2 [1-3]"
    assert summarize([250.5, 262.0, 240.0]) == "250 [240-262]"
    assert summarize([7]) == 7
    assert summarize(["1024 KiB/host"] * 3) == "1024 KiB/host"
    assert summarize(["12.0%", "11.5%", "11.6%"]) == "11.6% [11.5-12%]"
    assert summarize(["yes", "NO"]) == "yes / NO"


def test_lag_flag_uses_the_worst_components_p99() -> None:
    assert LAG_LIMIT_NS == 1024  # about a tenth of the NICs' default base RTT of 10 us, at a bucket edge
    assert not lag_flagged(run("b", 1, lag_ns=LAG_LIMIT_NS))
    assert lag_flagged(run("b", 1, lag_ns=LAG_LIMIT_NS + 1))
    assert not lag_flagged(run("b", 1, lag_ns=None))  # not measured (virtual time, BMv2) is not flagged


def test_table_has_one_column_per_profile_with_median_range_lag_and_dilation() -> None:
    runs = [run("baseline", 300), run("ai-fabric", 250, lag_ns=5000), run("baseline", 320),
            run("ai-fabric", 240), run("baseline", 310), run("ai-fabric", 260, ok=False)]
    headers, rows = repeated_rows(runs)
    assert headers == ["metric", "all-reduce/baseline (n=3)", "all-reduce/ai-fabric (n=3)"]
    cells = {r[0]: r[1:] for r in rows}
    assert cells["runs completed"] == ["3/3", "2/3"]
    assert cells["runs flagged (lag)"] == ["0/3", "1/3"]
    assert cells["completion time (us)"] == ["310 [300-320]", "245 [240-250]"]  # completed runs only
    assert cells["time dilation D"] == [50_000.0, 50_000.0]
    assert cells["sched lag p99, worst (us; limit 1.024)"] == [0.1, "2.55 [0.1-5]"]
    assert "310 [300-320]" in repeated_table(runs)


def test_verdict_says_differ_only_when_ranges_do_not_overlap() -> None:
    v = compare("baseline", [300, 320, 310], "ai-fabric", [250, 240, 245])
    assert v.differs is True and "ai-fabric is faster than baseline beyond the run-to-run spread" in v.line
    v = compare("baseline", [300, 320, 310], "ai-fabric", [290, 305, 330])
    assert v.differs is False and "do not differ beyond the run-to-run spread" in v.line
    v = compare("baseline", [300], "ai-fabric", [250])
    assert v.differs is None and "no verdict" in v.line
    v = compare("baseline", [], "ai-fabric", [250, 260])
    assert v.differs is None and "no completed run" in v.line
    assert "2 run(s) flagged" in compare("baseline", [1, 2], "ai-fabric", [5, 6], flagged=2).line


def test_verdicts_compare_every_profile_with_the_first_and_plots_take_median_runs() -> None:
    runs = [run("baseline", 300), run("ai-fabric", 250), run("baseline", 320), run("ai-fabric", 240),
            run("baseline", 310), run("ai-fabric", 245)]
    (v,) = verdicts(runs)
    assert (v.profile, v.against, v.differs) == ("ai-fabric", "baseline", True)
    assert [r.completion_us for r in median_runs(runs)] == [310, 245]
