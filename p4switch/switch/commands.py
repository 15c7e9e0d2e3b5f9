"""What the switch's runtime interface does to a :class:`Device`.

P4Runtime has no words for target settings such as queue rates, so BMv2 offers a Thrift
runtime API on ``--thrift-port`` (``simple_switch_CLI`` is its client). This module is the one
place our switch implements those operations: typed methods for what BMv2's Thrift API has
(registers, counters, table clear, multicast groups and nodes, mirroring sessions, ports;
``thrift_server.py`` maps the Thrift calls onto them) and command words for the rest, run
from one command line by :meth:`Commands.run` (served as our ``p4switch`` Thrift service):
the table words (``table_add``, ``table_delete``, ``table_set_default``, ``table_dump``,
``mc_dump``; simple_switch_CLI builds those from BMv2's JSON, we take the line) and words
of our own for the link model and MAC-level PFC: ``set_link``, ``set_port_rate``,
``pfc_watchdog``, ``pfc_stats``, ``queue_stats``, ``switch_stats``. Queue rates and depths
go straight to the traffic manager. A command that fails raises :class:`CommandError` with
the message the user sees; nothing is half-applied.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
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
from p4rt.formatting import cli_action_text, cli_match_text, ports_table
from p4rt.runtime_cli import CommandError, parse_float, parse_int
from p4switch.stf.values import parse_match
from p4switch.switch.pfc import NUM_CLASSES, WatchdogConfig

if TYPE_CHECKING:
    from p4switch.exec import LoadedProgram
    from p4switch.exec.externs import Counter, Register
    from p4switch.exec.tables import Table
    from p4switch.switch.device import Device

MAC_RE = re.compile(r"(?:[0-9a-fA-F]{1,2}:){5}[0-9a-fA-F]{1,2}")


class UnknownObjectError(CommandError):
    """The named table, register, counter, multicast group or node does not exist (or no
    program is loaded); BMv2 answers these with its ``INVALID_*_NAME``/``HANDLE`` codes.
    ``what`` is the kind of object ("table", "multicast group", ...)."""

    def __init__(self, message: str, what: str = "") -> None:
        super().__init__(message)
        self.what = what


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
        raise UnknownObjectError(f"{what} {name!r} is ambiguous: {', '.join(hits)}", what)
    raise UnknownObjectError(f"{what} {name!r} is unknown (known: {', '.join(sorted(known)) or 'none'})", what)


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
    """The runtime operations of one device; holds the entry and multicast node handles
    simple_switch_CLI users expect."""

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
        with self.locked():
            try:
                return handler(words[1:])
            except EntryError as e:
                raise CommandError(f"{type(e).__name__}: {e}") from None
            except (ValueError, KeyError, IndexError) as e:
                raise CommandError(str(e)) from None

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Holds the device lock around one operation and wakes the I/O loop afterwards (a
        queue rate or table change may make a packet due). Handles of a replaced pipeline
        are forgotten here."""
        with self.device.lock:
            if self.device.program is not self._for_program:  # a new pipeline: old handles mean nothing
                self._entries.clear()
                self._nodes.clear()
                self._groups.clear()
                self._for_program = self.device.program
            yield
        self.device.wake()

    def _program(self) -> LoadedProgram:
        if self.device.program is None:
            raise UnknownObjectError("no P4 program loaded")
        return self.device.program

    @staticmethod
    def _arity(args: list[str], low: int, high: int, usage: str) -> None:
        if not low <= len(args) <= high:
            raise CommandError(f"usage: {usage}")

    # ---- operations BMv2's Thrift API has (served by thrift_server.py) -------------------
    def do_help(self, args: list[str]) -> str:
        names = sorted(n[3:] for n in dir(self) if n.startswith("do_"))
        return "Commands: " + " ".join(names)

    def mirroring_add(self, session: int, port: int) -> None:
        self._program().pre.set_clone_session(CloneSession(session, [Replica(port, 0)]))

    def mirroring_delete(self, session: int) -> None:
        self._program().pre.delete_clone_session(session)

    def mirroring_get(self, session: int) -> CloneSession | None:
        return self._program().pre.clone_sessions.get(session)

    def _push_group(self, group: int) -> None:
        replicas = [Replica(p, self._nodes[h].rid) for h in self._groups[group] for p in self._nodes[h].ports]
        self._program().pre.set_mc_group(group, replicas)

    def mc_mgrp_create(self, group: int) -> int:
        """Creates a multicast group; its handle is its id, as on BMv2."""
        if group in self._groups:
            raise CommandError(f"multicast group {group} already exists")
        self._groups[group] = []
        self._push_group(group)
        return group

    def mc_mgrp_destroy(self, group: int) -> None:
        """Destroys a multicast group; an unknown one is no error (as on BMv2)."""
        if self._groups.pop(group, None) is not None:
            self._program().pre.delete_mc_group(group)

    def mc_node_create(self, rid: int, ports: list[int]) -> int:
        self._program()
        handle = self._next_handle
        self._next_handle += 1
        self._nodes[handle] = _McNode(rid, list(ports))
        return handle

    def _node(self, handle: int) -> int:
        if handle not in self._nodes:
            raise UnknownObjectError(f"no multicast node with handle {handle}", "multicast node")
        return handle

    def _group(self, group: int) -> int:
        if group not in self._groups:
            raise UnknownObjectError(f"no multicast group {group} (create it with mc_mgrp_create)", "multicast group")
        return group

    def mc_node_destroy(self, handle: int) -> None:
        self._node(handle)
        for group, handles in self._groups.items():
            if handle in handles:
                handles.remove(handle)
                self._push_group(group)
        del self._nodes[handle]

    def mc_node_associate(self, group: int, handle: int) -> None:
        handle, group = self._node(handle), self._group(group)  # BMv2 checks the node first
        if handle not in self._groups[group]:
            self._groups[group].append(handle)
        self._push_group(group)

    def mc_node_dissociate(self, group: int, handle: int) -> None:
        handle, group = self._node(handle), self._group(group)  # BMv2 checks the node first
        if handle in self._groups[group]:
            self._groups[group].remove(handle)
        self._push_group(group)

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

    def register(self, name: str) -> Register:
        return self._extern("registers", name)

    def register_reset(self, name: str) -> None:
        self.register(name).reset()

    def counter(self, name: str) -> Counter:
        return self._extern("counters", name)

    def counter_reset(self, name: str) -> None:
        counter = self.counter(name)
        for i in range(counter.size):
            counter.write(i, CounterData())

    def table(self, name: str) -> Table:
        return self._extern("tables", name)

    def table_clear(self, name: str) -> None:
        table = self.table(name)
        table.clear()
        self._entries.pop(table.name, None)

    def ports(self) -> list[tuple[int, str, bool, dict[str, str]]]:
        """(port, interface, is up, extra info) per port, for ``show_ports``; the CPU port last."""
        d = self.device
        out = []
        for port in sorted(d.port_names):
            name = d.port_names[port]
            io = d.ports[port]
            up = getattr(io, "oper_up", None)  # a port that knows its PHY state (a simulated link)
            if up is None:  # else the interface's operstate: a veth set down or a cut cable
                state = Path(f"/sys/class/net/{name}/operstate")
                up = state.read_text().strip() != "down" if state.exists() else True
            kernel = io.kernel_drops() if hasattr(io, "kernel_drops") else {}  # what the kernel lost, by reason
            extra = {"rx": str(d.port_rx[port]),
                     "rx_errors": str(getattr(io, "rx_errors", 0)),  # packet-socket ports count receive failures
                     "tx": str(d.port_tx[port])}  # frames that left (the kernel took them)
            extra.update({k: str(v) for k, v in kernel_drop_totals(kernel).items()})
            extra.update({r: str(n) for r, n in kernel.items() if n})
            out.append((port, name, up, extra))
        if d.cpu_port is not None:
            out.append((d.cpu_port, "(cpu port)", True, {"role": "P4Runtime packet-in/out"}))
        return out

    # ---- table words (ours on the p4switch service; BMv2's CLI needs its JSON for them) ---
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
            if len(rest) != nparams + 1 or (priority := parse_int(rest.pop(), "priority")) <= 0:
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
        handle = parse_int(args[1], "entry handle")
        entry = self._entries.get(table.name, {}).pop(handle, None)
        if entry is None:
            raise CommandError(f"no entry with handle {handle} in {table.name} (added with table_add)")
        table.delete(entry)
        return ""

    def do_table_set_default(self, args: list[str]) -> str:
        if len(args) < 2:
            raise CommandError("usage: table_set_default <table> <action> <action parameters>")
        table = self._extern("tables", args[0])
        table.set_default(self._action_call(table, args[1], args[2:]))
        return ""

    def do_show_ports(self, args: list[str]) -> str:
        self._arity(args, 0, 0, "show_ports")
        return ports_table(self.ports())

    # ---- our own words -------------------------------------------------------------------
    def do_set_link(self, args: list[str]) -> str:
        if not args:
            raise CommandError("usage: set_link <port> [rate=<bits/s>] [delay=<us>] [loss=<probability>]")
        port = parse_int(args[0], "port")
        opts = _options(args[1:], {"rate", "delay", "loss"})
        self.device.set_link(
            port,
            rate_bps=parse_float(opts["rate"], "rate") if "rate" in opts else None,
            delay_ns=int(parse_float(opts["delay"], "delay") * 1000) if "delay" in opts else None,
            loss=parse_float(opts["loss"], "loss") if "loss" in opts else None,
        )
        return ""

    def do_set_port_rate(self, args: list[str]) -> str:
        self._arity(args, 2, 2, "set_port_rate <port> <bits/s>")
        self.device.tm.set_port_rate(parse_int(args[0], "port"), parse_float(args[1], "rate"))
        return ""

    def _ports(self, text: str) -> list[int]:
        return sorted(self.device.tm.ports) if text == "all" else [parse_int(text, "port")]

    def do_pfc_watchdog(self, args: list[str]) -> str:
        usage = ("pfc_watchdog <port|all> [<class>|all] [detect=<ms>] [restore=<ms>] [action=drop|forward]"
                 " | pfc_watchdog <port|all> [<class>|all] off")
        if not args:
            raise CommandError(f"usage: {usage}")
        ports = self._ports(args[0])
        rest = args[1:]
        cls: int | None = None
        if rest and "=" not in rest[0] and rest[0] != "off":
            cls = None if rest[0] == "all" else parse_int(rest[0], "class")
            if cls is not None and not 0 <= cls < NUM_CLASSES:
                raise CommandError(f"class must be 0..{NUM_CLASSES - 1}")
            rest = rest[1:]
        if rest == ["off"]:
            config = None
        else:
            opts = _options(rest, {"detect", "restore", "action"})
            config = WatchdogConfig(
                detection_ns=int(parse_float(opts.get("detect", "200"), "detect") * 1e6),
                restoration_ns=int(parse_float(opts.get("restore", "200"), "restore") * 1e6),
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
