"""Repeated live runs: median and range per profile, lag flags, and whether profiles differ.

A live run's numbers move with the machine's load (issue 11: ai-fabric beat baseline by 41 us
on an idle machine and lost by 40 us beside a compile). So the demo runs every profile several
times (interleaved, so slow phases of the machine hit both), shows each metric as the median
with its range, flags runs whose components ran late against the dilated clock, and says in
one line whether the profiles' difference is larger than the run-to-run spread.

Lag threshold: a timer acted on L late delays its packet, ACK or pacing slot by L of fabric
time. :data:`LAG_LIMIT_NS` is about a tenth of the NICs' base RTT (10 us by default: 1 us,
rounded to 1024 ns, an edge of the lag histogram's power-of-two buckets, so that a p99 read
from the histogram is flagged exactly when it is at least 1024 ns). A 100
Gb/s port drains 12.5 KB in 1 us, about the ECN marking threshold and the queue HPCC aims
to keep: when the worst 1 % of some component's timers are later than that, queueing, RTTs
and congestion-control reactions measure the CPU rather than the fabric, and the run is
flagged.

Verdict: the profiles differ beyond the run-to-run spread when their completion-time ranges
(min..max over the completed runs) do not overlap. With 3 runs each, non-overlapping ranges
happen by chance in 2 of 20 orderings (10 %) if the profiles were alike; more repeats make the
test stricter. One run per profile has no spread, and the line says so.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from controller.report import comparison_rows
from controller.results import RunResult
from controller.textfmt import table
from nicmodel.settings import NicSettings

LAG_LIMIT_NS = 1 << (NicSettings().base_rtt_ns // 10 - 1).bit_length()  # 1024 for a 10 us RTT
METRIC = "completion time (us)"  # what the verdict compares


def lag_flagged(r: RunResult) -> bool:
    """Whether some component's p99 scheduling lag exceeded :data:`LAG_LIMIT_NS` in this run."""
    return r.worst_lag_p99_ns is not None and r.worst_lag_p99_ns > LAG_LIMIT_NS


def _is_num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v  # NaN is no figure


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _fmt(v: float) -> str:
    if float(v).is_integer():
        return f"{int(v)}"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def summarize(values: list[object]) -> object:
    """One cell for one metric over a profile's runs: the value where all runs agree,
    ``median [min-max]`` for figures, else the values joined."""
    if not values:
        return "-"
    if all(v == values[0] for v in values):
        return values[0]
    if all(isinstance(v, str) and v.endswith("%") and _is_num(_float(v[:-1])) for v in values):
        cells = summarize([_float(str(v)[:-1]) for v in values])
        return f"{cells}%" if not isinstance(cells, str) else cells.replace(" [", "% [").replace("]", "%]")
    if all(_is_num(v) for v in values):
        nums = [float(v) for v in values]  # type: ignore[arg-type]
        return f"{_fmt(statistics.median(nums))} [{_fmt(min(nums))}-{_fmt(max(nums))}]"
    return " / ".join(str(v) for v in values)


def by_profile(runs: list[RunResult]) -> dict[str, list[RunResult]]:
    out: dict[str, list[RunResult]] = {}
    for r in runs:
        out.setdefault(r.profile, []).append(r)
    return out


def repeated_rows(runs: list[RunResult]) -> tuple[list[str], list[list[object]]]:
    """Headers and rows of the repeated comparison: one column per profile. Figures are taken
    over the completed runs; ``runs completed`` and ``runs flagged (lag)`` count all of them."""
    groups = by_profile(runs)
    headers = ["metric", *(f"{runs[0].workload}/{p} (n={len(rs)})" for p, rs in groups.items())]
    rows: list[list[object]] = [
        ["runs completed", *(f"{sum(r.ok for r in rs)}/{len(rs)}" for rs in groups.values())],
        ["runs flagged (lag)", *(f"{sum(lag_flagged(r) for r in rs)}/{len(rs)}" for rs in groups.values())],
        ["time dilation D", *(summarize([r.time_dilation for r in rs]) for rs in groups.values())],
    ]
    shown = [[r for r in rs if r.ok] or rs for rs in groups.values()]
    per_group = [comparison_rows(rs) for rs in shown]
    for i, first in enumerate(per_group[0]):
        if first[0] != "completed":
            rows.append([first[0], *(summarize(g[i][1:]) for g in per_group)])
    lag = [[round(r.worst_lag_p99_ns / 1e3, 3) for r in rs if r.worst_lag_p99_ns is not None] for rs in shown]
    rows.append([f"sched lag p99, worst (us; limit {LAG_LIMIT_NS / 1e3:g})", *(summarize(v) if v else "n/a" for v in lag)])
    return headers, rows


def repeated_table(runs: list[RunResult]) -> str:
    return table(*repeated_rows(runs))


@dataclass
class Verdict:
    profile: str
    against: str
    differs: bool | None  # None: cannot tell (one run, or runs failed)
    line: str


def median_runs(runs: list[RunResult]) -> list[RunResult]:
    """Per profile, the completed run with the median completion time (the lower middle one for
    an even count; a failed run where none completed): what the plots show."""
    out = []
    for rs in by_profile(runs).values():
        ok = sorted((r for r in rs if r.ok), key=lambda r: r.completion_us) or rs
        out.append(ok[(len(ok) - 1) // 2])
    return out


def verdicts(runs: list[RunResult]) -> list[Verdict]:
    """Each profile after the first against the first, on completion time."""
    groups = by_profile(runs)
    names = list(groups)
    out = []
    base = names[0]
    for other in names[1:]:
        out.append(compare(base, [r.completion_us for r in groups[base] if r.ok],
                           other, [r.completion_us for r in groups[other] if r.ok],
                           flagged=sum(lag_flagged(r) for r in groups[base] + groups[other])))
    return out


def compare(a: str, xs: list[float], b: str, ys: list[float], flagged: int = 0) -> Verdict:
    """Whether ``b``'s completion times differ from ``a``'s beyond the run-to-run spread."""
    caution = f"; {flagged} run(s) flagged for scheduling lag" if flagged else ""
    if not xs or not ys:
        return Verdict(b, a, None, f"verdict: {b} vs {a}: cannot compare, a profile has no completed run{caution}")
    ma, mb = statistics.median(xs), statistics.median(ys)
    diff = mb - ma
    how = f"median {_fmt(mb)} vs {_fmt(ma)} us ({diff:+.1f} us, {diff / ma:+.0%})" if ma else f"median {mb} vs {ma}"
    if len(xs) < 2 or len(ys) < 2:
        return Verdict(b, a, None, f"verdict: {b} vs {a}: {how}; one run per profile shows no spread, so no verdict "
                                   f"(use --repeats 3 or more){caution}")
    spread = max(max(xs) - min(xs), max(ys) - min(ys))
    differs = max(xs) < min(ys) or max(ys) < min(xs)
    if differs:
        head = f"{b} is {'faster' if diff < 0 else 'slower'} than {a} beyond the run-to-run spread"
    else:
        head = f"{b} and {a} do not differ beyond the run-to-run spread"
    text = (f"verdict: {head}: {how}; spread up to {_fmt(spread)} us, completion-time ranges "
            f"{'do not overlap' if differs else 'overlap'}{caution}")
    return Verdict(b, a, differs, text)
