"""Fixtures of the switch tests: basic.p4 compiled once, loaded fresh per test."""

from __future__ import annotations

import pytest

from p4switch.entries import ActionCall, Lpm, TableEntry
from ptf_tests.basic_program import BASIC_P4, FORWARD, TABLE


@pytest.fixture(scope="session")
def basic_checked():
    from p4switch.frontend import compile_file

    return compile_file(str(BASIC_P4))


@pytest.fixture()
def basic_program(basic_checked):
    """A fresh LoadedProgram of basic.p4 with a route 10.0.2.0/24 -> port 2 (MAC ...02:02)."""
    from p4switch.exec import LoadedProgram

    prog = LoadedProgram.from_checked(basic_checked)
    prog.tables[TABLE].insert(TableEntry({"hdr.ipv4.dstAddr": Lpm(0x0A000200, 24)},
                                         ActionCall(FORWARD, {"dstAddr": 0x000000000202, "port": 2})))
    return prog
