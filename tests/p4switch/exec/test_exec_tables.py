"""Table matching and control-plane validation, without a P4 program."""

import random

import pytest

from p4rt.entries import (
    ActionCall,
    AlreadyExistsError,
    CounterData,
    Exact,
    GroupRef,
    InvalidEntryError,
    Lpm,
    MatchKind,
    MemberRef,
    MeterConfig,
    NotFoundError,
    Optional,
    Range,
    ResourceExhaustedError,
    TableEntry,
    Ternary,
)
from p4switch.exec.externs import GREEN, RED, YELLOW, DirectCounter, DirectMeter, Meter
from p4switch.exec.hashes import crc16
from p4switch.exec.tables import ActionInfo, ActionProfile, KeyField, Table

FWD = ActionInfo("c.fwd", (("port", 9),))
DROP = ActionInfo("c.drop", ())


def table(key, size=16, **kw):
    return Table("c.t", key, [FWD, DROP], size, ActionCall("c.drop"), **kw)


def fwd(p):
    return ActionCall("c.fwd", {"port": p})


def test_exact_hit_miss_and_default():
    t = table([KeyField("k", MatchKind.EXACT, 16)])
    t.insert(TableEntry({"k": Exact(5)}, fwd(3)))
    assert t.apply((5,), 64, 0) == (0, (3,), True)
    assert t.apply((6,), 64, 0) == (1, (), False)
    t.set_default(fwd(9))
    assert t.apply((6,), 64, 0) == (0, (9,), False)
    t.reset_default()
    assert t.apply((6,), 64, 0)[0] == 1


def test_lpm_longest_prefix_wins():
    t = table([KeyField("dst", MatchKind.LPM, 32)])
    t.insert(TableEntry({"dst": Lpm(0x0A000000, 8)}, fwd(1)))
    t.insert(TableEntry({"dst": Lpm(0x0A010000, 16)}, fwd(2)))
    t.insert(TableEntry({"dst": Lpm(0, 0)}, fwd(3)))
    assert t.apply((0x0A010203,), 0, 0)[1] == (2,)
    assert t.apply((0x0A020203,), 0, 0)[1] == (1,)
    assert t.apply((0x0B000000,), 0, 0)[1] == (3,)
    t.delete(TableEntry({"dst": Lpm(0x0A010000, 16)}, fwd(2)))
    assert t.apply((0x0A010203,), 0, 0)[1] == (1,)


def test_lpm_with_exact_field():
    t = table([KeyField("vrf", MatchKind.EXACT, 8), KeyField("dst", MatchKind.LPM, 32)])
    t.insert(TableEntry({"vrf": Exact(1), "dst": Lpm(0x0A000000, 8)}, fwd(1)))
    t.insert(TableEntry({"vrf": Exact(2), "dst": Lpm(0x0A000000, 24)}, fwd(2)))
    assert t.apply((1, 0x0A000001), 0, 0)[1] == (1,)
    assert t.apply((2, 0x0A000001), 0, 0)[1] == (2,)
    assert t.apply((2, 0x0A000101), 0, 0)[2] is False


def test_ternary_larger_priority_wins():
    t = table([KeyField("k", MatchKind.TERNARY, 8)])
    t.insert(TableEntry({"k": Ternary(0x10, 0xF0)}, fwd(1), priority=10))
    t.insert(TableEntry({"k": Ternary(0x12, 0xFF)}, fwd(2), priority=20))
    assert t.apply((0x12,), 0, 0)[1] == (2,)
    assert t.apply((0x13,), 0, 0)[1] == (1,)
    t.modify(TableEntry({"k": Ternary(0x12, 0xFF)}, fwd(7), priority=20))
    assert t.apply((0x12,), 0, 0)[1] == (7,)


