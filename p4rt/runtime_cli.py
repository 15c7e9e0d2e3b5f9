"""Client of the runtime CLI protocol, and the ``p4switch-cli`` command.

Like ``simple_switch_CLI --thrift-port 9090`` for BMv2, but with a simple protocol of our own
instead of Thrift: the client sends one command line (UTF-8, ending in a newline), the server
answers ``OK <n>`` or ``ERR <n>`` on one line followed by ``n`` bytes of text. Usable
interactively (prompt ``RuntimeCmd:``) or with a pipe:
``echo "show_ports" | p4switch-cli --thrift-port 9090``. The server side lives with our target
(``p4switch.switch.runtime_cli``); the controller and the tests only need this module.
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Iterator
from typing import BinaryIO

DEFAULT_PORT = 9090
MAX_LINE = 65536


class CommandError(Exception):
    """A runtime-CLI command the switch refused; ``str(e)`` is the switch's message."""


def send_reply(wfile: BinaryIO, ok: bool, text: str) -> None:
    """The server's half of the framing: ``OK <n>`` or ``ERR <n>``, then ``n`` bytes."""
    body = text.encode()
    wfile.write(f"{'OK' if ok else 'ERR'} {len(body)}\n".encode() + body)
    wfile.flush()


class CliClient:
    """One connection to a switch's runtime CLI; what PTF tests and the controller use."""

    def __init__(self, port: int = DEFAULT_PORT, host: str = "127.0.0.1", timeout: float = 10.0) -> None:
        self._sock = socket.create_connection((host, port), timeout=timeout)
        self._r = self._sock.makefile("rb")

    def call(self, line: str) -> tuple[bool, str]:
        """Run one command; (ok, output)."""
        self._sock.sendall(line.strip().encode() + b"\n")
        header = self._r.readline()
        status, _, size = header.decode().partition(" ")
        if status not in ("OK", "ERR") or not size.strip().isdigit():
            raise ConnectionError(f"bad reply from the switch: {header!r}")
        return status == "OK", self._r.read(int(size)).decode()

    def run(self, line: str) -> str:
        """Run one command; raises CommandError with the switch's message if it failed."""
        ok, text = self.call(line)
        if not ok:
            raise CommandError(text)
        return text

    def close(self) -> None:
        self._r.close()
        self._sock.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="p4switch-cli", description="Runtime CLI of a p4switch process")
    ap.add_argument("--thrift-port", type=int, default=DEFAULT_PORT, help="the switch's CLI port (default 9090)")
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
    except (OSError, ConnectionError) as e:
        print(f"connection to the switch lost: {e}", file=sys.stderr)
        return 1
    finally:
        client.close()
    return 1 if failed else 0


def _lines(command: list[str], interactive: bool) -> Iterator[str]:
    if command:
        yield " ".join(command)
    elif interactive:
        import readline  # noqa: F401  (line editing for input(); imported only for a terminal)

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
