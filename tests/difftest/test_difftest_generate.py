"""Entries and packets of a differential run: deterministic per seed, taken by our target,
and good enough to hit table entries."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from difftest.generate import mutate, stf_key_name
from difftest.run import Config, ToolError, derive_inputs
from difftest.targets import OurTarget
from p4switch.frontend import compile_file

PROGRAMS = Path(__file__).parent / "programs"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hits():
    return compile_file(str(PROGRAMS / "hits.p4"))


def test_the_same_seed_derives_the_same_run(hits) -> None:
    a = derive_inputs(hits, Config("hits.p4", seed=5, count=40))
    b = derive_inputs(hits, Config("hits.p4", seed=5, count=40))
    c = derive_inputs(hits, Config("hits.p4", seed=6, count=40))
    assert a == b
    assert a[0] != c[0] and a[2] != c[2]
    assert len(a[2]) == 40


def test_generated_entries_are_taken_and_hit(hits) -> None:
    lines, refused, pkts, npaths = derive_inputs(hits, Config("hits.p4", seed=1, count=60, per_table=3))
    assert refused == [] and npaths == 2
    assert {line.split()[1] for line in lines if line.startswith(("add", "setdefault"))} == {"I.acl", "I.route"}
    assert "mc_mgrp_create 1" in lines and "mirroring_add 4" in " ".join(lines)  # copies have somewhere to go
    target = OurTarget(hits)
    assert target.apply(lines) == []
    out = [target.send(p.port, p.frame) for p in pkts]
    # the default is a constant drop: whatever leaves was forwarded by one of the entries
    forwarded = [o for o in out if o]
    assert len(forwarded) >= 2  # random 32-bit keys would match none
    assert {p.origin.split(" ")[0] for p in pkts} == {"path", "mutated", "random"}


def test_fabric_entries_cover_its_tables_and_are_all_taken() -> None:
    fabric = compile_file(str(ROOT / "p4src/fabric.p4"), include_dirs=[str(ROOT / "p4src"), str(ROOT / "p4src/include")])
    lines, refused, pkts, npaths = derive_inputs(fabric, Config("fabric.p4", seed=2, count=10))
    assert refused == []
    tables = {line.split()[1] for line in lines if line.startswith("add ")}
    assert {"FabricIngress.acl.acl", "FabricIngress.classify.classify"} <= tables
    assert npaths >= 10


def test_entries_file_lines_and_packets_are_used(tmp_path, hits) -> None:
    stf = tmp_path / "t.stf"
    stf.write_text("add I.route hdr.ipv4.dst:0x0a000001 I.fwd(port:3, ttl:9)\n"
                   "packet  1 " + "00 " * 30 + "\nexpect 3 " + "00" * 30 + "\n")  # spaced as p4c writes some
    lines, _, pkts, _ = derive_inputs(hits, Config("hits.p4", entries=str(stf), generate_entries=False, count=30))
    assert lines == ["add I.route hdr.ipv4.dst:0x0a000001 I.fwd(port:3, ttl:9)"]
    stf.write_text("add I.route hdr.ipv4.dst:0x0a000001 I.nope()\n")
    with pytest.raises(ToolError, match="our target refuses"):
        derive_inputs(hits, Config("hits.p4", entries=str(stf)))


def test_key_names_for_stf() -> None:
    assert stf_key_name("hdr.ipv4.dst") == "hdr.ipv4.dst"
    assert stf_key_name("hdr.x.f & 0xFF") == "hdr.x.f"
    assert stf_key_name("hdr.x.f[7:0]") == "hdr.x.f[7:0]"
    assert stf_key_name("meta.a + meta.b") is None


def test_mutation_changes_the_frame_deterministically() -> None:
    frame = bytes(range(40))
    a = [mutate(random.Random(s), frame) for s in range(20)]
    assert a == [mutate(random.Random(s), frame) for s in range(20)]
    assert all(m != frame and m for m in a)
