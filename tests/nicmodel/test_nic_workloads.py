"""Flow-size CDFs, Poisson arrivals, workload specs and statistics on their own."""

from __future__ import annotations

import math
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nicmodel
from fabricsim.reference_fabric import FabricConfig, SimFabric
from nicmodel.settings import NicSettings
from nicmodel.stats import RunStats, percentile
from nicmodel.workloads import CDF_FILES, FlowSizeCdf, WorkloadSpec, poisson_arrivals

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


def test_the_cdfs_ship_inside_the_package_with_their_provenance() -> None:
    data = Path(nicmodel.__file__).parent / "data" / "flow_size_cdf"
    assert sorted(p.name for p in data.glob("*.txt")) == sorted(CDF_FILES.values())
    assert "HPCC" in (data / "README.md").read_text()
    for name in CDF_FILES:
        assert FlowSizeCdf.load(name).percents[-1] == 100
    with pytest.raises(ValueError, match="websearch"):
        FlowSizeCdf.load("no-such-workload")


def test_a_copy_of_the_package_with_nothing_beside_it_has_its_cdfs(tmp_path) -> None:
    """A user's clone or an installed package: no ../shared, no data folder next to it."""
    for pkg in ("nicmodel", "netbase"):
        shutil.copytree(Path(nicmodel.__file__).parent.parent / pkg, tmp_path / pkg,
                        ignore=shutil.ignore_patterns("__pycache__"))
    # the package is the copy (its compiled modules may come from the build: data is the package's)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import nicmodel, nicmodel.workloads as w; "
            "assert nicmodel.__file__.startswith(sys.argv[1]), nicmodel.__file__; "
            "print(w.FlowSizeCdf.load('websearch').size_at(15))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "10000"


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
    # 125,000 B at MTU 1024: 123 packets of 58 header + 24 wire-overhead bytes, one RETH:
    # 135,102 B on the wire = 10.808 us at 100 Gb/s, plus the 10 us base RTT
    a = stats.message_started("h1", "h2", 125_000, 0)
    b = stats.message_started("h1", "h3", 125_000, 10_000)
    stats.message_done(a, 41_616)
    stats.message_done(b, 30_000)
    stats.message_started("h2", "h1", 1, 0)  # never completes
    assert a.ideal_ns == 20_808 and a.slowdown == 2.0 and b.slowdown == 1.0
    s = stats.summary()
    assert s["completed"] == 2 and s["messages"] == 3
    assert s["goodput_bps"] == pytest.approx(250_000 * 8 / 41.616e-6)
    assert percentile([5, 1, 4, 2, 3], 50) == 3 and math.isnan(percentile([], 50))
    doc = stats.to_dict()
    assert doc["messages"][2]["fct_ns"] is None and doc["messages"][2]["slowdown"] is None


def test_ideal_fct_counts_headers_so_a_lone_message_runs_at_its_ideal() -> None:
    # a 1 MiB WRITE alone on the simulated fabric: its FCT is the ideal within a few
    # store-and-forward packet times (payload-only arithmetic would say 8 % slower)
    for mtu in (1024, 4096):
        fabric = SimFabric(FabricConfig(hosts=2))
        stats = fabric.run({"kind": "p2p", "size": 1 << 20, "count": 1, "src": 0, "dst": 1,
                            "verify": False},
                           NicSettings(cc="none", mtu=mtu, base_rtt_ns=fabric.base_rtt_ns()))
        m = stats.messages[0]
        assert 1.0 <= m.fct_ns / m.ideal_ns < 1.05, (mtu, m.fct_ns, m.ideal_ns)
