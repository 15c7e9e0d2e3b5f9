"""Entries as operators read them."""

from p4rt.entries import ActionCall, Exact, GroupRef, Lpm, Optional, Range, Ternary
from p4rt.formatting import cli_action_text, cli_match_text, format_match, format_value
from p4rt.p4info import KeyInfo


def test_addresses_print_as_addresses():
    """`fabricctl tables` shows 10.2.0.0/16 and 02:aa:..., not 0xa020000 (other values stay decimal)."""
    dst = KeyInfo(1, "hdr.ipv4.dst_addr", 32, 0)
    assert format_match(Lpm(0x0A020000, 16), dst) == "10.2.0.0/16"
    assert format_match(Ternary(0x0A010102, 0xFFFFFF00), dst) == "10.1.1.2&&&255.255.255.0"
    assert format_match(Exact(3), KeyInfo(2, "standard_metadata.egress_spec", 9, 0)) == "3"
    assert format_match(Lpm(0x0A020000, 16)) == "0xa020000/16"  # no P4Info field: a number
    assert format_value("dst_mac", 48, 0x02AA00000065) == "02:aa:00:00:00:65"
    assert format_value("src_ip", 32, 0x0A00FFFE) == "10.0.255.254"
    assert format_value("stale_us", 32, 200_000) == "200000"


def test_simple_switch_cli_notation_is_hex_with_the_kind() -> None:
    assert cli_match_text(Lpm(0x0A020000, 16)) == "LPM       a020000/16"
    assert cli_match_text(Ternary(0x10, 0xF0)) == "TERNARY   10 &&& f0"
    assert cli_match_text(Range(1, 0x20)) == "RANGE     1 -> 20"
    assert cli_match_text(Optional(None)) == "OPTIONAL  *"
    assert cli_action_text(ActionCall("fwd", {"port": 10})) == "fwd - port=a"
    assert cli_action_text(GroupRef(3)) == "group 3"
    assert cli_action_text(None) == "(none)"
