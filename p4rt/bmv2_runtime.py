"""BMv2's Thrift runtime API (the subset this project uses) and a client for it.

The method signatures, struct layouts and error codes below are BMv2's, as its IDL files
declare them (``thrift_src/standard.thrift``, ``thrift_src/simple_pre_lag.thrift``,
``targets/simple_switch/thrift/simple_switch.thrift``): these are the wire facts both sides
need, so the client here and our switch's server (``p4switch.switch.thrift_server``) share
them. ``simple_switch_CLI`` speaks the same protocol, so :class:`Bmv2Runtime` drives a real
``simple_switch``/``simple_switch_grpc`` and our ``p4switch`` alike.

The ``p4switch`` service is ours: the runtime-CLI words BMv2 has no Thrift call for (link
model, port rates in bit/s, PFC, statistics) and the table words, as one call carrying a
command line. A BMv2 switch answers it with a ``PROTOCOL_ERROR`` ("Unknown service: p4switch")
and closes the connection (the client reconnects).

Extension: our server adds the reason as field 100 (``message``) of every error struct;
Thrift readers skip fields they do not know, so BMv2 clients are unaffected, and errors from
BMv2 itself simply have no message.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from p4rt.entries import Exact, FieldMatch, Lpm, Optional, Range, Ternary
from p4rt.thrift import (
    BINARY,
    BOOL,
    I32,
    I64,
    STRING,
    AppErrorType,
    ApplicationError,
    ListOf,
    MapOf,
    MessageType,
    Method,
    Reader,
    Service,
    Struct,
    decode_reply,
    encode_message,
    method,
    struct,
)

DEFAULT_PORT = 9090
MESSAGE_FIELD = (100, "message", STRING)  # our extension, see the module docstring


def _error(name: str) -> Struct:
    return struct(name, (1, "code", I32), MESSAGE_FIELD)


# error code names per exception (BMv2's enums)
ERROR_CODES: dict[str, dict[int, str]] = {
    "InvalidTableOperation": {
        1: "TABLE_FULL", 2: "INVALID_HANDLE", 3: "EXPIRED_HANDLE", 4: "COUNTERS_DISABLED", 5: "METERS_DISABLED",
        6: "AGEING_DISABLED", 7: "INVALID_TABLE_NAME", 8: "INVALID_ACTION_NAME", 9: "WRONG_TABLE_TYPE",
        10: "INVALID_MBR_HANDLE", 11: "MBR_STILL_USED", 12: "MBR_ALREADY_IN_GRP", 13: "MBR_NOT_IN_GRP",
        14: "INVALID_GRP_HANDLE", 15: "GRP_STILL_USED", 16: "EMPTY_GRP", 17: "DUPLICATE_ENTRY", 18: "BAD_MATCH_KEY",
        19: "INVALID_METER_OPERATION", 20: "DEFAULT_ACTION_IS_CONST", 21: "DEFAULT_ENTRY_IS_CONST",
        22: "NO_DEFAULT_ENTRY", 23: "INVALID_ACTION_PROFILE_NAME", 24: "NO_ACTION_PROFILE_SELECTION",
        25: "IMMUTABLE_TABLE_ENTRIES", 26: "BAD_ACTION_DATA", 27: "NO_TABLE_KEY", 100: "ERROR"},
    "InvalidCounterOperation": {1: "INVALID_COUNTER_NAME", 2: "INVALID_INDEX", 3: "ERROR"},
    "InvalidRegisterOperation": {1: "INVALID_REGISTER_NAME", 2: "INVALID_INDEX", 3: "ERROR"},
    "InvalidDevMgrOperation": {1: "ERROR"},
    "InvalidMcOperation": {1: "TABLE_FULL", 2: "INVALID_MGID", 3: "INVALID_MGRP_HANDLE", 4: "INVALID_L1_HANDLE",
                           5: "ERROR"},
    "InvalidMirroringOperation": {1: "SESSION_NOT_FOUND"},
    "InvalidCommand": {1: "ERROR"},  # ours (p4switch service)
}
ERRORS = {name: _error(name) for name in ERROR_CODES}


def error_code(exception: str, name: str) -> int:
    """The number of a BMv2 error code: ``error_code("InvalidRegisterOperation", "INVALID_INDEX")``."""
    return next(k for k, v in ERROR_CODES[exception].items() if v == name)


BM_COUNTER_VALUE = struct("BmCounterValue", (1, "bytes", I64), (2, "packets", I64))
MIRRORING_SESSION_CONFIG = struct("MirroringSessionConfig", (1, "port", I32), (2, "mgid", I32))
DEV_MGR_PORT_INFO = struct("DevMgrPortInfo", (1, "port_num", I32), (2, "iface_name", STRING), (3, "is_up", BOOL),
                           (4, "extra", MapOf(STRING, STRING)))

CXT = (1, "cxt_id", I32)

# table entries (BmMatchParamType: EXACT 0, LPM 1, TERNARY 2, VALID 3, RANGE 4)
MATCH_EXACT, MATCH_LPM, MATCH_TERNARY, MATCH_RANGE = 0, 1, 2, 4
BM_MATCH_PARAM = struct(
    "BmMatchParam", (1, "type", I32),
    (2, "exact", struct("BmMatchParamExact", (1, "key", BINARY))),
    (3, "lpm", struct("BmMatchParamLPM", (1, "key", BINARY), (2, "prefix_length", I32))),
    (4, "ternary", struct("BmMatchParamTernary", (1, "key", BINARY), (2, "mask", BINARY))),
    (5, "valid", struct("BmMatchParamValid", (1, "key", BOOL))),
    (6, "range", struct("BmMatchParamRange", (1, "start", BINARY), (2, "end_", BINARY))))
BM_ADD_ENTRY_OPTIONS = struct("BmAddEntryOptions", (1, "priority", I32))


def _throws(name: str) -> tuple[tuple[int, str, Struct], ...]:
    return ((1, "ouch", ERRORS[name]),)


_TABLE = _throws("InvalidTableOperation")
_COUNTER = _throws("InvalidCounterOperation")
_REGISTER = _throws("InvalidRegisterOperation")
_MC, _MIRROR = _throws("InvalidMcOperation"), _throws("InvalidMirroringOperation")

STANDARD = Service.of(
    "standard",
    method("bm_mt_get_num_entries", (CXT, (2, "table_name", STRING)), I64, _TABLE),
    method("bm_mt_clear_entries", (CXT, (2, "table_name", STRING), (3, "reset_default_entry", BOOL)), None, _TABLE),
    method("bm_counter_read", (CXT, (2, "counter_name", STRING), (3, "index", I32)), BM_COUNTER_VALUE, _COUNTER),
    method("bm_counter_reset_all", (CXT, (2, "counter_name", STRING)), None, _COUNTER),
    method("bm_counter_write", (CXT, (2, "counter_name", STRING), (3, "index", I32), (4, "value", BM_COUNTER_VALUE)),
           None, _COUNTER),
    method("bm_register_read", (CXT, (2, "register_array_name", STRING), (3, "idx", I32)), I64, _REGISTER),
    method("bm_register_read_all", (CXT, (2, "register_array_name", STRING)), ListOf(I64), _REGISTER),
    method("bm_register_write", (CXT, (2, "register_array_name", STRING), (3, "index", I32), (4, "value", I64)),
           None, _REGISTER),
    method("bm_register_write_range", (CXT, (2, "register_array_name", STRING), (3, "start_index", I32),
                                       (4, "end_index", I32), (5, "value", I64)), None, _REGISTER),
    method("bm_register_reset", (CXT, (2, "register_array_name", STRING)), None, _REGISTER),
    method("bm_dev_mgr_show_ports", (), ListOf(DEV_MGR_PORT_INFO), _throws("InvalidDevMgrOperation")),
    method("bm_mt_add_entry", (CXT, (2, "table_name", STRING), (3, "match_key", ListOf(BM_MATCH_PARAM)),
                               (4, "action_name", STRING), (5, "action_data", ListOf(BINARY)),
                               (6, "options", BM_ADD_ENTRY_OPTIONS)), I32, _TABLE),
    method("bm_mt_set_default_action", (CXT, (2, "table_name", STRING), (3, "action_name", STRING),
                                        (4, "action_data", ListOf(BINARY))), None, _TABLE),
)

SIMPLE_PRE_LAG = Service.of(
    "simple_pre_lag",
    method("bm_mc_mgrp_create", (CXT, (2, "mgrp", I32)), I32, _MC),
    method("bm_mc_mgrp_destroy", (CXT, (2, "mgrp_handle", I32)), None, _MC),
    method("bm_mc_node_create", (CXT, (2, "rid", I32), (3, "port_map", STRING), (4, "lag_map", STRING)), I32, _MC),
    method("bm_mc_node_associate", (CXT, (2, "mgrp_handle", I32), (3, "l1_handle", I32)), None, _MC),
    method("bm_mc_node_dissociate", (CXT, (2, "mgrp_handle", I32), (3, "l1_handle", I32)), None, _MC),
    method("bm_mc_node_destroy", (CXT, (2, "l1_handle", I32)), None, _MC),
)

SIMPLE_SWITCH = Service.of(
    "simple_switch",
    method("mirroring_session_add", ((1, "mirror_id", I32), (2, "config", MIRRORING_SESSION_CONFIG)), None, _MIRROR),
    method("mirroring_session_delete", ((1, "mirror_id", I32),), None, _MIRROR),
    method("mirroring_session_get", ((1, "mirror_id", I32),), MIRRORING_SESSION_CONFIG, _MIRROR),
    method("set_egress_priority_queue_depth", ((1, "port_num", I32), (2, "priority", I32), (3, "depth_pkts", I32)), I32),
    method("set_egress_queue_depth", ((1, "port_num", I32), (2, "depth_pkts", I32)), I32),
    method("set_all_egress_queue_depths", ((1, "depth_pkts", I32),), I32),
    method("set_egress_priority_queue_rate", ((1, "port_num", I32), (2, "priority", I32), (3, "rate_pps", I64)), I32),
    method("set_egress_queue_rate", ((1, "port_num", I32), (2, "rate_pps", I64)), I32),
    method("set_all_egress_queue_rates", ((1, "rate_pps", I64),), I32),
    method("get_time_elapsed_us", (), I64),
    method("get_time_since_epoch_us", (), I64),
)

P4SWITCH = Service.of(  # ours
    "p4switch",
    method("run_command", ((1, "line", STRING),), STRING, _throws("InvalidCommand")),
)

SERVICES = {s.name: s for s in (STANDARD, SIMPLE_PRE_LAG, SIMPLE_SWITCH, P4SWITCH)}


class Bmv2Error(Exception):
    """A call the switch refused with one of BMv2's declared exceptions; ``exception`` is its
    type (``InvalidRegisterOperation``), ``code`` its number and ``code_name`` the enum name
    (``INVALID_REGISTER_NAME``)."""

    def __init__(self, call: str, exception: str, code: int, message: str = "") -> None:
        self.call, self.exception, self.code, self.message = call, exception, code, message
        self.code_name = ERROR_CODES.get(exception, {}).get(code, str(code))
        super().__init__(f"{call}: {exception} {self.code_name}" + (f": {message}" if message else ""))


class QueueConfigError(Exception):
    """A ``set_*queue*`` call that returned a non-zero status (BMv2 returns 0 on success)."""


def port_map(ports: list[int]) -> str:
    """BMv2's port map string: character i from the right is '1' if port i is a member."""
    if any(p < 0 for p in ports):
        raise ValueError(f"negative port in {ports}")
    return "".join("1" if p in set(ports) else "0" for p in range(max(ports, default=-1), -1, -1))