def test_range_and_optional():
    t = table([KeyField("r", MatchKind.RANGE, 16), KeyField("o", MatchKind.OPTIONAL, 8)])
    t.insert(TableEntry({"r": Range(10, 20), "o": Optional(None)}, fwd(1), priority=1))
    t.insert(TableEntry({"r": Range(15, 15), "o": Optional(4)}, fwd(2), priority=2))
    assert t.apply((15, 4), 0, 0)[1] == (2,)
    assert t.apply((15, 5), 0, 0)[1] == (1,)
    assert t.apply((21, 4), 0, 0)[2] is False


def test_validation_errors():
    t = table([KeyField("k", MatchKind.EXACT, 8)], size=1)
    with pytest.raises(InvalidEntryError):
        t.insert(TableEntry({"k": Exact(256)}, fwd(1)))
    with pytest.raises(InvalidEntryError):
        t.insert(TableEntry({"nope": Exact(1)}, fwd(1)))
    with pytest.raises(InvalidEntryError):
        t.insert(TableEntry({"k": Exact(1)}, ActionCall("c.fwd", {"port": 1024})))
    with pytest.raises(InvalidEntryError):
        t.insert(TableEntry({"k": Exact(1)}, ActionCall("c.other")))
    t.insert(TableEntry({"k": Exact(1)}, fwd(1)))
    with pytest.raises(AlreadyExistsError):
        t.insert(TableEntry({"k": Exact(1)}, fwd(1)))
    with pytest.raises(ResourceExhaustedError):
        t.insert(TableEntry({"k": Exact(2)}, fwd(1)))
    with pytest.raises(NotFoundError):
        t.delete(TableEntry({"k": Exact(3)}, fwd(1)))
    lt = table([KeyField("d", MatchKind.LPM, 32)])
    with pytest.raises(InvalidEntryError):
        lt.insert(TableEntry({"d": Lpm(0x0A000001, 8)}, fwd(1)))  # bits beyond the prefix
    tt = table([KeyField("k", MatchKind.TERNARY, 8)])
    with pytest.raises(InvalidEntryError):
        tt.insert(TableEntry({"k": Ternary(1, 0xFF)}, fwd(1)))  # ternary needs a priority


def test_const_table_and_const_default():
    t = table([KeyField("k", MatchKind.EXACT, 8)], is_const=True, default_is_const=True)
    t.insert_const(TableEntry({"k": Exact(1)}, fwd(1)))
    with pytest.raises(InvalidEntryError):
        t.insert(TableEntry({"k": Exact(2)}, fwd(1)))
    with pytest.raises(InvalidEntryError):
        t.set_default(fwd(2))
    assert t.entries()[0].match == {"k": Exact(1)}


def test_direct_counter_counts_hits_only():
    dc = DirectCounter("c.dc", "packets_and_bytes")
    t = table([KeyField("k", MatchKind.EXACT, 8)], direct_counter=dc)
    t.insert(TableEntry({"k": Exact(1)}, fwd(1)))
    t.apply((1,), 100, 0)
    t.apply((1,), 50, 0)
    t.apply((2,), 50, 0)
    assert t.get({"k": Exact(1)}).counter == CounterData(2, 150)


def test_direct_meter_colours():
    dm = DirectMeter("c.dm", "packets")
    t = table([KeyField("k", MatchKind.EXACT, 8)], direct_meter=dm)
    t.insert(TableEntry({"k": Exact(1)}, fwd(1), meter=MeterConfig(cir=1, cburst=1, pir=2, pburst=2)))
    colours = []
    for _ in range(3):
        t.apply((1,), 64, 0)
        colours.append(dm.color)
    assert colours == [GREEN, YELLOW, RED]


def test_meter_refills_with_time():
    m = Meter("c.m", 4, "bytes")
    m.set_config(0, MeterConfig(cir=1000, cburst=100, pir=2000, pburst=200))
    assert m.p_execute(0, 100, 0) == GREEN
    assert m.p_execute(0, 100, 0) == YELLOW
    assert m.p_execute(0, 100, 0) == RED
    assert m.p_execute(0, 100, 100_000) == GREEN  # 0.1 s refills 100 committed bytes
    assert m.p_execute(3, 100, 0) == GREEN  # unconfigured meters mark green


