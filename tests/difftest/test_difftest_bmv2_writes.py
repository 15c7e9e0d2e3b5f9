"""Our target's writes as BMv2 Thrift calls: names from p4c's JSON, keys in BMv2's byte form,
priorities turned round (larger wins in STF and ours, smaller in BMv2's runtime)."""

from __future__ import annotations

from pathlib import Path

from difftest.targets import Bmv2Writes, OurTarget
from p4rt.entries import CLI_PRIORITY_CEILING
from p4switch.frontend import compile_file

PROGRAM = Path(__file__).parent / "programs" / "hits.p4"
CONFIG = {"pipelines": [{"name": "ingress", "tables": [
    {"name": "I.acl", "actions": ["I.mark", "NoAction"]}, {"name": "I.route", "actions": ["I.fwd", "I.drop"]}]}],
    "actions": [{"name": n} for n in ("I.mark", "NoAction", "I.fwd", "I.drop")]}


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __getattr__(self, name: str):
        return lambda *args: self.calls.append((name, *args)) or len(self.calls)


def test_entries_defaults_and_multicast_become_thrift_calls() -> None:
    ours = OurTarget(compile_file(str(PROGRAM)))
    assert ours.apply([
        "add acl 10 hdr.ipv4.src:0x0a000000&&&0xff000000 hdr.ipv4.proto:6->17 mark(tos:0x2e)",
        "add acl 20 hdr.ipv4.src:0x0a010000&&&0xffff0000 hdr.ipv4.proto:0->255 NoAction()",
        "add route hdr.ipv4.dst:0x0a000001 fwd(port:3, ttl:64)",
        "setdefault acl mark(tos:1)",
        "mc_mgrp_create 5", "mc_node_create 0 1 2", "mc_node_associate 5 0",
    ]) == []
    rt = Recorder()
    Bmv2Writes(CONFIG, ours.prog).replay(ours.writes, rt)
    (_, t1, k1, a1, d1, p1), (_, _, _, _, _, p2), route, default, *mc = rt.calls
    assert (t1, a1, d1) == ("I.acl", "I.mark", [b"\x2e"])
    assert k1 == [{"type": 2, "ternary": {"key": b"\x0a\x00\x00\x00", "mask": b"\xff\x00\x00\x00"}},
                  {"type": 4, "range": {"start": b"\x06", "end_": b"\x11"}}]
    assert p2 < p1 < CLI_PRIORITY_CEILING  # STF priority 20 beats 10: BMv2 wants the smaller number
    assert route == ("table_add", "I.route", [{"type": 0, "exact": {"key": b"\x0a\x00\x00\x01"}}], "I.fwd",
                     [b"\x00\x03", b"\x40"], None)
    assert default == ("table_set_default", "I.acl", "I.mark", [b"\x01"])
    assert mc == [("mc_mgrp_create", 5), ("mc_node_create", 0, [1, 2]), ("mc_node_associate", 5, 6)]


def test_writes_to_a_table_p4c_removed_are_not_sent() -> None:
    """p4c's mid end drops a table whose apply it folds away (gauntlet_nested_switch-bmv2):
    BMv2 has nothing to write to, and the run goes on (outputs decide whether it mattered)."""
    ours = OurTarget(compile_file(str(PROGRAM)))
    assert ours.apply(["add acl 10 hdr.ipv4.src:0x0a000000&&&0xff000000 hdr.ipv4.proto:6->17 mark(tos:0x2e)",
                       "setdefault acl mark(tos:1)",
                       "add route hdr.ipv4.dst:0x0a000001 fwd(port:3, ttl:64)"]) == []
    without_acl = {"pipelines": [{"name": "ingress", "tables": [CONFIG["pipelines"][0]["tables"][1]]}],
                   "actions": CONFIG["actions"]}
    rt = Recorder()
    Bmv2Writes(without_acl, ours.prog).replay(ours.writes, rt)
    assert [c[:2] for c in rt.calls] == [("table_add", "I.route")]
