"""Flow-size CDFs, Poisson arrivals, workload specs and statistics on their own."""

from __future__ import annotations

import math
import random

import pytest

from nicmodel.stats import RunStats, percentile
from nicmodel.workloads import CDF_ENV, FlowSizeCdf, WorkloadSpec, cdf_dir, poisson_arrivals

PEERS = [{"rank": i, "ip": f"10.0.0.{i + 1}", "mac": f"02:00:00:00:00:0{i + 1}"} for i in range(3)]


def test_shared_cdfs_load_and_sample_by_linear_interpolation() -> None:
    ws = FlowSizeCdf.load("websearch")
    assert ws.sizes[0] == 0 and ws.percents[-1] == 100
    assert ws.size_at(15) == 10_000  # a CDF point
    assert ws.size_at(17.5) == 15_000  # halfway between 10 KB @ 15 % and 20 KB @ 20 %
    assert ws.size_at(0) == 1  # never a zero-byte flow
    fb = FlowSizeCdf.load("fbhdp")
    rng = random.Random(4)
    samples = [fb.sample(rng) for _ in range(20_000)]
    assert abs(sum(samples) / len(samples) - fb.mean()) / fb.mean() < 0.15
    assert sum(s <= 1000 for s in samples) / len(samples) == pytest.approx(0.60, abs=0.02)


def test_cdf_mean_of_a_hand_made_distribution(tmp_path) -> None:
    path = tmp_path / "two.txt"
    path.write_text("0 0\n100 50\n300 100\n")
    cdf = FlowSizeCdf.load(str(path))
    assert cdf.mean() == pytest.approx(0.5 * 50 + 0.5 * 200)
    with pytest.raises(ValueError, match="must not decrease"):
        FlowSizeCdf.parse("0 0\n100 60\n50 100\n")
    with pytest.raises(ValueError, match="end at 100"):
        FlowSizeCdf.parse("0 0\n100 60\n")
    with pytest.raises(ValueError, match="expected"):
        FlowSizeCdf.parse("0 0\nbig 100\n")


def test_cdf_dir_env_override_and_clear_error_when_missing(tmp_path, monkeypatch) -> None:
    assert cdf_dir().name == "flow_size_cdf" and cdf_dir().parent.parent.name == "shared"
    monkeypatch.setenv(CDF_ENV, str(tmp_path))
    with pytest.raises(FileNotFoundError, match=CDF_ENV):
        FlowSizeCdf.load("websearch")
    (tmp_path / "WebSearch_distribution.txt").write_text("0 0\n10 100\n")
    assert FlowSizeCdf.load("websearch").sizes == (0.0, 10.0)


def test_poisson_arrivals_match_load_and_spread_destinations() -> None:
    cdf = FlowSizeCdf.parse("1000 0\n1000 100\n")  # every flow 1000 bytes
    flows = poisson_arrivals(cdf, 4, 0.5, 1e9, duration_ns=20_000_000, rng=random.Random(2))
    # mean gap = 1000 B * 8 / (0.5 * 1 Gb/s) = 16 us per host: ~1250 flows per host in 20 ms
    per_host = [sum(f.src == h for f in flows) for h in range(4)]
    assert all(abs(n - 1250) < 150 for n in per_host)
    assert all(f.src != f.dst for f in flows)
    assert {f.dst for f in flows if f.src == 0} == {1, 2, 3}
    assert [f.t_ns for f in flows] == sorted(f.t_ns for f in flows)
    with pytest.raises(ValueError, match="load"):
        poisson_arrivals(cdf, 4, 1.5, 1e9, flows_per_host=1, rng=random.Random(0))


def test_workload_spec_validation_messages() -> None:
    ok = WorkloadSpec.from_dict({"kind": "incast", "peers": PEERS, "rank": 2, "dst": 2, "size": 1e6,
                                 "load": 1, "duration_ns": None})
    assert ok.peer(1).ip == "10.0.0.2" and ok.size == 1_000_000 and isinstance(ok.size, int)
    bad = [
        ({"kind": "incast", "peers": PEERS}, "needs 'kind' and 'rank'"),
        ({"kind": "incast", "peers": PEERS, "rank": 5}, "not a rank"),
        ({"kind": "p2p", "peers": PEERS, "rank": 0, "src": 1, "dst": 1}, "src != dst"),
        ({"kind": "p2p", "peers": PEERS[:1], "rank": 0}, "at least 2"),
        ({"kind": "p2p", "peers": [{"ip": "10.0.0.1"}], "rank": 0}, "ip and mac"),
        ({"kind": "p2p", "peers": PEERS, "rank": 0, "colour": 1}, "unknown workload field"),
        ({"kind": "poisson", "peers": PEERS, "rank": 0}, "duration_ns or flows_per_host"),
        ({"kind": "p2p", "peers": [{**PEERS[0], "ip": "10.0.0"}, PEERS[1]], "rank": 0}, "10.0.0"),
        ({"kind": "p2p", "peers": PEERS, "rank": 0, "size": "big"}, "'size' must be int"),
        ({"kind": "p2p", "peers": PEERS, "rank": 0, "size": 1.5}, "'size' must be int"),
        ({"kind": "p2p", "peers": PEERS, "rank": True}, "'rank' must be int"),
    ]
    for spec, message in bad:
        with pytest.raises(ValueError, match=message):
            WorkloadSpec.from_dict(spec)


def test_stats_slowdown_goodput_and_percentiles() -> None:
    stats = RunStats(line_rate_bps=100e9, base_rtt_ns=10_000)
    a = stats.message_started("h1", "h2", 125_000, 0)  # ideal 10 us + 10 us
    b = stats.message_started("h1", "h3", 125_000, 10_000)
    stats.message_done(a, 40_000)
    stats.message_done(b, 30_000)
    stats.message_started("h2", "h1", 1, 0)  # never completes
    assert a.ideal_ns == 20_000 and a.slowdown == 2.0 and b.slowdown == 1.0
    s = stats.summary()
    assert s["completed"] == 2 and s["messages"] == 3
    assert s["goodput_bps"] == pytest.approx(250_000 * 8 / 40e-6)
    assert percentile([5, 1, 4, 2, 3], 50) == 3 and math.isnan(percentile([], 50))
    doc = stats.to_dict()
    assert doc["messages"][2]["fct_ns"] is None and doc["messages"][2]["slowdown"] is None
