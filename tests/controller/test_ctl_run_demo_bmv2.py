"""``make run`` on the reference BMv2 (``--target bmv2``), where p4c and simple_switch_grpc are
installed: D calibrated from what BMv2 sustains, both profiles complete with their data intact,
the table shows the D used and where each switch figure came from (registers over Thrift,
counters over P4Runtime), PFC pauses the BMv2 leaves send reach the NICs, and the plots are
written. Skipped elsewhere, naming the missing tool.

Kept to a few minutes: one run per profile of a 256 KiB all-reduce. The uplinks run at 25 Gb/s
under 100 Gb/s hosts, so the cross-leaf flows queue at the leaves and baseline's PFC (XOFF
40 KB) pauses the senders, which shows the pauses reaching the NICs."""

from __future__ import annotations

import logging
import secrets
import shutil

import pytest

from controller import run_demo
from controller.results import RunResult

pytestmark = [pytest.mark.net, pytest.mark.slow]  # Mininet as root, a whole fabric

MISSING = [tool for tool in ("p4c", "simple_switch_grpc", "simple_switch_CLI") if shutil.which(tool) is None]


def _cells(row: str) -> list[str]:
    """A table row's cells (columns are separated by two or more spaces)."""
    return [c.strip() for c in row.split("  ") if c.strip()]


@pytest.mark.skipif(bool(MISSING), reason=f"BMv2 demo needs the reference tools; not installed: {', '.join(MISSING)}")
def test_make_run_on_bmv2_completes_both_profiles(tmp_path, capsys, caplog):
    caplog.set_level(logging.INFO)
    out = tmp_path / "out"
    rc = run_demo.main(["--target", "bmv2", "--repeats", "1", "--size", str(256 * 1024), "--uplink-gbps", "25",
                        "--prefix", "b" + secrets.token_hex(1), "--out", str(out),
                        "--state", str(tmp_path / "state.json"), "--timeout", "300"])
    text = capsys.readouterr().out
    assert rc == 0, text + caplog.text
    rows = {_cells(line)[0]: _cells(line)[1:] for line in text.splitlines() if _cells(line)}
    assert rows["runs completed"] == ["1/1", "1/1"]
    runs = [RunResult.load(path) for path in sorted((out / "runs").glob("*.json"))]
    assert [r.profile for r in runs] == ["baseline", "ai-fabric"]
    for r in runs:  # every message done, every receiver's bytes checked equal to what was sent
        assert r.ok and len(r.data_verified) == 4 and r.bytes_delivered > 0, r.errors
    assert float(rows["time dilation D"][0].replace(",", "")) > 1  # BMv2 runs dilated too
    assert "calibrating the time dilation: bmv2" in caplog.text
    pauses_sent, pfc_frames_at_nics = (int(rows[name][0].replace(",", ""))
                                       for name in ("PFC pauses sent", "PFC frames into NICs (rx_pause)"))
    assert pauses_sent > 0 and pfc_frames_at_nics > 0  # the BMv2 leaves' pauses (and resumes) reach the hosts
    assert any(float(u.rstrip("%")) > 0 for u in rows["busiest link util"])  # port byte registers were read
    assert "source of mean fabric link util, busiest link util: register port_tx_bytes, Thrift register_read" in text
    assert "counter pfc_pauses_sent, P4Runtime counter read" in text
    assert {p.name for p in (out / "plots").iterdir()} >= {"fct_cdf.png", "link_util_heatmap.png"}
