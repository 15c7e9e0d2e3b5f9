"""The parser-path walker: a frame per path that really takes that path on our target."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from difftest.paths import ParserPaths
from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.frontend import compile_file

PROGRAM = Path(__file__).parent / "programs" / "parser_paths.p4"
STATE_IDS = {"tagged": 1, "eth": 2, "vlan": 3, "peek": 4, "ipv4": 5, "frag": 6, "l4": 7, "bad_tag": 8, "bad_frag": 9,
             "hop": 10}
# (last state, how the parser ended) of every path of the program
ENDS = {("bad_tag", "reject"), ("eth", "accept"), ("vlan", "accept"), ("vlan", "reject"), ("peek", "accept"),
        ("ipv4", "accept"), ("frag", "accept"), ("bad_frag", "reject"), ("l4", "accept"), ("hop", "accept")}
ERROR_STATES = {"vlan"}  # its rejects are errors (NoMatch, StackOutOfBounds); the bad_* ones are explicit


@pytest.fixture(scope="module")
def checked():
    return compile_file(str(PROGRAM))


def test_every_path_ends_where_the_walker_says(checked) -> None:
    paths = ParserPaths(checked, random.Random(7), [0, 1, 2, 7]).paths()
    pipe = V1Pipeline(LoadedProgram.from_checked(checked))
    seen = set()
    for p in paths:
        assert p.steered, p.name
        out = pipe.process(p.port, p.frame)
        expected = STATE_IDS[p.states[-1]] + (64 if p.end == "reject" and p.states[-1] in ERROR_STATES else 0)
        assert [port for port, _ in out] == [expected], f"{p.name}: frame {p.frame.hex()} on port {p.port}"
        seen.add((p.states[-1], p.end))
    assert seen == ENDS


def test_loops_and_stack_overflow_are_walked(checked) -> None:
    names = {p.name for p in ParserPaths(checked, random.Random(1), [0]).paths()}
    assert "start -> eth -> vlan -> vlan -> ipv4 -> l4 -> accept" in names
    assert "start -> eth -> vlan -> vlan -> vlan -> reject" in names  # the third tag overflows vlan[2]
    assert "start -> tagged -> eth -> peek -> ipv4 -> frag -> bad_frag -> reject" in names


def test_the_same_seed_gives_the_same_frames(checked) -> None:
    def frames(seed: int) -> list[tuple[int, bytes]]:
        return [(p.port, p.frame) for p in ParserPaths(checked, random.Random(seed), [0, 1]).paths()]

    assert frames(3) == frames(3)
    assert frames(3) != frames(4)


def test_extracted_fields_are_read_back_from_the_frame(checked) -> None:
    p = next(p for p in ParserPaths(checked, random.Random(2), [0]).paths()
             if p.states[-1] == "l4" and "tagged" not in p.states)
    assert p.fields["ipv4.ihl"] == (5, 4)
    assert p.fields["ipv4.proto"][0] in (6, 17)
    eth_type = p.fields["eth.ether_type"][0]
    assert int.from_bytes(p.frame[12:14], "big") == eth_type