def test_action_selector_picks_member_by_hash():
    prof = ActionProfile("c.sel", 16, {"c.fwd": FWD, "c.drop": DROP}, selector_hash=crc16)
    t = Table("c.t", [KeyField("k", MatchKind.EXACT, 8), KeyField("h", MatchKind.SELECTOR, 16)],
              [FWD, DROP], 16, ActionCall("c.drop"), implementation=prof)
    for m in range(3):
        prof.add_member(m + 1, fwd(10 + m))
    prof.add_group(7, [(1, 1), (2, 1), (3, 1)])
    t.insert(TableEntry({"k": Exact(1)}, GroupRef(7)))
    t.insert(TableEntry({"k": Exact(2)}, MemberRef(2)))
    for h in (0, 1, 2, 0x1234):
        want = 10 + crc16(h.to_bytes(2, "big")) % 3
        assert t.apply((1, h), 0, 0) == (0, (want,), True)
    assert t.apply((2, 5), 0, 0) == (0, (11,), True)
    with pytest.raises(InvalidEntryError):
        prof.delete_member(2)  # used by an entry and a group
    with pytest.raises(InvalidEntryError):
        t.insert(TableEntry({"k": Exact(3)}, fwd(1)))  # profile tables take members/groups


def test_ternary_range_lookup_agrees_with_a_linear_scan():
    """Entries grouped by mask must pick what a priority-ordered scan picks, also after
    deletes; ties in priority go to the entry inserted first."""
    rng = random.Random(4)
    t = table([KeyField("a", MatchKind.TERNARY, 8), KeyField("r", MatchKind.RANGE, 8)], size=500)
    live = []
    for n in range(300):
        m = rng.choice([0x00, 0xF0, 0xFF, 0x0F, 0xCC])
        v = rng.getrandbits(8) & m
        lo = rng.getrandbits(8)
        hi = rng.choice([lo, 255, min(255, lo + 20)])
        match = {"a": Ternary(v, m)}
        if rng.random() < 0.4:
            match["r"] = Range(lo, hi)
        e = TableEntry(match, fwd(n % 512), priority=rng.randint(1, 40))
        try:
            t.insert(e)
        except AlreadyExistsError:
            continue
        live.append((e, n))
        if live and rng.random() < 0.2:
            gone, _ = live.pop(rng.randrange(len(live)))
            t.delete(gone)

    def reference(a, r):
        cands = [(e, n) for e, n in live
                 if a & e.match["a"].mask == e.match["a"].value
                 and ("r" not in e.match or e.match["r"].low <= r <= e.match["r"].high)]
        if not cands:
            return None
        best = max(e.priority for e, _ in cands)
        return next(e for e, _ in cands if e.priority == best).action.params["port"]

    for _ in range(2000):
        a, r = rng.getrandbits(8), rng.getrandbits(8)
        idx, args, hit = t.apply((a, r), 0, 0)
        want = reference(a, r)
        assert (args[0] if hit else None) == want


@pytest.mark.parametrize("kind", [MatchKind.LPM, MatchKind.TERNARY])
def test_a_remembered_lookup_follows_every_change_of_the_entries(kind):
    """LPM and ternary look-ups are remembered per key: the same key asked again after an
    insert, a modify, a delete, a clear or a change of the default sees that change."""
    t = table([KeyField("k", kind, 16)])

    def match(v, plen, prio):
        m = {"k": Lpm(v, plen) if kind == MatchKind.LPM else Ternary(v, (0xFFFF << (16 - plen)) & 0xFFFF)}
        return m, (0 if kind == MatchKind.LPM else prio)

    wide, narrow = match(0x1200, 8, 1), match(0x1234, 16, 2)
    key = (0x1234,)
    assert t.apply(key, 0, 0) == (1, (), False)
    t.insert(TableEntry(wide[0], fwd(1), priority=wide[1]))
    assert t.apply(key, 0, 0) == (0, (1,), True)
    t.insert(TableEntry(narrow[0], fwd(2), priority=narrow[1]))
    assert t.apply(key, 0, 0) == (0, (2,), True)
    t.modify(TableEntry(narrow[0], fwd(3), priority=narrow[1]))
    assert t.apply(key, 0, 0) == (0, (3,), True)
    t.delete(TableEntry(narrow[0], fwd(3), priority=narrow[1]))
    assert t.apply(key, 0, 0) == (0, (1,), True)
    t.clear()
    assert t.apply(key, 0, 0) == (1, (), False)
    t.set_default(fwd(9))
    assert t.apply(key, 0, 0) == (0, (9,), False)


