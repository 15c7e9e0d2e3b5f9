"""``make run`` on the reference BMv2 (``--target bmv2``), where p4c and simple_switch_grpc are
installed: D calibrated from what BMv2 sustains, both profiles complete with their data intact,
the table shows the D used, and the plots are written. Skipped, saying why, elsewhere."""

from __future__ import annotations

import logging
import os
import secrets
import shutil

import pytest

from controller import run_demo

pytestmark = pytest.mark.net  # Mininet, as root

MISSING = [tool for tool in ("p4c", "simple_switch_grpc", "simple_switch_CLI") if shutil.which(tool) is None]
# Issue 15 is open: on BMv2 the ai-fabric profile has not completed yet (HPCC sees the dilated
# INT link rate rounded to 1 Mb/s), and one run takes minutes; so this runs on request only.
REQUESTED = os.environ.get("AIFABRIC_BMV2_DEMO") == "1"


@pytest.mark.skipif(bool(MISSING), reason=f"BMv2 demo needs the reference tools; not installed: {', '.join(MISSING)}")
@pytest.mark.skipif(not REQUESTED, reason="BMv2 demo runs on request (AIFABRIC_BMV2_DEMO=1): issue 15 is open")
def test_make_run_on_bmv2_completes_both_profiles(tmp_path, capsys, caplog):
    caplog.set_level(logging.INFO)
    out = tmp_path / "out"
    rc = run_demo.main(["--target", "bmv2", "--repeats", "1", "--size", str(64 * 1024),
                        "--prefix", "b" + secrets.token_hex(1), "--out", str(out),
                        "--state", str(tmp_path / "state.json"), "--timeout", "300"])
    text = capsys.readouterr().out
    assert rc == 0, text + caplog.text
    rows = {line.split("  ")[0].strip(): line for line in text.splitlines()}
    assert rows["runs completed"].split()[-2:] == ["1/1", "1/1"]
    assert float(rows["time dilation D"].split()[-1].replace(",", "")) > 1  # BMv2 runs dilated too
    assert "calibrating the time dilation: bmv2" in caplog.text
    assert {p.name for p in (out / "plots").iterdir()} >= {"fct_cdf.png", "link_util_heatmap.png"}
