"""Management API of a running NIC: JSON lines over a Unix stream socket (and optionally TCP
on 127.0.0.1), plus :class:`NicClient`, the client the controller uses.

Why JSON lines on a Unix socket: Mininet hosts are network namespaces that share the
file system, so a socket path reaches every NIC from the controller without routing, and
any language (or ``socat``) can speak it.

Protocol. Each request is one line of JSON::

    {"id": 7, "method": "stats", "params": {}}

and gets exactly one response line with the same id::

    {"id": 7, "result": {...}}
    {"id": 7, "error": {"code": "invalid_params", "message": "..."}}

Error codes: ``parse_error`` (line is not a JSON object), ``unknown_method``,
``invalid_params`` (bad or missing parameter; nothing was changed), ``bad_state`` (e.g. a
workload is already running), ``internal`` (a bug; the NIC keeps running).

Methods (params -> result):

``status`` {} -> {ip, mac, line_rate_bps, time_dilation, now_ns, config, qps, workload,
    counters}
``configure`` {any fields of ``nicmodel.settings.NicSettings``: cc, cc_params, reliability,
    loss_detection, reorder_window_rtt, mtu, dscp, priority, ecn, base_rtt_ns; their allowed
    values are declared there once (``NicSettings.describe()`` lists them)} -> {config}.
    Validated as a whole (nothing changes on error); applies to the next workload.
``start_workload`` {spec} -> {started: true, rank, kind}. ``spec`` = {kind: p2p|incast|
    alltoall|allreduce|poisson, rank, peers: [{rank, ip, mac}], size, ...} (all fields:
    ``nicmodel.workloads.WorkloadSpec``). The same spec goes to every host with its own
    rank; queue pairs and memory regions are set up deterministically from the ranks (QPN
    0x100 + peer rank, PSN 0, same addresses and keys on every host), so no QPs need to be
    exchanged. Each workload starts on a fresh NIC state (counters and statistics too).
    Without ``start_delay_ns`` a live NIC waits 0.25 s of wall time before its first
    message, so that hosts started one after another all have their QPs up in time.
``workload_status`` {} -> {kind, progress 0..1, done, errors: [...]}
``stats`` {} -> the run statistics dict (``nicmodel.stats.RunStats.to_dict``)
``reset`` {} -> {reset: true}: stops the workload, drops QPs and statistics.
"""

from __future__ import annotations

import json
import os
import socket
import socketserver
import threading
from pathlib import Path
from typing import Any, Protocol


