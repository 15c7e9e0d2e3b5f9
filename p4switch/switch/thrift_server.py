"""BMv2's Thrift runtime interface on ``--thrift-port``, served by our switch.

The same protocol as ``simple_switch``'s (binary protocol, buffered transport, multiplexed
services ``standard``, ``simple_pre_lag``, ``simple_switch``; the IDL facts are in
:mod:`p4rt.bmv2_runtime`), so one client drives either target: ``p4switch-cli``, the PTF
tests and the controller's telemetry use :class:`p4rt.bmv2_runtime.Bmv2Runtime` for both.
Each call runs one operation of :class:`Commands` (the one implementation behind every
runtime word); errors are answered with BMv2's exception and code, plus our reason text as
field 100 (Thrift clients skip fields they do not know). Our ``p4switch`` service carries
command lines for the words BMv2 has no Thrift call for.

Listens on loopback only, like the P4Runtime server unless told otherwise.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import socketserver
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from p4rt.bmv2_runtime import DEFAULT_PORT, ERROR_CODES, SERVICES, error_code, ports_of_map, to_i64
from p4rt.entries import CounterData, EntryError, NotFoundError
from p4rt.thrift import AppErrorType, ApplicationError, ProtocolError, Reader, UserException, serve_message
from p4switch.switch.commands import CommandError, Commands, UnknownObjectError

if TYPE_CHECKING:
    from p4switch.switch.device import Device

log = logging.getLogger(__name__)


def _fail(exception: str, code: str, e: Exception) -> Exception:
    """BMv2's exception with that code, our reason as its message; an exception without
    such a code (``InvalidMirroringOperation`` has only ``SESSION_NOT_FOUND``) becomes a
    ``TApplicationException`` carrying the reason."""
    if code not in ERROR_CODES[exception].values():
        return ApplicationError(AppErrorType.UNKNOWN, str(e))
    return UserException(exception, {"code": error_code(exception, code), "message": str(e)})


class Bmv2Api:
    """The Thrift handlers: BMv2's calls as operations on a :class:`Commands`."""

    def __init__(self, commands: Commands) -> None:
        self.c = commands
        d = commands.device
        self.handlers: dict[str, dict[str, Callable[..., Any]]] = {
            "standard": {
                "bm_mt_get_num_entries": lambda cxt_id, table_name: self._table(
                    lambda: len(self.c.table(table_name).entries())),
                "bm_mt_clear_entries": lambda cxt_id, table_name, reset_default_entry: self._table(
                    lambda: self._clear(table_name, reset_default_entry)),
                "bm_counter_read": lambda cxt_id, counter_name, index: self._counter(
                    lambda: self._counter_value(self.c.counter(counter_name).read(index))),
                "bm_counter_reset_all": lambda cxt_id, counter_name: self._counter(
                    lambda: self.c.counter_reset(counter_name)),
                "bm_counter_write": lambda cxt_id, counter_name, index, value: self._counter(
                    lambda: self.c.counter(counter_name).write(
                        index, CounterData(packets=value.get("packets", 0), bytes=value.get("bytes", 0)))),
                "bm_register_read": lambda cxt_id, register_array_name, idx: self._register(
                    lambda: to_i64(self.c.register(register_array_name).read(idx))),
                "bm_register_read_all": lambda cxt_id, register_array_name: self._register(
                    lambda: [to_i64(v) for v in self.c.register(register_array_name).cells]),
                "bm_register_write": lambda cxt_id, register_array_name, index, value: self._register(
                    lambda: self._write_registers(register_array_name, index, index, value)),
                "bm_register_write_range": lambda cxt_id, register_array_name, start_index, end_index, value:
                    self._register(lambda: self._write_registers(register_array_name, start_index, end_index, value)),
                "bm_register_reset": lambda cxt_id, register_array_name: self._register(
                    lambda: self.c.register_reset(register_array_name)),
                "bm_dev_mgr_show_ports": lambda: self._run(
                    "InvalidDevMgrOperation", {}, lambda: [
                        {"port_num": p, "iface_name": name, "is_up": up, "extra": extra}
                        for p, name, up, extra in self.c.ports()]),
            },
            "simple_pre_lag": {
                "bm_mc_mgrp_create": lambda cxt_id, mgrp: self._mc(lambda: self.c.mc_mgrp_create(mgrp)),
                "bm_mc_mgrp_destroy": lambda cxt_id, mgrp_handle: self._mc(lambda: self.c.mc_mgrp_destroy(mgrp_handle)),
                "bm_mc_node_create": lambda cxt_id, rid, port_map, lag_map: self._mc(
                    lambda: self.c.mc_node_create(rid, self._ports(port_map, lag_map))),
                "bm_mc_node_associate": lambda cxt_id, mgrp_handle, l1_handle: self._mc(
                    lambda: self.c.mc_node_associate(mgrp_handle, l1_handle)),
                "bm_mc_node_dissociate": lambda cxt_id, mgrp_handle, l1_handle: self._mc(
                    lambda: self.c.mc_node_dissociate(mgrp_handle, l1_handle)),
                "bm_mc_node_destroy": lambda cxt_id, l1_handle: self._mc(lambda: self.c.mc_node_destroy(l1_handle)),
            },
            "simple_switch": {
                "mirroring_session_add": lambda mirror_id, config: self._mirror(
                    lambda: self._mirroring_add(mirror_id, config)),
                "mirroring_session_delete": lambda mirror_id: self._mirror(lambda: self.c.mirroring_delete(mirror_id)),
                "mirroring_session_get": lambda mirror_id: self._mirror(lambda: self._mirroring_get(mirror_id)),
                "set_egress_priority_queue_depth": lambda port_num, priority, depth_pkts: self._queue(
                    d.tm.set_queue_depth, depth_pkts, port_num, priority),
                "set_egress_queue_depth": lambda port_num, depth_pkts: self._queue(
                    d.tm.set_queue_depth, depth_pkts, port_num, None),
                "set_all_egress_queue_depths": lambda depth_pkts: self._queue(
                    d.tm.set_queue_depth, depth_pkts, None, None),
                "set_egress_priority_queue_rate": lambda port_num, priority, rate_pps: self._queue(
                    d.tm.set_queue_rate, rate_pps, port_num, priority),
                "set_egress_queue_rate": lambda port_num, rate_pps: self._queue(
                    d.tm.set_queue_rate, rate_pps, port_num, None),
                "set_all_egress_queue_rates": lambda rate_pps: self._queue(d.tm.set_queue_rate, rate_pps, None, None),
                # the clock of ingress_global_timestamp (fabric time under time dilation)
                "get_time_elapsed_us": lambda: d.clock.now_ns() // 1000,
            },
            "p4switch": {
                "run_command": self._run_command,
            },
        }

    # ---- one mapping of errors per exception type -----------------------------------------
    def _run(self, exception: str, names: dict[str, str], op: Callable[[], Any], not_found: str = "ERROR") -> Any:
        """Runs ``op`` under the device lock. ``names`` maps the ``what`` of an
        :class:`UnknownObjectError` to the exception's code name (key "" for any other),
        ``not_found`` is the code of a ``NotFoundError`` (an index out of range, a missing
        session), anything else is ``ERROR``."""
        try:
            with self.c.locked():
                return op()
        except UnknownObjectError as e:
            raise _fail(exception, names.get(e.what, names.get("", "ERROR")), e) from None
        except NotFoundError as e:
            raise _fail(exception, not_found, e) from None
        except (CommandError, EntryError, ValueError) as e:
            raise _fail(exception, "ERROR", e) from None

    def _table(self, op: Callable[[], Any]) -> Any:
        return self._run("InvalidTableOperation", {"": "INVALID_TABLE_NAME"}, op)

    def _counter(self, op: Callable[[], Any]) -> Any:
        return self._run("InvalidCounterOperation", {"": "INVALID_COUNTER_NAME"}, op, "INVALID_INDEX")

    def _register(self, op: Callable[[], Any]) -> Any:
        return self._run("InvalidRegisterOperation", {"": "INVALID_REGISTER_NAME"}, op, "INVALID_INDEX")

    def _mc(self, op: Callable[[], Any]) -> Any:
        return self._run("InvalidMcOperation", {"multicast group": "INVALID_MGRP_HANDLE",
                                                "multicast node": "INVALID_L1_HANDLE"}, op, "INVALID_MGRP_HANDLE")

    def _mirror(self, op: Callable[[], Any]) -> Any:
        return self._run("InvalidMirroringOperation", {"": "SESSION_NOT_FOUND"}, op, "SESSION_NOT_FOUND")

    # ---- operations with a little translation ---------------------------------------------
    def _clear(self, table: str, reset_default: bool) -> None:
        self.c.table_clear(table)
        if reset_default:
            self.c.table(table).reset_default()

    @staticmethod
    def _counter_value(data: CounterData) -> dict[str, int]:
        return {"bytes": data.bytes, "packets": data.packets}

    def _write_registers(self, name: str, start: int, end: int, value: int) -> None:
        reg = self.c.register(name)
        value &= (1 << 64) - 1  # the i64 on the wire carries the unsigned cell value
        for index in (start, end):
            reg.read(index)  # both ends in range, or nothing is written
        for index in range(start, end + 1):
            reg.write(index, value)

    @staticmethod
    def _ports(port_map: str, lag_map: str) -> list[int]:
        if "1" in lag_map:
            raise CommandError("LAGs are not supported by p4switch")
        return ports_of_map(port_map)

    def _mirroring_add(self, session: int, config: dict[str, int]) -> None:
        if "mgid" in config:  # BMv2 can mirror to a multicast group; our PRE sessions list ports
            raise ApplicationError(AppErrorType.UNKNOWN, "p4switch: mirroring sessions to a multicast group (mgid) "
                                                         "are not supported; give a port")
        if "port" not in config:
            raise ApplicationError(AppErrorType.UNKNOWN, "mirroring_session_add: the session config has no port")
        try:
            self.c.mirroring_add(session, config["port"])
        except UnknownObjectError as e:  # no program: our sessions live in its PRE (BMv2's in the switch)
            raise ApplicationError(AppErrorType.UNKNOWN, str(e)) from None

    def _mirroring_get(self, session: int) -> dict[str, int]:
        found = self.c.mirroring_get(session)
        if found is None:
            raise NotFoundError(f"no mirroring session {session}")
        return {"port": found.replicas[0].port} if found.replicas else {}

    def _queue(self, setter: Callable[..., None], value: int, port: int | None, priority: int | None) -> int:
        """The queue calls answer a status (BMv2: always 0); a value our traffic manager
        refuses (negative, priority out of range) is answered with the reason instead."""
        try:
            with self.c.locked():
                setter(value, port, priority)
        except ValueError as e:
            raise ApplicationError(AppErrorType.UNKNOWN, str(e)) from None
        return 0

    def _run_command(self, line: str) -> str:
        try:
            return self.c.run(line)
        except CommandError as e:
            raise _fail("InvalidCommand", "ERROR", e) from None


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        api: Bmv2Api = self.server.api  # type: ignore[attr-defined]
        services = {name: (SERVICES[name], handlers) for name, handlers in api.handlers.items()}
        reader = Reader(self.rfile)
        while True:
            try:
                reply, close = serve_message(reader, services)
                if reply is not None:
                    self.wfile.write(reply)
                    self.wfile.flush()
            except EOFError:
                return
            except (ProtocolError, OSError) as e:  # garbage or a broken peer: Thrift servers drop the connection
                log.warning("runtime client %s: %s; connection closed", self.client_address, e)
                return
            if close:
                return


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type[_Handler]) -> None:
        super().__init__(address, handler)
        self.clients: set[socket.socket] = set()  # connections being served, dropped on close

    def process_request(self, request, client_address) -> None:
        self.clients.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request) -> None:
        self.clients.discard(request)
        super().shutdown_request(request)


class ThriftServer:
    """Serves BMv2's runtime API for a device on ``host:port`` in a background thread."""

    def __init__(self, device: Device, port: int = DEFAULT_PORT, host: str = "127.0.0.1") -> None:
        self.commands = Commands(device)
        self._server = _Server((host, port), _Handler)
        self._server.api = Bmv2Api(self.commands)  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="thrift-runtime",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving and drop every client, as the switch's process exit would: a client
        kept open finds its connection closed, not a server that answers for a stopped device."""
        self._server.shutdown()
        self._server.server_close()
        for conn in list(self._server.clients):
            with contextlib.suppress(OSError):  # its handler may have just closed it
                conn.shutdown(socket.SHUT_RDWR)
