"""Runtime CLI server of the switch: the line protocol of ``p4rt.runtime_cli`` on a local TCP
port (loopback only), running :class:`Commands` against the device."""

from __future__ import annotations

import socketserver
import threading
from typing import TYPE_CHECKING

from p4rt.runtime_cli import DEFAULT_PORT, MAX_LINE, CommandError, send_reply
from p4switch.switch.commands import Commands

if TYPE_CHECKING:
    from p4switch.switch.device import Device


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        commands: Commands = self.server.commands  # type: ignore[attr-defined]
        while True:
            raw = self.rfile.readline(MAX_LINE)
            if not raw:
                return
            if not raw.endswith(b"\n") and len(raw) == MAX_LINE:
                while raw and not raw.endswith(b"\n"):  # skip the rest of the over-long line
                    raw = self.rfile.readline(MAX_LINE)
                send_reply(self.wfile, False, f"command longer than {MAX_LINE} bytes")
                continue
            try:
                line = raw.decode("utf-8").strip()
                send_reply(self.wfile, True, commands.run(line))
            except UnicodeDecodeError:
                send_reply(self.wfile, False, "command is not UTF-8")
            except CommandError as e:
                send_reply(self.wfile, False, str(e))
            except Exception as e:  # a bug in one command must not kill the CLI server
                send_reply(self.wfile, False, f"internal error: {type(e).__name__}: {e}")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class CliServer:
    """Serves :class:`Commands` for a device on ``host:port`` in a background thread."""

    def __init__(self, device: Device, port: int = DEFAULT_PORT, host: str = "127.0.0.1") -> None:
        self.commands = Commands(device)
        self._server = _Server((host, port), _Handler)
        self._server.commands = self.commands  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="runtime-cli", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
