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


def _difftest(program: str, out: Path, capsys) -> tuple[int, str]:
    rc = main([str(PROGRAMS / program), "--count", "40", "--seed", "3", "--ports", "0,1,7", "-o", str(out)])
    printed = capsys.readouterr()
    return rc, printed.out + printed.err


def test_our_target_and_bmv2_agree(tmp_path, capsys) -> None:
    out = tmp_path / "div.stf"
    rc, printed = _difftest("hits.p4", out, capsys)
    assert rc == 0, printed
    assert "no divergence" in printed and not out.exists()


def test_the_one_known_difference_is_found_a_select_without_a_matching_case(tmp_path, capsys) -> None:
    """parser_paths.p4's vlan state has a select without default: P4-16 says NoMatch (ours:
    port 3 + 64), BMv2 accepts (port 3); parser_paths_nomatch.stf holds ours as the regression."""
    out = tmp_path / "div.stf"
    rc, printed = _difftest("parser_paths.p4", out, capsys)
    assert rc == 1, printed
    text = out.read_text()
    assert "-> vlan -> reject)" in text
    ours = next(line for line in text.splitlines() if line.startswith("# ours: "))
    bmv2 = next(line for line in text.splitlines() if line.startswith("# bmv2: "))
    assert ours.startswith("# ours: port 67: ") and bmv2.startswith("# bmv2: port 3: ")
    assert ours.split(": ")[-1] == bmv2.split(": ")[-1]
