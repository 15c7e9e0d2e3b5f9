"""P4Runtime ids and aliases are the ones p4c assigns."""

import pytest

from p4switch.p4info import ids


def test_jenkins_hash_matches_hand_computation():
    # one-at-a-time over b"a": h = 97; h += h << 10 -> 99425; h ^= h >> 6 -> 99456 (0x18480) ...
    h = 97
    h = (h + (h << 10)) & 0xFFFFFFFF
    h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    assert ids.jenkins_one_at_a_time(b"a") == h == 0xCA2E9442
    assert ids.jenkins_one_at_a_time(b"") == 0


@pytest.mark.parametrize("prefix, name, expected", [
    # values that p4c writes into the P4Info of the P4 tutorials' basic.p4
    (ids.ACTION, "NoAction", 21257015),
    (ids.ACTION, "MyIngress.drop", 25652968),
    (ids.ACTION, "MyIngress.ipv4_forward", 28792405),
    (ids.TABLE, "MyIngress.ipv4_lpm", 37375156),
])
def test_ids_of_known_names(prefix, name, expected):
    assert ids.hashed_id(prefix, name) == expected
    assert expected >> 24 == prefix


def test_prefixes_are_the_p4runtime_ones():
    assert (ids.ACTION, ids.TABLE, ids.VALUE_SET, ids.CONTROLLER_HEADER) == (1, 2, 3, 4)
    assert (ids.ACTION_PROFILE, ids.COUNTER, ids.DIRECT_COUNTER, ids.METER, ids.DIRECT_METER,
            ids.REGISTER, ids.DIGEST) == (0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17)


def test_collision_probes_the_name_sorted_later():
    # both names hash to 0x..aecb97 in the low 24 bits; "MyIngress.t8641" sorts first
    a, b = "MyIngress.t959", "MyIngress.t8641"
    assert ids.jenkins_one_at_a_time(a.encode()) & 0xFFFFFF == ids.jenkins_one_at_a_time(b.encode()) & 0xFFFFFF
    table = ids.SymbolTable()
    table.add(ids.TABLE, a)
    table.add(ids.TABLE, b)
    table.assign()
    assert table.id_of(ids.TABLE, b) == 0x02AECB97
    assert table.id_of(ids.TABLE, a) == 0x02AECB98


def test_explicit_ids_win_and_are_avoided_by_hashing():
    taken = ids.hashed_id(ids.ACTION, "NoAction")
    table = ids.SymbolTable()
    table.add(ids.ACTION, "NoAction")
    table.add(ids.ACTION, "MyIngress.a", at_id=taken & 0xFFFFFF)  # prefix added to a bare @id
    table.assign()
    assert table.id_of(ids.ACTION, "MyIngress.a") == taken
    assert table.id_of(ids.ACTION, "NoAction") == taken + 1


def test_bad_explicit_ids_are_errors():
    with pytest.raises(ids.IdError, match="wrong 8-bit prefix"):
        ids.SymbolTable().add(ids.TABLE, "t", at_id=0x01000005)
    table = ids.SymbolTable()
    table.add(ids.TABLE, "t1", at_id=5)
    table.add(ids.TABLE, "t2", at_id=0x02000005)
    with pytest.raises(ids.IdError, match="multiple declarations"):
        table.assign()


def test_alias_is_shortest_unique_suffix():
    names = ["MyIngress.drop", "MyEgress.drop", "MyIngress.fwd", "NoAction", "a.b.c", "d.b.c"]
    assert ids.shortest_unique_suffix("MyIngress.fwd", names) == "fwd"
    assert ids.shortest_unique_suffix("MyIngress.drop", names) == "MyIngress.drop"
    assert ids.shortest_unique_suffix("a.b.c", names) == "a.b.c"
    assert ids.shortest_unique_suffix("NoAction", names) == "NoAction"
