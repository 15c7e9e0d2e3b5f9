"""Table entries as people read them: one place for how a match or a value is shown.

Two notations: the operator's (``fabricctl``: addresses as addresses, ``10.2.0.0/16``) and
``simple_switch_CLI``'s ``table_dump`` (hex values, the kind in a column), which our runtime CLI
prints so scripts written for BMv2 read it the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from p4rt.entries import ActionCall, EntryAction, Exact, FieldMatch, GroupRef, Lpm, MemberRef, Range, Ternary
from p4rt.p4info import KeyInfo


def format_value(name: str, bitwidth: int, value: int) -> str:
    """A key or parameter value the way an operator reads it: IPv4 addresses dotted, MAC
    addresses colon-separated (recognised by width and name), everything else in decimal."""
    leaf = name.rsplit(".", 1)[-1].lower()
    if bitwidth == 32 and ("ipv4" in name.lower() or leaf.endswith("_ip") or leaf in ("src_addr", "dst_addr")):
        return ".".join(str(value >> s & 0xFF) for s in (24, 16, 8, 0))
    if bitwidth == 48 and ("mac" in leaf or "ethernet" in name.lower()):
        return ":".join(f"{value >> s & 0xFF:02x}" for s in range(40, -1, -8))
    return str(value)


def format_match(m: FieldMatch, key: KeyInfo | None = None) -> str:
    """Human form of one key field, the way the CLI prints it; with the field's P4Info ``key``
    addresses read as addresses (``10.2.0.0/16``), without it values are numbers."""
    if key is not None and isinstance(m, (Exact, Lpm, Ternary)) and m.value is not None:
        text = format_value(key.name, key.bitwidth, m.value)
        if text != str(m.value):  # an address
            if isinstance(m, Lpm):
                return f"{text}/{m.prefix_len}"
            if isinstance(m, Ternary):
                return f"{text}&&&{format_value(key.name, key.bitwidth, m.mask)}"
            return text
    if isinstance(m, Exact):
        return str(m.value)
    if isinstance(m, Lpm):
        return f"{m.value:#x}/{m.prefix_len}"
    if isinstance(m, Ternary):
        return f"{m.value:#x}&&&{m.mask:#x}"
    if isinstance(m, Range):
        return f"{m.low}..{m.high}"
    return "*" if m.value is None else str(m.value)


def cli_match_text(m: FieldMatch) -> str:
    """A match as simple_switch_CLI's table_dump shows it (hex values)."""
    if isinstance(m, Exact):
        return f"EXACT     {m.value:x}"
    if isinstance(m, Lpm):
        return f"LPM       {m.value:x}/{m.prefix_len}"
    if isinstance(m, Ternary):
        return f"TERNARY   {m.value:x} &&& {m.mask:x}"
    if isinstance(m, Range):
        return f"RANGE     {m.low:x} -> {m.high:x}"
    return "OPTIONAL  *" if m.value is None else f"OPTIONAL  {m.value:x}"


def cli_action_text(a: EntryAction | None) -> str:
    """An entry's action as simple_switch_CLI's table_dump shows it."""
    if isinstance(a, ActionCall):
        return f"{a.name} - " + ", ".join(f"{k}={v:x}" for k, v in a.params.items()) if a.params else a.name
    if isinstance(a, MemberRef):
        return f"member {a.member_id}"
    if isinstance(a, GroupRef):
        return f"group {a.group_id}"
    return "(none)"


PORTS_HEADER = "port # | iface name       | status | extra info"


def ports_table(rows: Iterable[tuple[int, str, bool, Mapping[str, str]]]) -> str:
    """``show_ports`` as our switch and ``p4switch-cli`` print it, from (port, interface,
    operationally up, extra info) rows: the same text from either target, which
    ``controller.oper_status`` reads back."""
    lines = [PORTS_HEADER]
    for port, name, up, extra in rows:
        info = " ".join(f"{k}={v}" for k, v in extra.items())
        lines.append(f"{port:^7}| {name:<17}| {'UP' if up else 'DOWN':<7}| {info}")
    return "\n".join(lines)