def ports_of_map(text: str) -> list[int]:
    if set(text) - {"0", "1"}:
        raise ValueError(f"port map {text!r} is not a string of 0s and 1s")
    return [i for i, c in enumerate(reversed(text)) if c == "1"]


def field_bytes(value: int, width: int) -> bytes:
    """A key or action-data value as BMv2 takes it: big-endian in ``ceil(width / 8)`` bytes."""
    return value.to_bytes((width + 7) // 8, "big")


def match_param(match: FieldMatch | None, width: int) -> dict[str, Any]:
    """One ``BmMatchParam`` for a key field of ``width`` bits; ``None`` (a field left out of
    the entry) is the wildcard of a ternary, range or optional field. BMv2's Thrift API has no
    optional kind: ``simple_switch_CLI`` sends an optional field as a ternary one with an
    all-ones or all-zeros mask, and so does this."""
    full = (1 << width) - 1
    if isinstance(match, Exact):
        return {"type": MATCH_EXACT, "exact": {"key": field_bytes(match.value, width)}}
    if isinstance(match, Lpm):
        return {"type": MATCH_LPM, "lpm": {"key": field_bytes(match.value, width), "prefix_length": match.prefix_len}}
    if isinstance(match, Range):
        return {"type": MATCH_RANGE, "range": {"start": field_bytes(match.low, width), "end_": field_bytes(match.high, width)}}
    if isinstance(match, Ternary):
        value, mask = match.value, match.mask
    elif isinstance(match, Optional) and match.value is not None:
        value, mask = match.value, full
    else:  # wildcard
        value, mask = 0, 0
    return {"type": MATCH_TERNARY, "ternary": {"key": field_bytes(value, width), "mask": field_bytes(mask, width)}}


def to_i64(value: int) -> int:
    """An unsigned register value as BMv2 puts it in a Thrift i64 (two's complement)."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


class Bmv2Runtime:
    """A connection to a switch's Thrift runtime port (BMv2's ``--thrift-port``, or ours).

    One TCP connection, binary protocol, buffered transport, multiplexed services; calls are
    serialized (thread-safe). ``cxt_id`` is BMv2's context (0 for simple_switch)."""

    def __init__(self, port: int = DEFAULT_PORT, host: str = "127.0.0.1", timeout: float = 10.0, cxt_id: int = 0) -> None:
        self._address, self._timeout = (host, port), timeout
        self._open()
        self._lock = threading.Lock()
        self._seqid = 0
        self.cxt_id = cxt_id

    def _open(self) -> None:
        self._sock: socket.socket | None = socket.create_connection(self._address, timeout=self._timeout)
        self._reader = Reader(self._sock.makefile("rb"))

    def _drop(self) -> None:
        """Forget a connection that broke (the switch's process died, or a reply timed out and
        the stream is out of step): the next call opens a new one, so a client kept across a
        switch restart talks to the new process instead of failing for good."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def close(self) -> None:
        self._drop()

    def __enter__(self) -> Bmv2Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, service: str, name: str, **args: Any) -> Any:
        """Calls ``service:name``; the arguments by their IDL names (``cxt_id`` is filled in).
        Raises :class:`Bmv2Error` for a declared exception and
        :class:`p4rt.thrift.ApplicationError` when the switch cannot run the call (after a
        ``PROTOCOL_ERROR``, which the server answers by closing, on a new connection)."""
        m: Method = SERVICES[service].methods[name]
        if any(f.name == "cxt_id" for f in m.args):
            args.setdefault("cxt_id", self.cxt_id)
        with self._lock:
            if self._sock is None:  # the last one broke: a new connection (raises while the switch is down)
                self._open()
            self._seqid = (self._seqid + 1) & 0x7FFFFFFF
            try:
                self._sock.sendall(encode_message(f"{service}:{name}", MessageType.CALL, self._seqid,
                                                  m.args_struct, args))
                value, error = decode_reply(self._reader, m, self._seqid)
            except EOFError:
                self._drop()
                raise ConnectionError(f"{name}: the switch closed the connection") from None
            except OSError:
                self._drop()
                raise
            except ApplicationError as e:
                if e.kind == AppErrorType.PROTOCOL_ERROR:  # e.g. an unknown service: the server hung up
                    self._drop()
                raise
        if error is not None:
            exc, fields = error
            raise Bmv2Error(name, exc, fields.get("code", 0), fields.get("message", ""))
        return value

    # ---- registers, counters, tables (service "standard") ------------------------------
    def register_read(self, name: str, index: int) -> int:
        return self.call("standard", "bm_register_read", register_array_name=name, idx=index)

    def register_read_all(self, name: str) -> list[int]:
        return self.call("standard", "bm_register_read_all", register_array_name=name)

    def register_write(self, name: str, index: int, value: int) -> None:
        self.call("standard", "bm_register_write", register_array_name=name, index=index, value=to_i64(value))

    def register_reset(self, name: str) -> None:
        self.call("standard", "bm_register_reset", register_array_name=name)

    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        """``(packets, bytes)`` of one cell of an indirect counter."""
        v = self.call("standard", "bm_counter_read", counter_name=name, index=index)
        return v.get("packets", 0), v.get("bytes", 0)

    def counter_reset(self, name: str) -> None:
        self.call("standard", "bm_counter_reset_all", counter_name=name)

    def table_num_entries(self, table: str) -> int:
        return self.call("standard", "bm_mt_get_num_entries", table_name=table)

    def table_clear(self, table: str, reset_default_entry: bool = False) -> None:
        self.call("standard", "bm_mt_clear_entries", table_name=table, reset_default_entry=reset_default_entry)

    def table_add(self, table: str, match_key: list[dict[str, Any]], action: str, action_data: list[bytes],
                  priority: int | None = None) -> int:
        """``bm_mt_add_entry``: ``match_key`` from :func:`match_param` in the table's key
        order, ``priority`` as the runtime CLI takes it (smaller wins); the entry handle."""
        options = {"priority": priority} if priority is not None else {}
        return self.call("standard", "bm_mt_add_entry", table_name=table, match_key=match_key, action_name=action,
                         action_data=action_data, options=options)

    def table_set_default(self, table: str, action: str, action_data: list[bytes]) -> None:
        self.call("standard", "bm_mt_set_default_action", table_name=table, action_name=action,
                  action_data=action_data)

    def show_ports(self) -> list[dict[str, Any]]:
        return self.call("standard", "bm_dev_mgr_show_ports")

    # ---- multicast (service "simple_pre_lag") ------------------------------------------
    def mc_mgrp_create(self, group: int) -> int:
        return self.call("simple_pre_lag", "bm_mc_mgrp_create", mgrp=group)

    def mc_mgrp_destroy(self, handle: int) -> None:
        self.call("simple_pre_lag", "bm_mc_mgrp_destroy", mgrp_handle=handle)

    def mc_node_create(self, rid: int, ports: list[int]) -> int:
        return self.call("simple_pre_lag", "bm_mc_node_create", rid=rid, port_map=port_map(ports), lag_map="")

    def mc_node_associate(self, group_handle: int, node_handle: int) -> None:
        self.call("simple_pre_lag", "bm_mc_node_associate", mgrp_handle=group_handle, l1_handle=node_handle)

    def mc_node_dissociate(self, group_handle: int, node_handle: int) -> None:
        self.call("simple_pre_lag", "bm_mc_node_dissociate", mgrp_handle=group_handle, l1_handle=node_handle)

    def mc_node_destroy(self, node_handle: int) -> None:
        self.call("simple_pre_lag", "bm_mc_node_destroy", l1_handle=node_handle)

    # ---- simple_switch: mirroring, queues, time ----------------------------------------
    def mirroring_add(self, session: int, port: int) -> None:
        self.call("simple_switch", "mirroring_session_add", mirror_id=session, config={"port": port})

    def mirroring_delete(self, session: int) -> None:
        self.call("simple_switch", "mirroring_session_delete", mirror_id=session)

    def mirroring_get(self, session: int) -> dict[str, int]:
        return self.call("simple_switch", "mirroring_session_get", mirror_id=session)

    def _queue(self, name: str, **args: Any) -> None:
        status = self.call("simple_switch", name, **args)
        if status != 0:
            raise QueueConfigError(f"{name}({args}) returned {status}")

    def set_queue_depth(self, depth_pkts: int, port: int | None = None, priority: int | None = None) -> None:
        """``set_queue_depth`` of simple_switch_CLI: every port's queues, one port's, or one
        priority queue of one port."""
        if port is None:
            self._queue("set_all_egress_queue_depths", depth_pkts=depth_pkts)
        elif priority is None:
            self._queue("set_egress_queue_depth", port_num=port, depth_pkts=depth_pkts)
        else:
            self._queue("set_egress_priority_queue_depth", port_num=port, priority=priority, depth_pkts=depth_pkts)

    def set_queue_rate(self, rate_pps: int, port: int | None = None, priority: int | None = None) -> None:
        """``set_queue_rate`` of simple_switch_CLI, in packets per second (0: unlimited)."""
        if port is None:
            self._queue("set_all_egress_queue_rates", rate_pps=rate_pps)
        elif priority is None:
            self._queue("set_egress_queue_rate", port_num=port, rate_pps=rate_pps)
        else:
            self._queue("set_egress_priority_queue_rate", port_num=port, priority=priority, rate_pps=rate_pps)

    def time_elapsed_us(self) -> int:
        return self.call("simple_switch", "get_time_elapsed_us")

    # ---- ours ---------------------------------------------------------------------------
    def run_command(self, line: str) -> str:
        """A runtime-CLI command line on our switch (service ``p4switch``)."""
        return self.call("p4switch", "run_command", line=line)