class MgmtError(Exception):
    """An error a method reports to the client as ``{"error": {code, message}}``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class NicService(Protocol):
    """What the server calls; implemented by the live NIC driver (and test doubles)."""

    def status(self) -> dict[str, Any]: ...
    def configure(self, **params: Any) -> dict[str, Any]: ...
    def start_workload(self, spec: dict[str, Any]) -> dict[str, Any]: ...
    def workload_status(self) -> dict[str, Any]: ...
    def stats(self) -> dict[str, Any]: ...
    def reset(self) -> dict[str, Any]: ...


METHODS = ("status", "configure", "start_workload", "workload_status", "stats", "reset")
MAX_LINE = 1 << 20


def handle_line(service: NicService, line: bytes) -> dict[str, Any]:
    """One request line -> one response object (never raises)."""
    req_id = None
    try:
        try:
            req = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MgmtError("parse_error", f"request is not JSON: {exc}") from None
        if not isinstance(req, dict):
            raise MgmtError("parse_error", "request must be a JSON object")
        req_id = req.get("id")
        method = req.get("method")
        params = req.get("params", {})
        if method not in METHODS:
            raise MgmtError("unknown_method", f"unknown method {method!r}; methods: {', '.join(METHODS)}")
        if not isinstance(params, dict):
            raise MgmtError("invalid_params", "params must be a JSON object")
        try:
            result = getattr(service, method)(**params)
        except TypeError as exc:  # wrong/missing parameter names
            raise MgmtError("invalid_params", f"{method}: {exc}") from None
        except (ValueError, KeyError) as exc:
            raise MgmtError("invalid_params", f"{method}: {exc}") from None
        return {"id": req_id, "result": result}
    except MgmtError as exc:
        return {"id": req_id, "error": {"code": exc.code, "message": exc.message}}
    except Exception as exc:  # a bug must not take the NIC down; the client sees it
        return {"id": req_id, "error": {"code": "internal", "message": f"{type(exc).__name__}: {exc}"}}


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        service = self.server.service  # type: ignore[attr-defined]
        while True:
            line = self.rfile.readline(MAX_LINE + 1)
            if not line:
                return
            if len(line) > MAX_LINE:
                resp = {"id": None, "error": {"code": "parse_error", "message": "request line too long"}}
                self.wfile.write(json.dumps(resp).encode() + b"\n")
                return
            if not line.strip():
                continue
            resp = handle_line(service, line)
            self.wfile.write(json.dumps(resp, default=str).encode() + b"\n")
            self.wfile.flush()


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """Bound under a temporary name and renamed to its path once listening: a client that
    waits for the path to appear (a test, a script starting ``rnic serve``) could otherwise
    connect between the bind and the listen and be refused."""

    daemon_threads = True

    def server_bind(self) -> None:
        final = self.server_address
        self.server_address = f"{final}.{os.getpid()}.tmp"
        super().server_bind()
        self._final = final

    def server_activate(self) -> None:
        super().server_activate()
        os.rename(self.server_address, self._final)
        self.server_address = self._final


class _TcpServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


class MgmtServer:
    """Serves ``service`` on a Unix socket at ``path`` (and TCP 127.0.0.1:``tcp_port``)."""

    def __init__(self, service: NicService, path: str | Path, tcp_port: int | None = None) -> None:
        self.path = Path(path)
        if self.path.exists():
            if not self.path.is_socket():
                raise ValueError(f"{self.path} exists and is not a socket")
            if _socket_alive(self.path):
                raise ValueError(f"another NIC already serves {self.path}")
            self.path.unlink()  # stale socket of a process that died
        self._servers: list[socketserver.BaseServer] = [_UnixServer(str(self.path), _Handler)]
        if tcp_port is not None:
            self._servers.append(_TcpServer(("127.0.0.1", tcp_port), _Handler))
        for srv in self._servers:
            srv.service = service  # type: ignore[attr-defined]
        self._threads: list[threading.Thread] = []

    @property
    def tcp_port(self) -> int | None:
        for srv in self._servers:
            if isinstance(srv, _TcpServer):
                return srv.server_address[1]
        return None

    def start(self) -> None:
        for srv in self._servers:
            t = threading.Thread(target=srv.serve_forever, args=(0.1,), name="rnic-mgmt", daemon=True)
            t.start()
            self._threads.append(t)

    def close(self) -> None:
        for srv in self._servers:
            srv.shutdown()
            srv.server_close()
        for t in self._threads:
            t.join(timeout=5)
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def _socket_alive(path: Path) -> bool:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        s.close()


class NicClient:
    """Client of one NIC's management API; one method per protocol call.

    ``NicClient("/tmp/h1.sock")`` or ``NicClient(tcp=("127.0.0.1", 9000))``. Errors come
    back as :class:`MgmtError` with the server's code and message."""

    def __init__(self, path: str | Path | None = None, *, tcp: tuple[str, int] | None = None,
                 timeout: float = 10.0) -> None:
        if (path is None) == (tcp is None):
            raise ValueError("give either a socket path or tcp=(host, port)")
        if path is not None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._sock.settimeout(timeout)
            self._sock.connect(str(path))
        else:
            self._sock = socket.create_connection(tcp, timeout=timeout)  # type: ignore[arg-type]
        self._file = self._sock.makefile("rb")
        self._next_id = 0
        self._lock = threading.Lock()

    def call(self, method: str, **params: Any) -> Any:
        with self._lock:
            self._next_id += 1
            req = {"id": self._next_id, "method": method, "params": params}
            self._sock.sendall(json.dumps(req).encode() + b"\n")
            line = self._file.readline()
        if not line:
            raise ConnectionError("management connection closed by the NIC")
        resp = json.loads(line)
        if "error" in resp:
            raise MgmtError(resp["error"]["code"], resp["error"]["message"])
        return resp["result"]

    def status(self) -> dict[str, Any]:
        return self.call("status")

    def configure(self, **params: Any) -> dict[str, Any]:
        return self.call("configure", **params)

    def start_workload(self, spec: dict[str, Any]) -> dict[str, Any]:
        return self.call("start_workload", spec=spec)

    def workload_status(self) -> dict[str, Any]:
        return self.call("workload_status")

    def stats(self) -> dict[str, Any]:
        return self.call("stats")

    def reset(self) -> dict[str, Any]:
        return self.call("reset")

    def close(self) -> None:
        self._file.close()
        self._sock.close()

    def __enter__(self) -> NicClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
