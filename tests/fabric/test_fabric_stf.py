"""fabric.p4 on our target through its STF tests (p4src/tests/*.stf): routing and drop
reasons, PacketIn/PacketOut, classes, ECN marking, round-robin and best-of-two spraying, DLB
flowlets, PFC pause/resume frames, tx byte counting of transmitted frames, INT
source/transit/sink byte layouts and reports (report,
to-host and to-host-and-report sinks; collector on a port or the CPU port), also with source
and sink on one switch (single-hop INT)."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest

from p4switch.exec import LoadedProgram
from p4switch.frontend import compile_file
from p4switch.stf import run_stf_file

REPO = Path(__file__).resolve().parents[2]
FABRIC = REPO / "p4src" / "fabric.p4"
STF_DIR = REPO / "p4src" / "tests"
STF_FILES = sorted(STF_DIR.glob("*.stf"))


@pytest.fixture(scope="module")
def checked():
    return compile_file(str(FABRIC))


def test_every_feature_has_an_stf_test() -> None:
    names = {p.name for p in STF_FILES}
    assert {"fabric_routing.stf", "fabric_classify.stf", "fabric_ecn.stf", "fabric_spray_rr.stf", "fabric_spray_best2.stf",
            "fabric_dlb.stf", "fabric_pfc.stf", "fabric_tx_bytes.stf",
            "fabric_int_transit.stf", "fabric_int_sink.stf", "fabric_int_sink_both.stf",
            "fabric_int_single_hop.stf"} <= names


def test_stf_files_are_what_the_generator_writes() -> None:
    """The STF files are generated from scapy frames (make_stf.py); an edit by hand would
    drift from the documents they are meant to check."""
    spec = importlib.util.spec_from_file_location("fabric_make_stf", STF_DIR / "make_stf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, make in module.TESTS.items():
        assert (STF_DIR / name).read_text() == make(), f"{name} is stale: run python p4src/tests/make_stf.py"


def test_ternary_entries_carry_the_priority_bmv2_needs(checked) -> None:
    """p4c's BMv2 STF driver turns ``add`` into ``table_add``, which BMv2 refuses for a table
    with ternary/range keys unless a priority follows the table name."""
    tables = LoadedProgram.from_checked(checked).tables
    checked_lines = 0
    for stf in STF_FILES:
        for line in stf.read_text().splitlines():
            words = line.split()
            if words[:1] == ["add"] and tables[words[1]].needs_priority:
                assert words[2].isdigit(), f"{stf.name}: {line}"
                checked_lines += 1
    assert checked_lines >= 4


@pytest.mark.parametrize("stf", STF_FILES, ids=[p.stem for p in STF_FILES])
def test_fabric_stf(checked, stf: Path) -> None:
    prog = LoadedProgram.from_checked(checked)
    log = io.StringIO()
    result = run_stf_file(prog, stf, out=log)
    assert result.ok, f"{stf.name}:\n" + "\n".join(result.failures)
    assert result.packets_received > 0
