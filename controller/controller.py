"""The fabric controller: every switch's P4Runtime session plus every NIC's management client.

It owns the *desired* state (topology + settings -> one Intent per switch, one NIC config per
host) and keeps the fabric at it: ``start`` pushes the pipeline and installs everything,
``apply`` moves to new settings by writing only the difference, and a switch that restarts is
detected by its session, gets the pipeline again and its full state re-installed.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import grpc
from p4.v1 import p4runtime_pb2

from controller import fabric_rules
from controller.intent import Intent, diff
from controller.packet_in import PacketInDispatch
from controller.pipeline import Pipeline
from controller.settings import Settings
from p4rt import wire
from p4rt.bmv2_runtime import Bmv2Runtime
from p4rt.entries import ActionCall, CloneSession, Replica
from p4rt.errors import P4RuntimeError
from p4rt.p4info import P4InfoIndex
from p4rt.switch_conn import SwitchConnection
from topo.spec import Topology

log = logging.getLogger(__name__)

U64 = (1 << 64) - 1  # Thrift carries register cells as signed i64
RESTORE_BACKOFF = (0.2, 5.0)  # seconds: first wait after a failed restore, and the longest


class FabricController:
    def __init__(
        self,
        topo: Topology,
        pipeline: Pipeline,
        settings: Settings,
        addresses: Mapping[str, str] | None = None,
        nics: Mapping[str, object] | None = None,
        election_id: int = 1,
        on_packet_in: Callable[[str, p4runtime_pb2.PacketIn], None] | None = None,
        profile: str = "custom",
        settings_source: Callable[[], tuple[Settings, str]] | None = None,
        connection: Callable[..., SwitchConnection] = SwitchConnection,
        thrift_ports: Mapping[str, int] | None = None,
        units: fabric_rules.TargetUnits = fabric_rules.BMV2_UNITS,
    ) -> None:
        """``connection`` opens a switch's session (SwitchConnection's arguments); the
        virtual-time fabric passes its in-process one, and its ``units`` (nanoseconds, bytes; a
        ``time_scale`` there is multiplied by the pipeline's own for the topology's dilation)."""
        self.topo = topo
        self.profile = profile  # the settings' name in results (e.g. "baseline", "baseline+set")
        self.pipeline = pipeline
        self.p4 = P4InfoIndex(pipeline.p4info)
        # BMv2 stamps wall-clock time: its ticks are scaled by the fabric's time dilation too
        self.units = replace(units, time_scale=units.time_scale * pipeline.time_scale(topo.time_dilation))
        self.settings = settings
        self.nics = dict(nics or {})
        # where the fabric's current settings live when others may change them (the state file
        # that `fabricctl set/profile` updates): read again before restoring a restarted switch
        self.settings_source = settings_source
        self.on_packet_in = on_packet_in
        # each switch's Thrift runtime port: registers where P4Runtime cannot read them (BMv2)
        self.thrift_ports = {name: port for name, port in (thrift_ports or {}).items() if port}
        # how counters and registers were last read ("counters"/"registers" -> interface): the
        # report says which source each switch figure came from
        self.read_via: dict[str, str] = {}
        self.installed: dict[str, Intent] = {s.name: Intent() for s in topo.switches}
        self.restores = 0  # times a switch was given back its pipeline or missing entries (resync)
        self.restore_failures = 0  # restore attempts that failed (and were retried)
        # (switch, port) ends the switches report operationally down: their cables carry no
        # route, ECMP group, DLB or spraying member until they come back (port_status)
        self.ports_down: set[tuple[str, int]] = set()
        # routes pinned to one port per switch (pin_route): what a drill forces on purpose
        self.pins: dict[str, dict[ipaddress.IPv4Network, int]] = {}
        self._lock = threading.RLock()  # one writer at a time per fabric (apply vs reconnect)
        addresses = addresses or {s.name: f"127.0.0.1:{s.grpc_port}" for s in topo.switches}
        self.conns: dict[str, SwitchConnection] = {}
        for s in topo.switches:
            self.conns[s.name] = connection(
                s.name, addresses[s.name], s.device_id, election_id,
                on_packet_in=PacketInDispatch(s.name, self),
                on_reconnect=self._restore,
            )

    # -- lifecycle ----------------------------------------------------------------------
    def connect(self, timeout: float = 20.0) -> None:
        for conn in self.conns.values():
            conn.connect(timeout)

    def start(self, timeout: float = 20.0) -> None:
        """Connect, push the pipeline to every switch and install the whole desired state."""
        self.connect(timeout)
        with self._lock:
            # in parallel: each switch compiles the program, which takes a while
            with ThreadPoolExecutor(len(self.conns)) as pool:
                list(pool.map(lambda c: c.set_pipeline(self.pipeline.p4info, self.pipeline.device_config,
                                                       self.pipeline.cookie), self.conns.values()))
            self.installed = {name: Intent() for name in self.conns}
            self._converge(self.settings)

    def adopt(self, settings: Settings, profile: str = "custom") -> None:
        """Take over a running fabric configured with ``settings`` (the CLI's case): nothing is
        written; later ``apply`` calls write only what differs from it."""
        self.installed = self.intents(settings)
        self.settings = settings
        self.profile = profile

    def apply(self, settings: Settings, profile: str | None = None) -> int:
        """Move the fabric to ``settings``; returns the number of switch updates written."""
        with self._lock:
            n = self._converge(settings)
            if profile is not None:
                self.profile = profile
            return n

    def configure_nics(self, hosts: list[str] | None = None, per_host: Mapping[str, Settings] | None = None) -> None:
        """Push the current congestion control and reliability settings to NICs (all by
        default); ``per_host``: a host's own settings where a canary gave it some."""
        for host in hosts if hosts is not None else list(self.nics):
            settings = (per_host or {}).get(host, self.settings)
            fabric_rules.configure_nic(self.nics[host], self.topo, host, settings)

    def close(self) -> None:
        """End every P4Runtime session and NIC management connection (the switches and NICs
        keep running)."""
        for conn in self.conns.values():
            conn.close()
        for nic in self.nics.values():
            nic.close()

    def port_status(self, switch: str, port: int, up: bool) -> int:
        """A switch reported ``port``'s operational state (controller/oper_status.py polls it):
        a port that went down leaves every route, ECMP group and DLB/spraying member list that
        used its cable, on both ends; one that came back is used again. Returns the number of
        updates written (0 when nothing changed)."""
        with self._lock:
            key = (switch, port)
            if (key not in self.ports_down) == up:
                return 0
            if up:
                self.ports_down.discard(key)
            else:
                self.ports_down.add(key)
            return self._converge(self.settings, nics=False)

    def pin_route(self, switch: str, prefix: str, port: int | None) -> int:
        """Route ``prefix`` on ``switch`` out of ``port`` only, overriding the computed routes
        (None: back to them); a drill's deliberate change (traffic forced onto one cable, a
        routing loop), kept across a switch restart like every other state. Returns the
        number of updates written; ValueError for a port the switch does not have."""
        net = ipaddress.ip_network(prefix)
        if port is not None and port not in self.topo.ports_of(switch):
            raise ValueError(f"{switch} has no port {port}")
        with self._lock:
            pins = self.pins.setdefault(switch, {})
            if port is None:
                pins.pop(net, None)
            else:
                pins[net] = port
            return self._converge(self.settings, nics=False)

    # -- internals ----------------------------------------------------------------------
    # desired state of every switch under one set of settings (a config file mixes several)
    def intents(self, settings: Settings) -> dict[str, Intent]:
        return fabric_rules.build_intents(self.topo, settings, self.p4, self.pipeline.clone_cos_supported,
                                          self.units, down=self.ports_down, pins=self.pins)

    def _converge(self, settings: Settings, nics: bool = True) -> int:
        desired = self.intents(settings)
        written = 0
        for name, conn in self.conns.items():
            updates = diff(self.p4, self.installed[name], desired[name])
            try:
                conn.write(updates)
            except P4RuntimeError:
                # part of the batch may have gone in: learn what the switch really holds, so
                # the next apply writes the right difference; the caller sees the error
                self.installed[name] = self.read_intent(name, desired[name].defaults)
                raise
            self.installed[name] = desired[name]
            written += len(updates)
        self.settings = settings
        if nics:
            self.configure_nics()
        return written

    def _restore(self, conn: SwitchConnection) -> None:
        """After a session came back: bring the switch back to what this controller intends
        (``resync``): a switch that restarted gets its pipeline and every entry again, one that
        kept them is left alone.

        A failed attempt (the settings file was being rewritten, the switch was still loading)
        must not leave the switch empty, so it is retried with backoff until it succeeds, the
        session is closed, or the stream broke again (that reconnect runs its own restore).
        While another client holds primary (an operator's ``fabricctl``, itself a controller
        that restores), writes are refused: the attempt waits until this session is primary
        again and then reconciles with whatever the other client left."""
        session = conn.reconnects
        delay = RESTORE_BACKOFF[0]

        def abandoned() -> bool:
            return conn.wait_closed(0) or conn.reconnects != session

        while True:
            try:
                self.resync(conn.name)
                return
            except Exception as e:  # noqa: BLE001 - whatever failed, the switch must not stay empty
                self.restore_failures += 1
                log.warning("%s: restoring the switch failed, retrying in %.1f s: %s", conn.name, delay, e)
            while not conn.wait_primary(delay):
                if abandoned():
                    return
            if conn.wait_closed(delay) or abandoned():
                return
            delay = min(delay * 2, RESTORE_BACKOFF[1])

    def resync(self, switch: str) -> int:
        """Make ``switch`` hold what this controller intends, whatever it holds now: its
        pipeline if it has another or none (it restarted), then the difference between the
        entries it holds (read back) and the intended ones. A matching pipeline proves
        nothing about the entries: another controller may have pushed it and lost primary
        before writing them. Returns the number of updates written; raises on failure."""
        conn = self.conns[switch]
        with self._lock:
            try:
                cookie = conn.get_pipeline().cookie.cookie
            except Exception:  # noqa: BLE001 - no pipeline, or no answer: push it
                cookie = None
            if self.settings_source is not None:
                self.adopt(*self.settings_source())
            intended = self.installed[switch]
            if cookie == self.pipeline.cookie:
                updates = diff(self.p4, self.read_intent(switch, intended.defaults), intended)
                if not updates:
                    return 0
                log.info("%s: %d updates missing from the switch, writing them", switch, len(updates))
            else:
                log.info("%s: switch restarted, re-pushing pipeline and %d objects", switch, intended.size())
                conn.set_pipeline(self.pipeline.p4info, self.pipeline.device_config, self.pipeline.cookie)
                updates = diff(self.p4, Intent(), intended)
            conn.write(updates)
            self.restores += 1
            return len(updates)

    # -- reads (CLI, telemetry, tests) ---------------------------------------------------
    def read_intent(self, switch: str, defaults_of: Mapping[str, ActionCall] | None = None) -> Intent:
        """What ``switch`` actually holds, in the controller's terms: every table entry, action
        profile member and group, clone session, and the default action of the tables in
        ``defaults_of`` (default: those the controller sets)."""
        conn = self.conns[switch]
        it = Intent()
        everything = p4runtime_pb2.Entity()
        everything.table_entry.table_id = 0
        for e in conn.read([everything]):
            table, entry, _ = self.p4.table_entry_from_pb(e.table_entry)
            if entry is not None:
                entry.counter = None  # statistics, not configuration
                it.add_entry(table, entry)
        for table in defaults_of if defaults_of is not None else self.installed[switch].defaults:
            ent = p4runtime_pb2.Entity()
            ent.table_entry.table_id = self.p4.get("tables", table).preamble.id
            ent.table_entry.is_default_action = True
            for e in conn.read([ent]):
                _, _, action = self.p4.table_entry_from_pb(e.table_entry)
                it.set_default(table, action)  # type: ignore[arg-type]
        for prof in self.p4.names("action_profiles"):
            for mid, call in self.read_members(switch, prof).items():
                it.add_member(prof, mid, call)
            for gid, members in self.read_groups(switch, prof).items():
                it.add_group(prof, gid, members)
        sessions = p4runtime_pb2.Entity()
        sessions.packet_replication_engine_entry.clone_session_entry.session_id = 0
        for e in conn.read([sessions]):
            cs = e.packet_replication_engine_entry.clone_session_entry
            replicas = [Replica(r.egress_port or int.from_bytes(r.port, "big"), r.instance) for r in cs.replicas]
            it.add_clone_session(CloneSession(cs.session_id, replicas, cs.class_of_service, cs.packet_length_bytes))
        return it

    def read_table(self, switch: str, table: str, default: bool = False) -> list[p4runtime_pb2.TableEntry]:
        """The entries of a table, or with ``default`` its default entry (P4Runtime reads those apart)."""
        ent = p4runtime_pb2.Entity()
        ent.table_entry.table_id = self.p4.get("tables", table).preamble.id
        ent.table_entry.is_default_action = default
        return [e.table_entry for e in self.conns[switch].read([ent])]

    def read_counter(self, switch: str, counter: str, indices: list[int] | None = None) -> dict[int, tuple[int, int]]:
        """index -> (packets, bytes) of an indirect counter: all cells, or just ``indices``."""
        return self.read_counters(switch, {counter: indices})[counter]

    def read_counters(self, switch: str, cells: dict[str, list[int] | None]) -> dict[str, dict[int, tuple[int, int]]]:
        """counter -> index -> (packets, bytes) of several indirect counters' cells (each
        counter's ``cells``: a list, or None for all) in one Read: a telemetry sample reads
        four counters a switch, and over gRPC each Read is a round trip."""
        by_id = wire.counter_cells(self.conns[switch].read_encoded(self._cell_reads("counters", cells)))
        self.read_via["counters"] = "P4Runtime counter read"
        return {name: by_id.get(self.p4.get("counters", name).preamble.id, {}) for name in cells}

    def _cell_reads(self, kind: str, cells: dict[str, list[int] | None]) -> bytes:
        """The encoded entities of a Read of ``cells`` of counters or registers (``kind``)."""
        return b"".join(self.p4.cell_reads(kind, name, indices) for name, indices in cells.items())

    def read_members(self, switch: str, profile: str) -> dict[int, ActionCall]:
        """member id -> action of one action profile."""
        ent = p4runtime_pb2.Entity()
        ent.action_profile_member.action_profile_id = self.p4.get("action_profiles", profile).preamble.id
        out = {}
        for e in self.conns[switch].read([ent]):
            m = e.action_profile_member
            a = self.p4.by_id("actions", m.action.action_id)
            names = {p.id: p.name for p in a.params}
            out[m.member_id] = ActionCall(a.preamble.name, {names[p.param_id]: int.from_bytes(p.value, "big")
                                                            for p in m.action.params})
        return out

    def read_groups(self, switch: str, profile: str) -> dict[int, list[tuple[int, int]]]:
        """group id -> [(member id, weight)] of one action profile."""
        ent = p4runtime_pb2.Entity()
        ent.action_profile_group.action_profile_id = self.p4.get("action_profiles", profile).preamble.id
        return {e.action_profile_group.group_id: [(m.member_id, m.weight) for m in e.action_profile_group.members]
                for e in self.conns[switch].read([ent])}

    def read_register(self, switch: str, register: str, indices: list[int] | None = None) -> dict[int, int]:
        """index -> value of a register: all cells, or just ``indices``."""
        return self.read_registers(switch, {register: indices})[register]

    def read_registers(self, switch: str, cells: dict[str, list[int] | None]) -> dict[str, dict[int, int]]:
        """register -> index -> value of several registers' cells in one Read, as
        ``read_counters``; through Thrift where the switch's P4Runtime reads no registers."""
        try:
            by_id = wire.register_cells(self.conns[switch].read_encoded(self._cell_reads("registers", cells)))
            self.read_via["registers"] = "P4Runtime register read"
            return {name: by_id.get(self.p4.get("registers", name).preamble.id, {}) for name in cells}
        except P4RuntimeError as e:  # BMv2's P4Runtime server reads no registers: its Thrift API does
            if e.code != grpc.StatusCode.UNIMPLEMENTED or switch not in self.thrift_ports:
                raise
        self.read_via["registers"] = "Thrift register_read (BMv2's P4Runtime reads no registers)"
        out: dict[str, dict[int, int]] = {}
        with Bmv2Runtime(self.thrift_ports[switch]) as rt:
            for name, indices in cells.items():
                out[name] = (dict(enumerate(v & U64 for v in rt.register_read_all(name))) if indices is None
                             else {i: rt.register_read(name, i) & U64 for i in indices})
        return out
