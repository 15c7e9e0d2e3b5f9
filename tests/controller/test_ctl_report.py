"""Run results, the comparison table, the PNG plots and workload specs (INT report parsing:
test_ctl_telemetry.py)."""

from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import pytest

from controller.report import comparison_table, plot
from controller.results import LinkSeries, Message, RunResult
from controller.telemetry import Telemetry
from controller.workloads import build_result, workload_specs
from topo.builder import leaf_spine


def _run(profile: str, fct: float, util: float) -> RunResult:
    msgs = [Message("h1_1", "h2_1", 65536, fct * (i + 1), 10.0) for i in range(10)]
    links = [LinkSeries("leaf1:3->spine1", [10.0, 20.0], [util, util / 2]),
             LinkSeries("leaf1:4->spine2", [10.0, 20.0], [0.0, util])]
    return RunResult("all-reduce", profile, {"size": 65536}, completion_us=fct * 10, bytes_delivered=655360,
                     messages=msgs, retransmissions=7, pauses=3, ecn_marks=11, links=links,
                     queue_depth={"spine1:2": [(1.0, 4), (2.0, 9)]})


def test_result_round_trip_and_statistics(tmp_path):
    r = _run("baseline", 20.0, 0.8)
    path = tmp_path / "runs" / "001.json"
    r.save(path)
    back = RunResult.load(path)
    assert back == r
    assert back.fct_percentiles() == {"p50": 100.0, "p95": 200.0, "p99": 200.0, "max": 200.0}
    assert back.slowdown_percentiles()["p50"] == 10.0
    assert back.goodput_gbps == pytest.approx(655360 * 8 / 200e3)
    assert back.mean_link_util == pytest.approx((0.6 + 0.4) / 2)


def test_comparison_table_side_by_side():
    text = comparison_table([_run("baseline", 20.0, 0.8), _run("ai-fabric", 10.0, 0.4)])
    lines = text.splitlines()
    assert "all-reduce/baseline" in lines[0] and "all-reduce/ai-fabric" in lines[0]
    assert next(line for line in lines if line.startswith("aggregate goodput")).split()[-2:] == ["26.2", "52.4"]
    row = next(line for line in lines if line.startswith("completion time"))
    assert row.split()[-2:] == ["200", "100"]
    assert next(line for line in lines if line.startswith("PFC pauses")).split()[-2:] == ["3", "3"]
    assert next(line for line in lines if line.startswith("ECN marks")).split()[-2:] == ["11", "11"]


def test_plots_are_pngs(tmp_path):
    paths = plot([_run("baseline", 20.0, 0.8), _run("ai-fabric", 10.0, 0.4)], tmp_path)
    assert {p.name for p in paths} == {"comparison.csv", "fct_cdf.png", "slowdown.png", "link_util_heatmap.png",
                                       "queue_depth.png"}
    rows = list(csv.reader((tmp_path / "comparison.csv").open()))
    assert rows[0] == ["metric", "all-reduce/baseline", "all-reduce/ai-fabric"]
    assert ["completion time (us)", "200.0", "100.0"] in rows
    for p in paths[1:]:
        data = p.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_workload_specs_give_each_host_its_rank_and_gateway():
    t = leaf_spine()
    specs = workload_specs(t, "all-reduce", ["h1_1", "h1_2", "h2_1", "h2_2"], size=4096)
    assert [s["rank"] for s in specs.values()] == [0, 1, 2, 3]
    assert specs["h2_1"]["kind"] == "allreduce" and specs["h2_1"]["size"] == 4096
    assert [p["ip"] for p in specs["h1_1"]["peers"]] == ["10.1.1.2", "10.1.2.2", "10.2.1.2", "10.2.2.2"]
    assert {p["mac"] for p in specs["h2_2"]["peers"]} == {t.switch("leaf2").mac}
    p = workload_specs(t, "poisson", ["h1_1", "h2_1"], size=1, cdf="websearch", load=0.5, flows=9)
    assert (p["h2_1"]["cdf"], p["h2_1"]["load"], p["h2_1"]["flows_per_host"]) == ("websearch", 0.5, 9)
    assert workload_specs(t, "incast", ["h1_1", "h2_1"], size=1)["h2_1"]["dst"] == 0
    with pytest.raises(ValueError, match="multiple of the 4 hosts"):
        workload_specs(t, "all-reduce", ["h1_1", "h1_2", "h2_1", "h2_2"], size=4097)
    with pytest.raises(ValueError, match="at least two hosts"):
        workload_specs(t, "incast", ["h1_1"], size=1)


def test_selective_repeat_story_reaches_the_table(tmp_path):
    """Retransmissions, spurious ones, out-of-order packets kept and dropped and the reorder peak
    come from the NICs' counters (summed over hosts; the peak is the worst host's) into the table."""
    def nic(retx: int, spurious: int, ooo: int, ooo_dropped: int, peak_ns: int) -> dict:
        counters = {"retransmitted_pkts": retx, "spurious_retransmits": spurious, "out_of_order_received": ooo,
                    "out_of_order_dropped": ooo_dropped, "reorder_peak_ns": peak_ns}
        return {"messages": [{"src": "10.1.1.2", "dst": "10.2.1.2", "size": 4096, "start_ns": 0,
                              "end_ns": 9000, "fct_ns": 9000, "ideal_ns": 3000}],
                "summary": {"counters": counters}}

    tel = Telemetry(SimpleNamespace(topo=leaf_spine()))
    stats = {"h1_1": nic(5, 2, 114, 0, 6285), "h2_1": nic(1, 1, 129, 3, 2252)}
    r = build_result("all-reduce", "ai-fabric", {"h1_1": {"size": 4096}}, stats, tel, [])
    assert (r.retransmissions, r.spurious_retransmissions, r.ooo_reassembled, r.ooo_dropped) == (6, 3, 240, 3)
    assert r.reorder_peak_us == pytest.approx(6.285)
    lines = comparison_table([r]).splitlines()

    def value(metric: str) -> str:
        return next(line for line in lines if line.startswith(metric)).split()[-1]

    assert [value(m) for m in ("retransmitted packets", "spurious retransmissions", "OOO packets reassembled",
                               "OOO packets dropped", "reorder peak (us)")] == ["6", "3", "240", "3", "6.29"]
    # a run saved before these rows existed gets them from its NIC statistics
    r.save(tmp_path / "old.json")
    old = json.loads((tmp_path / "old.json").read_text())
    for key in ("spurious_retransmissions", "ooo_reassembled", "ooo_dropped", "reorder_peak_us"):
        del old[key]
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert RunResult.load(tmp_path / "old.json") == r