def test_a_remembered_selection_follows_every_change_of_the_profile_and_the_entries():
    """The member a selector table picked for a key is remembered; a change of a member, a
    group, an entry or the default is seen by the next packet of that key."""
    prof = ActionProfile("c.sel", 16, {"c.fwd": FWD, "c.drop": DROP}, selector_hash=crc16)
    t = Table("c.t", [KeyField("k", MatchKind.EXACT, 8), KeyField("h", MatchKind.SELECTOR, 16)],
              [FWD, DROP], 16, ActionCall("c.drop"), implementation=prof)
    for m in (1, 2, 3):
        prof.add_member(m, fwd(10 + m))
    prof.add_group(7, [(1, 1), (2, 1)])
    t.insert(TableEntry({"k": Exact(1)}, GroupRef(7)))
    key = (1, 0x1234)
    pick = 1 + crc16((0x1234).to_bytes(2, "big")) % 2
    assert t.apply(key, 0, 0) == t.apply(key, 0, 0) == (0, (10 + pick,), True)
    prof.modify_member(pick, fwd(40))  # the picked member's action
    assert t.apply(key, 0, 0) == (0, (40,), True)
    prof.modify_group(7, [(3, 1)])  # the group's members
    assert t.apply(key, 0, 0) == (0, (13,), True)
    t.modify(TableEntry({"k": Exact(1)}, MemberRef(2)))  # the entry's action
    assert t.apply(key, 0, 0) == (0, (40 if pick == 2 else 12,), True)
    t.delete(TableEntry({"k": Exact(1)}, MemberRef(2)))  # the entry
    assert t.apply(key, 0, 0) == (1, (), False)
    t.set_default(fwd(99))  # a miss reads the default each time
    assert t.apply(key, 0, 0) == (0, (99,), False)
    t.insert(TableEntry({"k": Exact(1)}, GroupRef(7)))
    assert t.apply(key, 0, 0) == (0, (13,), True)
    prof.modify_group(7, [])  # an empty group: the default
    assert t.apply(key, 0, 0) == (0, (99,), False)


def test_exact_fields_beside_selector_fields_pick_the_entry():
    prof = ActionProfile("c.sel", 16, {"c.fwd": FWD, "c.drop": DROP}, selector_hash=crc16)
    t = Table("c.t", [KeyField("a", MatchKind.EXACT, 8), KeyField("h", MatchKind.SELECTOR, 16),
                      KeyField("b", MatchKind.EXACT, 8)],
              [FWD, DROP], 16, ActionCall("c.drop"), implementation=prof)
    prof.add_member(1, fwd(11))
    prof.add_member(2, fwd(12))
    t.insert(TableEntry({"a": Exact(1), "b": Exact(2)}, MemberRef(1)))
    t.insert(TableEntry({"a": Exact(2), "b": Exact(1)}, MemberRef(2)))
    assert t.apply((1, 0xBEEF, 2), 0, 0) == (0, (11,), True)
    assert t.apply((2, 0xBEEF, 1), 0, 0) == (0, (12,), True)
    assert t.apply((1, 0xBEEF, 1), 0, 0) == (1, (), False)
