"""p4switch-difftest against the real reference (p4c + BMv2 simple_switch): the test programs
run the same on both. Skipped, naming the tool, where p4c or simple_switch is missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from difftest.cli import main

pytestmark = pytest.mark.net
PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(autouse=True)
def reference_tools() -> None:
    for tool in ("p4c", "simple_switch"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (reference p4c + BMv2)")


@pytest.mark.parametrize("program", ["hits.p4", "parser_paths.p4"])
def test_our_target_and_bmv2_agree(program, tmp_path, capsys) -> None:
    out = tmp_path / "div.stf"
    rc = main([str(PROGRAMS / program), "--count", "40", "--seed", "3", "--ports", "0,1,7", "-o", str(out)])
    printed = capsys.readouterr()
    assert rc == 0, printed.out + printed.err
    assert "no divergence" in printed.out and not out.exists()
