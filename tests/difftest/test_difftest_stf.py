"""The divergence report is an STF test that p4switch-stf runs: it passes when our target
does what BMv2 did and fails when it does not, drops included (--all-ports)."""

from __future__ import annotations

from pathlib import Path

import pytest

from difftest.generate import Packet
from difftest.run import Config, Divergence, stf_text
from difftest.targets import OurTarget
from p4switch.frontend import compile_file
from p4switch.stf.cli import main as stf_main

PROGRAM = Path(__file__).parent / "programs" / "hits.p4"
LINES = ["add I.route hdr.ipv4.dst:0x0a000001 I.fwd(port:0x2, ttl:0x7)"]
ETH_IPV4 = bytes.fromhex("00000000000100000000000208004500001c0000000040110000c00000010a000001") + b"\xaa" * 8
OTHER = bytes.fromhex("00000000000100000000000208004500001c0000000040110000c00000010a000009")


@pytest.fixture(scope="module")
def ours_out():
    t = OurTarget(compile_file(str(PROGRAM)))
    t.apply(LINES)
    return t.send(1, OTHER), t.send(1, ETH_IPV4)


def _write(tmp_path, ours, bmv2, history=()) -> Path:
    d = Divergence(7, Packet(1, ETH_IPV4, "path start -> ipv4 -> accept"), ours, bmv2, LINES, list(history), True)
    path = tmp_path / "div.stf"
    path.write_text(stf_text(Config(str(PROGRAM), seed=3), d))
    return path


def test_the_report_names_program_seed_and_both_outputs(tmp_path, ours_out) -> None:
    _, forwarded = ours_out
    text = _write(tmp_path, forwarded, []).read_text()
    assert f"# program: {PROGRAM}" in text and "# seed 3, packet 7" in text
    assert f"# ours: port 2: {forwarded[0][1].hex().upper()}" in text
    assert "# bmv2: dropped" in text
    assert LINES[0] in text.splitlines() and f"packet 1 {ETH_IPV4.hex().upper()}" in text.splitlines()


def test_it_passes_when_ours_does_what_bmv2_did(tmp_path, ours_out) -> None:
    dropped, forwarded = ours_out
    stf = _write(tmp_path, [(3, b"x")], forwarded, history=[(Packet(1, OTHER, "random"), dropped)])
    assert stf_main(["--all-ports", str(PROGRAM), str(stf)]) == 0


def test_it_fails_on_other_bytes_or_port(tmp_path, ours_out) -> None:
    _, forwarded = ours_out
    port, frame = forwarded[0]
    assert stf_main(["--all-ports", str(PROGRAM), str(_write(tmp_path, forwarded, [(port, frame[:-1] + b"\x00")]))]) == 1
    assert stf_main(["--all-ports", str(PROGRAM), str(_write(tmp_path, forwarded, [(port + 1, frame)]))]) == 1


def test_a_drop_by_bmv2_fails_only_with_all_ports(tmp_path, ours_out) -> None:
    _, forwarded = ours_out
    stf = _write(tmp_path, forwarded, [])
    assert stf_main(["--all-ports", str(PROGRAM), str(stf)]) == 1
    assert stf_main([str(PROGRAM), str(stf)]) == 0  # p4c's driver never looks at port 2


def test_a_select_without_a_matching_case_is_nomatch_on_our_target() -> None:
    """The regression the BMv2 run found (parser_paths_nomatch.stf): ours rejects with NoMatch
    as P4-16 says, where BMv2 accepts (the documented difference)."""
    programs = Path(__file__).parent / "programs"
    assert stf_main(["--all-ports", str(programs / "parser_paths.p4"), str(programs / "parser_paths_nomatch.stf")]) == 0
