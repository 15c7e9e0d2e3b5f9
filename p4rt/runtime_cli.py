"""The runtime CLI (``p4switch-cli``): simple_switch_CLI's command words over BMv2's Thrift
runtime protocol, so the same tool drives BMv2 and our switch.

``p4switch-cli --thrift-port 9090`` (interactive with the prompt ``RuntimeCmd:``, or
``echo "set_queue_rate 100 2" | p4switch-cli ...``). Words BMv2 has a Thrift call for are
sent as that call and printed the way simple_switch_CLI prints them: ``set_queue_rate``,
``set_queue_depth``, ``mirroring_add``, ``mirroring_delete``, ``mc_mgrp_create``,
``mc_mgrp_destroy``, ``mc_node_create``, ``mc_node_destroy``, ``mc_node_associate``,
``mc_node_dissociate``, ``register_read``, ``register_write``, ``register_reset``,
``counter_read``, ``counter_reset``, ``table_clear``, ``table_num_entries``, ``show_ports``,
``get_time_elapsed``. Every other word (the table words, ``mc_dump``, and our switch's own:
``set_link``, ``set_port_rate``, ``pfc_watchdog``, ``pfc_stats``, ``queue_stats``,
``switch_stats``) goes as one line to our switch's ``p4switch`` service; BMv2 has none, and
the tool says so. (simple_switch_CLI builds table entries from BMv2's JSON, which our switch
does not serve: use this tool or P4Runtime for tables on our switch.)
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Iterator

from p4rt.bmv2_runtime import DEFAULT_PORT, Bmv2Error, Bmv2Runtime, QueueConfigError
from p4rt.thrift import ApplicationError, ProtocolError


class CommandError(Exception):
    """A runtime command the switch (or this tool) refused; ``str(e)`` says why."""


def parse_int(text: str, what: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise CommandError(f"invalid {what}: {text!r}") from None


def parse_float(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CommandError(f"invalid {what}: {text!r}") from None


def _arity(args: list[str], low: int, high: int, usage: str) -> None:
    if not low <= len(args) <= high:
        raise CommandError(f"usage: {usage}")


def _queue_args(args: list[str], usage: str, what: str) -> tuple[int, int | None, int | None]:
    _arity(args, 1, 3, usage)
    value = parse_int(args[0], what)
    port = parse_int(args[1], "port") if len(args) > 1 else None
    priority = parse_int(args[2], "priority") if len(args) > 2 else None
    return value, port, priority


class CliClient:
    """One connection to a switch's runtime port; runs command lines (what PTF tests, the
    controller and ``p4switch-cli`` use). ``runtime`` is the typed Thrift client underneath."""

    def __init__(self, port: int = DEFAULT_PORT, host: str = "127.0.0.1", timeout: float = 10.0) -> None:
        self.runtime = Bmv2Runtime(port, host, timeout)
        self._words: dict[str, Callable[[list[str]], str]] = {
            name[3:]: getattr(self, name) for name in dir(self) if name.startswith("do_")}

    def close(self) -> None:
        self.runtime.close()

    def run(self, line: str) -> str:
        """Runs one command; returns its output or raises :class:`CommandError`."""
        try:
            words = shlex.split(line, comments=True)
        except ValueError as e:
            raise CommandError(str(e)) from None
        if not words:
            return ""
        word = self._words.get(words[0])
        try:
            if word is not None:
                return word(words[1:])
            return self._ours(line.strip(), words[0])
        except Bmv2Error as e:
            if e.exception == "InvalidCommand":
                raise CommandError(e.message) from None
            raise CommandError(f"{e.exception} {e.code_name}" + (f": {e.message}" if e.message else "")) from None
        except (ApplicationError, QueueConfigError) as e:
            raise CommandError(getattr(e, "message", str(e))) from None
        except ValueError as e:
            raise CommandError(str(e)) from None

    def call(self, line: str) -> tuple[bool, str]:
        """Runs one command; ``(ok, output or error message)``."""
        try:
            return True, self.run(line)
        except CommandError as e:
            return False, str(e)

    def _ours(self, line: str, word: str) -> str:
        try:
            return self.runtime.run_command(line)
        except ApplicationError as e:
            if "Unknown service: p4switch" in e.message:
                raise CommandError(f"unknown command {word!r}: not a BMv2 runtime call, and this switch has no p4switch "
                                   f"service (on BMv2 use simple_switch_CLI for table words)") from None
            raise

    # ---- words with a BMv2 Thrift call ------------------------------------------------------
    def do_help(self, args: list[str]) -> str:
        names = set(self._words)
        try:
            names |= set(self.runtime.run_command("help").partition(": ")[2].split())
        except (Bmv2Error, ApplicationError):
            pass  # BMv2: only the standard words
        return "Commands: " + " ".join(sorted(names))

    def do_set_queue_rate(self, args: list[str]) -> str:
        rate, port, priority = _queue_args(args, "set_queue_rate <rate_pps> [<egress_port> [<priority>]]", "rate")
        self.runtime.set_queue_rate(rate, port, priority)
        return ""

    def do_set_queue_depth(self, args: list[str]) -> str:
        depth, port, priority = _queue_args(args, "set_queue_depth <nb_pkts> [<egress_port> [<priority>]]", "depth")
        self.runtime.set_queue_depth(depth, port, priority)
        return ""

    def do_mirroring_add(self, args: list[str]) -> str:
        _arity(args, 2, 2, "mirroring_add <mirror_id> <egress_port>")
        self.runtime.mirroring_add(parse_int(args[0], "mirror id"), parse_int(args[1], "port"))
        return ""

    def do_mirroring_delete(self, args: list[str]) -> str:
        _arity(args, 1, 1, "mirroring_delete <mirror_id>")
        self.runtime.mirroring_delete(parse_int(args[0], "mirror id"))
        return ""

    def do_mc_mgrp_create(self, args: list[str]) -> str:
        _arity(args, 1, 1, "mc_mgrp_create <group_id>")
        group = parse_int(args[0], "group id")
        self.runtime.mc_mgrp_create(group)
        return f"Creating multicast group {group}"

    def do_mc_mgrp_destroy(self, args: list[str]) -> str:
        _arity(args, 1, 1, "mc_mgrp_destroy <group_id>")
        group = parse_int(args[0], "group id")
        self.runtime.mc_mgrp_destroy(group)
        return f"Destroying multicast group {group}"

    def do_mc_node_create(self, args: list[str]) -> str:
        _arity(args, 1, 1 + 512, "mc_node_create <rid> <port> [<port> ...]")
        rid = parse_int(args[0], "rid")
        ports = [parse_int(p, "port") for p in args[1:]]
        handle = self.runtime.mc_node_create(rid, ports)
        return (f"Creating node with rid {rid} , port map {' '.join(map(str, ports))} and lag map \n"
                f"node was created with handle {handle}")

    def do_mc_node_destroy(self, args: list[str]) -> str:
        _arity(args, 1, 1, "mc_node_destroy <node_handle>")
        handle = parse_int(args[0], "node handle")
        self.runtime.mc_node_destroy(handle)
        return f"Destroying node {handle}"

    def do_mc_node_associate(self, args: list[str]) -> str:
        _arity(args, 2, 2, "mc_node_associate <group_handle> <node_handle>")
        group, handle = parse_int(args[0], "group handle"), parse_int(args[1], "node handle")
        self.runtime.mc_node_associate(group, handle)
        return f"Associating node {handle} to multicast group {group}"

    def do_mc_node_dissociate(self, args: list[str]) -> str:
        _arity(args, 2, 2, "mc_node_dissociate <group_handle> <node_handle>")
        group, handle = parse_int(args[0], "group handle"), parse_int(args[1], "node handle")
        self.runtime.mc_node_dissociate(group, handle)
        return f"Dissociating node {handle} from multicast group {group}"

    def do_register_read(self, args: list[str]) -> str:
        _arity(args, 1, 2, "register_read <name> [<index>]")
        if len(args) == 2:
            index = parse_int(args[1], "index")
            return f"{args[0]}[{index}]= {self.runtime.register_read(args[0], index)}"
        return f"{args[0]}= " + ", ".join(map(str, self.runtime.register_read_all(args[0])))

    def do_register_write(self, args: list[str]) -> str:
        _arity(args, 3, 3, "register_write <name> <index> <value>")
        self.runtime.register_write(args[0], parse_int(args[1], "index"), parse_int(args[2], "value"))
        return ""

    def do_register_reset(self, args: list[str]) -> str:
        _arity(args, 1, 1, "register_reset <name>")
        self.runtime.register_reset(args[0])
        return ""

    def do_counter_read(self, args: list[str]) -> str:
        _arity(args, 2, 2, "counter_read <name> <index>")
        index = parse_int(args[1], "index")
        packets, nbytes = self.runtime.counter_read(args[0], index)
        return f"{args[0]}[{index}]=  BmCounterValue(packets={packets}, bytes={nbytes})"

    def do_counter_reset(self, args: list[str]) -> str:
        _arity(args, 1, 1, "counter_reset <name>")
        self.runtime.counter_reset(args[0])
        return ""

    def do_table_clear(self, args: list[str]) -> str:
        _arity(args, 1, 1, "table_clear <table>")
        self.runtime.table_clear(args[0])
        return ""

    def do_table_num_entries(self, args: list[str]) -> str:
        _arity(args, 1, 1, "table_num_entries <table>")
        return str(self.runtime.table_num_entries(args[0]))

    def do_show_ports(self, args: list[str]) -> str:
        _arity(args, 0, 0, "show_ports")
        lines = [f"{'port #':^10}{'iface name':^20}{'status':^10}extra info", "=" * 50]
        for p in self.runtime.show_ports():
            extra = "; ".join(f"{k}={v}" for k, v in p.get("extra", {}).items())
            lines.append(f"{p['port_num']:^10}{p['iface_name']:^20}{'UP' if p.get('is_up') else 'DOWN':^10}{extra}")
        return "\n".join(lines)

    def do_get_time_elapsed(self, args: list[str]) -> str:
        _arity(args, 0, 0, "get_time_elapsed")
        return str(self.runtime.time_elapsed_us())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="p4switch-cli", description="Runtime CLI of a p4switch or BMv2 switch (Thrift)")
    ap.add_argument("--thrift-port", type=int, default=DEFAULT_PORT, help="the switch's Thrift port (default 9090)")
    ap.add_argument("--thrift-ip", default="127.0.0.1", help="the switch's address (default 127.0.0.1)")
    ap.add_argument("command", nargs="*", help="one command to run instead of reading stdin")
    args = ap.parse_args(argv)
    try:
        client = CliClient(args.thrift_port, args.thrift_ip)
    except OSError as e:
        print(f"Could not connect to the switch on {args.thrift_ip}:{args.thrift_port}: {e}", file=sys.stderr)
        return 1
    interactive = sys.stdin.isatty() and not args.command
    failed = False
    try:
        for line in _lines(args.command, interactive):
            line = line.strip()
            if line in ("EOF", "quit", "exit"):
                break
            if not line or line.startswith("#"):
                continue
            ok, text = client.call(line)
            if text:
                print(text, file=sys.stdout if ok else sys.stderr)
            failed |= not ok
    except (OSError, ConnectionError, ProtocolError) as e:
        print(f"connection to the switch lost: {e}", file=sys.stderr)
        return 1
    finally:
        client.close()
    return 1 if failed else 0


def _lines(command: list[str], interactive: bool) -> Iterator[str]:
    if command:
        yield " ".join(command)
    elif interactive:
        import readline  # noqa: F401  (line editing and history for input())

        while True:
            try:
                yield input("RuntimeCmd: ")
            except EOFError:
                print()
                return
    else:
        yield from sys.stdin


if __name__ == "__main__":
    sys.exit(main())
