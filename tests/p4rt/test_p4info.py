"""Name-level encoders: checked against the P4Info, then the one codec."""

import pytest

from p4rt.entries import ActionCall, Exact, Lpm, TableEntry, Ternary
from p4rt.errors import P4InfoError
from p4rt.p4info import P4InfoIndex
from p4switch.p4info.build import build_p4info


@pytest.fixture
def p4(model):
    return P4InfoIndex(build_p4info(model))


def test_a_key_alone_encodes_without_an_action(p4) -> None:
    """What a DELETE carries: the match, no action."""
    msg = p4.table_entry_pb("fwd", TableEntry({"meta.port": Exact(1), "hdr.ipv4.dstAddr": Lpm(0x0A000105, 24)},
                                              None))  # type: ignore[arg-type]
    assert not msg.HasField("action")
    assert [m.field_id for m in msg.match] == [1, 7]  # P4Info order, whatever the dict's
    assert msg.match[0].lpm.value == b"\x0a\x00\x01\x00"  # bits past the prefix cleared


def test_ternary_value_is_masked_and_a_zero_mask_is_a_wildcard(p4) -> None:
    entry = TableEntry({"hdr.ipv4.dstAddr": Ternary(0x0A0000FF, 0xFF000000)}, ActionCall("NoAction"), priority=1)
    msg = p4.table_entry_pb("acl", entry)
    assert (msg.match[0].ternary.value, msg.match[0].ternary.mask) == (b"\x0a\x00\x00\x00", b"\xff\x00\x00\x00")
    entry.match["hdr.ipv4.dstAddr"] = Ternary(5, 0)
    assert list(p4.table_entry_pb("acl", entry).match) == []


def test_values_that_do_not_fit_name_the_width(p4) -> None:
    with pytest.raises(P4InfoError, match="does not fit in 9 bits"):
        p4.table_entry_pb("fwd", TableEntry({"meta.port": Exact(512)}, ActionCall("MyIngress.set_port", {"port": 1})))
