"""The runtime CLI's command words, executed against a :class:`Device`.

P4Runtime has no words for target settings such as queue rates, so BMv2 offers
``simple_switch_CLI`` on its Thrift port. This module gives our switch the same command words
for what it supports (``table_add``, ``table_delete``, ``table_clear``, ``table_set_default``,
``set_queue_rate``, ``set_queue_depth``, ``mirroring_add``,
``mirroring_delete``, ``mc_mgrp_create``, ``mc_mgrp_destroy``, ``mc_node_create``,
``mc_node_destroy``, ``mc_node_associate``, ``mc_node_dissociate``, ``mc_dump``,
``register_read``, ``register_write``, ``register_reset``, ``counter_read``, ``counter_reset``,
``table_dump``, ``show_ports``) with output in simple_switch_CLI's shape, plus words of our own
for the link model and MAC-level PFC: ``set_link``, ``set_port_rate``, ``pfc_watchdog``,
``pfc_stats``, ``queue_stats``, ``switch_stats``. A command that fails raises
:class:`CommandError` with the message the user sees; nothing is half-applied.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from netbase.packet_socket import kernel_drop_totals
from p4rt.entries import (
    ActionCall,
    CloneSession,
    CounterData,
    EntryError,
    FieldMatch,
    MatchKind,
    Replica,
    TableEntry,
    priority_from_cli,
)
from p4rt.formatting import cli_action_text, cli_match_text
from p4rt.runtime_cli import CommandError
from p4switch.stf.values import parse_match
from p4switch.switch.pfc import NUM_CLASSES, WatchdogConfig

if TYPE_CHECKING:  # for annotations only; the device brings the executor
    from p4switch.exec import LoadedProgram
    from p4switch.exec.tables import Table
    from p4switch.switch.device import Device

MAC_RE = re.compile(r"(?:[0-9a-fA-F]{1,2}:){5}[0-9a-fA-F]{1,2}")


def _int(text: str, what: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise CommandError(f"invalid {what}: {text!r}") from None


def _float(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CommandError(f"invalid {what}: {text!r}") from None


def _number_text(text: str) -> str:
    """A MAC or IP address as a hex number; anything else unchanged (0x.., 0b.., decimal)."""
    if MAC_RE.fullmatch(text):
        return "0x" + "".join(part.zfill(2) for part in text.split(":"))
    try:
        return hex(int(ipaddress.ip_address(text)))
    except ValueError:
        return text


def _cli_match(text: str, kind: MatchKind, width: int) -> FieldMatch:
    """A key value in simple_switch_CLI notation: ``V``, ``V/LEN``, ``V&&&MASK``, ``LO->HI``;
    values may be MAC or IP addresses."""
    for sep in ("&&&", "->", "/"):
        if sep in text:
            a, b = text.split(sep, 1)
            text = _number_text(a) + sep + (b if sep == "/" else _number_text(b))
            break
    else:
        text = _number_text(text)
    return parse_match(text, kind, width)


def _resolve(name: str, known: Collection[str], what: str) -> str:
    """A P4Info name, or a unique suffix of one after a dot (``ipv4_lpm`` for ``MyIngress.ipv4_lpm``)."""
    if name in known:
        return name
    hits = [k for k in known if k.endswith("." + name)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise CommandError(f"{what} {name!r} is ambiguous: {', '.join(hits)}")
    raise CommandError(f"{what} {name!r} is unknown (known: {', '.join(sorted(known)) or 'none'})")


def _options(args: list[str], allowed: set[str]) -> dict[str, str]:
    opts = {}
    for a in args:
        key, sep, value = a.partition("=")
        if not sep or key not in allowed:
            raise CommandError(f"expected one of {', '.join(sorted(k + '=' for k in allowed))}, got {a!r}")
        opts[key] = value
    return opts


@dataclass
class _McNode:
    rid: int
    ports: list[int]


@dataclass
class Commands:
    """Runs command lines; holds the entry and multicast node handles simple_switch_CLI users
    expect."""

    device: Device
    _entries: dict[str, dict[int, TableEntry]] = field(default_factory=dict)
    _next_entry: int = 0
    _nodes: dict[int, _McNode] = field(default_factory=dict)
    _groups: dict[int, list[int]] = field(default_factory=dict)
    _next_handle: int = 0
    _for_program: LoadedProgram | None = None  # the program the handles above belong to

    def run(self, line: str) -> str:
        try:
            words = shlex.split(line, comments=True)
        except ValueError as e:
            raise CommandError(str(e)) from None
        if not words:
            return ""
        handler: Callable[[list[str]], str] | None = getattr(self, f"do_{words[0]}", None)
        if handler is None:
            raise CommandError(f"unknown command {words[0]!r} (try 'help')")
        with self.device.lock:
            if self.device.program is not self._for_program:  # a new pipeline: old handles mean nothing
                self._entries.clear()
                self._nodes.clear()
                self._groups.clear()
                self._for_program = self.device.program
            try:
                out = handler(words[1:])
            except EntryError as e:
                raise CommandError(f"{type(e).__name__}: {e}") from None
            except (ValueError, KeyError, IndexError) as e:
                raise CommandError(str(e)) from None
        self.device.wake()
        return out

    def _program(self) -> LoadedProgram:
        if self.device.program is None:
            raise CommandError("no P4 program loaded")
        return self.device.program

    @staticmethod
    def _arity(args: list[str], low: int, high: int, usage: str) -> None:
        if not low <= len(args) <= high:
            raise CommandError(f"usage: {usage}")

    # ---- simple_switch_CLI words ---------------------------------------------------------
    def do_help(self, args: list[str]) -> str:
        names = sorted(n[3:] for n in dir(self) if n.startswith("do_"))
        return "Commands: " + " ".join(names)

    def _queue_target(self, args: list[str]) -> tuple[int | None, int | None]:
        port = _int(args[1], "port") if len(args) > 1 else None
        priority = _int(args[2], "priority") if len(args) > 2 else None
        return port, priority

    def do_set_queue_rate(self, args: list[str]) -> str:
        self._arity(args, 1, 3, "set_queue_rate <rate_pps> [<egress_port> [<priority>]]")
        port, priority = self._queue_target(args)
        self.device.tm.set_queue_rate(_float(args[0], "rate"), port, priority)
        return ""

    def do_set_queue_depth(self, args: list[str]) -> str:
        self._arity(args, 1, 3, "set_queue_depth <nb_pkts> [<egress_port> [<priority>]]")
        port, priority = self._queue_target(args)
        self.device.tm.set_queue_depth(_int(args[0], "depth"), port, priority)
        return ""

    def do_mirroring_add(self, args: list[str]) -> str:
        self._arity(args, 2, 2, "mirroring_add <mirror_id> <egress_port>")
        sid, port = _int(args[0], "mirror id"), _int(args[1], "port")
        self._program().pre.set_clone_session(CloneSession(sid, [Replica(port, 0)]))
        return ""

    def do_mirroring_delete(self, args: list[str]) -> str:
        self._arity(args, 1, 1, "mirroring_delete <mirror_id>")
        self._program().pre.delete_clone_session(_int(args[0], "mirror id"))
        return ""

    def _push_group(self, group: int) -> None:
        replicas = [Replica(p, self._nodes[h].rid) for h in self._groups[group] for p in self._nodes[h].ports]
        self._program().pre.set_mc_group(group, replicas)

    def do_mc_mgrp_create(self, args: list[str]) -> str:
        self._arity(args, 1, 1, "mc_mgrp_create <group_id>")
        group = _int(args[0], "group id")
        if group in self._groups:
            raise CommandError(f"multicast group {group} already exists")
        self._groups[group] = []
        self._push_group(group)
        return f"Creating multicast group {group}"

    def do_mc_mgrp_destroy(self, args: list[str]) -> str:
        self._arity(args, 1, 1, "mc_mgrp_destroy <group_id>")
        group = _int(args[0], "group id")
        self._program().pre.delete_mc_group(group)
        self._groups.pop(group, None)
        return f"Destroying multicast group {group}"

    def do_mc_node_create(self, args: list[str]) -> str:
        self._arity(args, 1, 1 + 512, "mc_node_create <rid> <port> [<port> ...]")
        rid = _int(args[0], "rid")
        ports = [_int(p, "port") for p in args[1:]]
        handle = self._next_handle
        self._next_handle += 1
        self._nodes[handle] = _McNode(rid, ports)
        return (f"Creating node with rid {rid} , port map {' '.join(map(str, ports))} and lag map \n"
                f"node was created with handle {handle}")

    def _node(self, text: str) -> int:
        handle = _int(text, "node handle")
        if handle not in self._nodes:
            raise CommandError(f"no multicast node with handle {handle}")
        return handle

    def _group(self, text: str) -> int:
        group = _int(text, "group id")
        if group not in self._groups:
            raise CommandError(f"no multicast group {group} (create it with mc_mgrp_create)")
        return group

    def do_mc_node_destroy(self, args: list[str]) -> str:
        self._arity(args, 1, 1, "mc_node_destroy <node_handle>")
        handle = self._node(args[0])
        for group, handles in self._groups.items():
            if handle in handles:
                handles.remove(handle)
                self._push_group(group)
        del self._nodes[handle]
        return f"Destroying node {handle}"

    def do_mc_node_associate(self, args: list[str]) -> str:
        self._arity(args, 2, 2, "mc_node_associate <group_id> <node_handle>")
        group, handle = self._group(args[0]), self._node(args[1])
        if handle not in self._groups[group]:
            self._groups[group].append(handle)
        self._push_group(group)
        return f"Associating node {handle} to multicast group {group}"

    def do_mc_node_dissociate(self, args: list[str]) -> str:
        self._arity(args, 2, 2, "mc_node_dissociate <group_id> <node_handle>")
        group, handle = self._group(args[0]), self._node(args[1])
        if handle in self._groups[group]:
            self._groups[group].remove(handle)
        self._push_group(group)
        return f"Dissociating node {handle} from multicast group {group}"

    def do_mc_dump(self, args: list[str]) -> str:
        self._arity(args, 0, 0, "mc_dump")
        lines = ["==========", "MC ENTRIES"]
        for group, replicas in sorted(self._program().pre.mc_groups.items()):
            lines.append(f"**********\nmgrp({group})")
            for r in replicas:
                lines.append(f"  -> (rid={r.instance}) port {r.port}")
        lines.append("==========")
        return "\n".join(lines)

    def _extern(self, kind: str, name: str) -> Any:
        """A table, register or counter by P4Info name or unique suffix."""
        objects = getattr(self._program(), kind)
        return objects[_resolve(name, objects, kind[:-1])]

    def do_register_read(self, args: list[str]) -> str:
        self._arity(args, 1, 2, "register_read <name> [<index>]")
        reg = self._extern("registers", args[0])
        if len(args) == 2:
            index = _int(args[1], "index")
            return f"{args[0]}[{index}]= {reg.read(index)}"
        return f"{args[0]}= " + ", ".join(str(reg.read(i)) for i in range(reg.size))

    def do_register_write(self, args: list[str]) -> str:
        self._arity(args, 3, 3, "register_write <name> <index> <value>")
        reg = self._extern("registers", args[0])
        reg.write(_int(args[1], "index"), _int(args[2], "value"))
        return ""

    def do_register_reset(self, args: list[str]) -> str:
        self._arity(args, 1, 1, "register_reset <name>")
        reg = self._extern("registers", args[0])
        for i in range(reg.size):
            reg.write(i, 0)
        return ""

    def do_counter_read(self, args: list[str]) -> str:
        self._arity(args, 2, 2, "counter_read <name> <index>")
        index = _int(args[1], "index")
        data = self._extern("counters", args[0]).read(index)
        return f"{args[0]}[{index}]=  BmCounterValue(packets={data.packets}, bytes={data.bytes})"

    def do_counter_reset(self, args: list[str]) -> str:
        self._arity(args, 1, 1, "counter_reset <name>")
        counter = self._extern("counters", args[0])
        for i in range(counter.size):
            counter.write(i, CounterData())
        return ""

    def do_table_dump(self, args: list[str]) -> str:
        self._arity(args, 1, 1, "table_dump <table_name>")
        table = self._extern("tables", args[0])
        lines = ["==========", f"TABLE ENTRIES ({table.name})"]
        for i, e in enumerate(table.entries()):
            lines.append("**********")
            lines.append(f"Dumping entry {i:#x}")
            lines.append("Match key:")
            for key_name, m in e.match.items():
                lines.append(f"* {key_name:<20}: {cli_match_text(m)}")
            if e.priority:
                lines.append(f"Priority: {priority_from_cli(e.priority)}")
            lines.append(f"Action entry: {cli_action_text(e.action)}")
        lines.append("==========")
        lines.append(f"Dumping default entry\nAction entry: {cli_action_text(table.default_action)}")
        lines.append("==========")
        return "\n".join(lines)

    def _action_call(self, table: Table, name: str, values: list[str]) -> ActionCall:
        prog = self._program()
        action = _resolve(name, table.action_names, f"action of {table.name}")
        params = prog.actions[action].params
        if len(values) != len(params):
            raise CommandError(f"action {action} takes {len(params)} parameter(s) "
                               f"({', '.join(p for p, _ in params)}), got {len(values)}")
        return ActionCall(action, {p: _cli_match(v, MatchKind.EXACT, w).value for (p, w), v in zip(params, values)})

    def do_table_add(self, args: list[str]) -> str:
        usage = "table_add <table> <action> <match fields> => <action parameters> [priority]"
        if len(args) < 2 or "=>" not in args:
            raise CommandError(f"usage: {usage}")
        table = self._extern("tables", args[0])
        arrow = args.index("=>")
        keys, rest = args[2:arrow], args[arrow + 1:]
        if len(keys) != len(table.key):
            raise CommandError(f"table {table.name} has {len(table.key)} key field(s) "
                               f"({', '.join(k.name for k in table.key)}), got {len(keys)}")
        match = {k.name: _cli_match(v, k.match_kind, k.width) for k, v in zip(table.key, keys)}
        action = _resolve(args[1], table.action_names, f"action of {table.name}")
        nparams = len(self._program().actions[action].params)
        priority = 0
        if table.needs_priority:
            if len(rest) != nparams + 1 or (priority := _int(rest.pop(), "priority")) <= 0:
                raise CommandError(f"table {table.name} needs a priority (> 0) after the action parameters")
        call = self._action_call(table, action, rest)
        entry = TableEntry(match, call, priority_from_cli(priority) if priority else 0)
        table.insert(entry)
        handle = self._next_entry
        self._next_entry += 1
        self._entries.setdefault(table.name, {})[handle] = entry
        return f"Adding entry to {table.name}\nEntry has been added with handle {handle}"

    def do_table_delete(self, args: list[str]) -> str:
        self._arity(args, 2, 2, "table_delete <table> <entry handle>")
        table = self._extern("tables", args[0])
        handle = _int(args[1], "entry handle")
        entry = self._entries.get(table.name, {}).pop(handle, None)
        if entry is None:
            raise CommandError(f"no entry with handle {handle} in {table.name} (added with table_add)")
        table.delete(entry)
        return ""

    def do_table_clear(self, args: list[str]) -> str:
        self._arity(args, 1, 1, "table_clear <table>")
        table = self._extern("tables", args[0])
        table.clear()
        self._entries.pop(table.name, None)
        return ""

    def do_table_set_default(self, args: list[str]) -> str:
        if len(args) < 2:
            raise CommandError("usage: table_set_default <table> <action> <action parameters>")
        table = self._extern("tables", args[0])
        table.set_default(self._action_call(table, args[1], args[2:]))
        return ""

    def do_show_ports(self, args: list[str]) -> str:
        self._arity(args, 0, 0, "show_ports")
        d = self.device
        lines = ["port # | iface name       | status | extra info"]
        for port in sorted(d.port_names):
            name = d.port_names[port]
            state = Path(f"/sys/class/net/{name}/operstate")
            status = state.read_text().strip().upper()[:6] if state.exists() else "UP"
            io = d.ports[port]
            rx_errors = getattr(io, "rx_errors", 0)  # packet-socket ports count receive failures
            kernel = io.kernel_drops() if hasattr(io, "kernel_drops") else {}  # ... and what the kernel lost
            totals = kernel_drop_totals(kernel)
            reasons = "".join(f" {r}={n}" for r, n in kernel.items() if n)
            lines.append(f"{port:^7}| {name:<17}| {status:<7}| rx={d.port_rx[port]} rx_errors={rx_errors} "
                         f"rx_kernel_drops={totals['rx_kernel_drops']} tx={d.port_tx[port]} "
                         f"tx_kernel_drops={totals['tx_kernel_drops']}{reasons}")
        if d.cpu_port is not None:
            lines.append(f"{d.cpu_port:^7}| {'(cpu port)':<17}| UP     | P4Runtime packet-in/out")
        return "\n".join(lines)

    # ---- our own words -------------------------------------------------------------------
    def do_set_link(self, args: list[str]) -> str:
        if not args:
            raise CommandError("usage: set_link <port> [rate=<bits/s>] [delay=<us>] [loss=<probability>]")
        port = _int(args[0], "port")
        opts = _options(args[1:], {"rate", "delay", "loss"})
        self.device.set_link(
            port,
            rate_bps=_float(opts["rate"], "rate") if "rate" in opts else None,
            delay_ns=int(_float(opts["delay"], "delay") * 1000) if "delay" in opts else None,
            loss=_float(opts["loss"], "loss") if "loss" in opts else None,
        )
        return ""

    def do_set_port_rate(self, args: list[str]) -> str:
        self._arity(args, 2, 2, "set_port_rate <port> <bits/s>")
        self.device.tm.set_port_rate(_int(args[0], "port"), _float(args[1], "rate"))
        return ""

    def _ports(self, text: str) -> list[int]:
        return sorted(self.device.tm.ports) if text == "all" else [_int(text, "port")]

    def do_pfc_watchdog(self, args: list[str]) -> str:
        usage = ("pfc_watchdog <port|all> [<class>|all] [detect=<ms>] [restore=<ms>] [action=drop|forward]"
                 " | pfc_watchdog <port|all> [<class>|all] off")
        if not args:
            raise CommandError(f"usage: {usage}")
        ports = self._ports(args[0])
        rest = args[1:]
        cls: int | None = None
        if rest and "=" not in rest[0] and rest[0] != "off":
            cls = None if rest[0] == "all" else _int(rest[0], "class")
            if cls is not None and not 0 <= cls < NUM_CLASSES:
                raise CommandError(f"class must be 0..{NUM_CLASSES - 1}")
            rest = rest[1:]
        if rest == ["off"]:
            config = None
        else:
            opts = _options(rest, {"detect", "restore", "action"})
            config = WatchdogConfig(
                detection_ns=int(_float(opts.get("detect", "200"), "detect") * 1e6),
                restoration_ns=int(_float(opts.get("restore", "200"), "restore") * 1e6),
                action=opts.get("action", "drop"),
            )
        for port in ports:
            self.device.tm.set_watchdog(port, cls, config)
        return ""

    def do_pfc_stats(self, args: list[str]) -> str:
        self._arity(args, 0, 1, "pfc_stats [<port>]")
        d = self.device
        now = d.clock.now_ns()
        lines = ["port class frames_rx paused_us paused storm storms restored watchdog"]
        for port in self._ports(args[0] if args else "all"):
            pfc = d.tm.port(port).pfc
            for c, st in enumerate(pfc.classes):
                wd = st.watchdog
                wd_text = f"{wd.action}/{wd.detection_ns // 1_000_000}ms/{wd.restoration_ns // 1_000_000}ms" if wd else "off"
                lines.append(f"{port} {c} {st.frames} {st.paused_ns(now) / 1000:.3f} {int(st.paused(now))} "
                             f"{int(st.storm)} {st.storms_detected} {st.storms_restored} {wd_text}")
            lines.append(f"{port} frames={pfc.frames_rx} malformed={pfc.malformed_rx} other_mac_control={pfc.other_rx}")
        return "\n".join(lines)

    def do_queue_stats(self, args: list[str]) -> str:
        self._arity(args, 0, 1, "queue_stats [<port>]")
        tm = self.device.tm
        lines = ["port queue depth capacity rate_pps enqueued dequeued drop_full drop_watchdog max_depth"]
        for port in self._ports(args[0] if args else "all"):
            p = tm.port(port)
            for pr, q in enumerate(p.queues):
                rate = f"{q.rate_pps:g}" if q.rate_pps else "unlimited"
                lines.append(f"{port} {pr} {len(q.items)} {q.capacity} {rate} {q.enqueued} {q.dequeued} "
                             f"{q.dropped_full} {q.dropped_watchdog} {q.max_depth}")
            rate = f"{p.rate_bps:g}" if p.rate_bps else "unlimited"
            lines.append(f"{port} port_rate_bps={rate} tx_frames={p.tx_frames} tx_bytes={p.tx_bytes}")
        lines.append(f"dropped_bad_priority={tm.dropped_bad_priority}")
        return "\n".join(lines)

    def do_switch_stats(self, args: list[str]) -> str:
        self._arity(args, 0, 0, "switch_stats")
        d = self.device
        stats = dict(d.stats)
        stats["drop_watchdog_flush"] = d.tm.dropped_watchdog_flush
        if d.pipe is not None:
            for k, v in d.pipe.stats.items():
                stats[f"pipeline.{k}"] = v
        for port, io in sorted(d.ports.items()):
            stats[f"port{port}.tx"] = d.port_tx[port]
            if hasattr(io, "kernel_drops"):  # packet-socket ports: frames the kernel lost, by reason
                kernel = io.kernel_drops()
                for key, n in [*kernel_drop_totals(kernel).items(), *((f"kernel_{r}", n) for r, n in kernel.items())]:
                    stats[f"port{port}.{key}"] = n
        stats.update(d.sched_lag.as_fields())
        for port, lk in sorted(d.links.items()):
            stats[f"link{port}.sent"] = lk.sent
            stats[f"link{port}.lost"] = lk.lost
        return "\n".join(f"{k}={v}" for k, v in sorted(stats.items()))
