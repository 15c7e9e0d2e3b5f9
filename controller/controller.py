"""The fabric controller: every switch's P4Runtime session plus every NIC's management client.

It owns the *desired* state (topology + settings -> one Intent per switch, one NIC config per
host) and keeps the fabric at it: ``start`` pushes the pipeline and installs everything,
``apply`` moves to new settings by writing only the difference, and a switch that restarts is
detected by its session, gets the pipeline again and its full state re-installed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor

from p4.v1 import p4runtime_pb2

from controller import fabric_rules
from controller.intent import Intent, diff
from controller.p4info import P4InfoIndex
from controller.pipeline import Pipeline
from controller.settings import Settings
from controller.switch_conn import SwitchConnection
from p4switch.entries import ActionCall
from topo.spec import Topology

log = logging.getLogger(__name__)


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
    ) -> None:
        self.topo = topo
        self.profile = profile  # the settings' name in results (e.g. "baseline", "baseline+set")
        self.pipeline = pipeline
        self.p4 = P4InfoIndex(pipeline.p4info)
        self.settings = settings
        self.nics = dict(nics or {})
        # where the fabric's current settings live when others may change them (the state file
        # that `fabricctl set/profile` updates): read again before restoring a restarted switch
        self.settings_source = settings_source
        self.on_packet_in = on_packet_in
        self.installed: dict[str, Intent] = {s.name: Intent() for s in topo.switches}
        self.restores = 0  # switches given their pipeline and state back after a restart
        self._lock = threading.RLock()  # one writer at a time per fabric (apply vs reconnect)
        addresses = addresses or {s.name: f"127.0.0.1:{s.grpc_port}" for s in topo.switches}
        self.conns: dict[str, SwitchConnection] = {}
        for s in topo.switches:
            self.conns[s.name] = SwitchConnection(
                s.name, addresses[s.name], s.device_id, election_id,
                on_packet_in=self._packet_in_handler(s.name),
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
        self.installed = fabric_rules.build_intents(self.topo, settings, self.p4)
        self.settings = settings
        self.profile = profile

    def apply(self, settings: Settings, profile: str | None = None) -> int:
        """Move the fabric to ``settings``; returns the number of switch updates written."""
        with self._lock:
            n = self._converge(settings)
            if profile is not None:
                self.profile = profile
            return n

    def configure_nics(self, hosts: list[str] | None = None) -> None:
        """Push the current congestion control and reliability settings to NICs (all by default)."""
        for host in hosts if hosts is not None else list(self.nics):
            fabric_rules.configure_nic(self.nics[host], self.topo, host, self.settings)

    def close(self) -> None:
        for conn in self.conns.values():
            conn.close()

    # -- internals ----------------------------------------------------------------------
    def _converge(self, settings: Settings) -> int:
        desired = fabric_rules.build_intents(self.topo, settings, self.p4)
        written = 0
        for name, conn in self.conns.items():
            updates = diff(self.p4, self.installed[name], desired[name])
            conn.write(updates)
            self.installed[name] = desired[name]
            written += len(updates)
        self.settings = settings
        self.configure_nics()
        return written

    def _restore(self, conn: SwitchConnection) -> None:
        """After a session came back: a switch that lost its pipeline (it restarted) gets the
        pipeline and its full state again; one that kept it is left alone."""
        with self._lock:
            try:
                cookie = conn.get_pipeline().cookie.cookie
            except Exception:
                cookie = None
            if cookie == self.pipeline.cookie:
                return
            if self.settings_source is not None:
                self.adopt(*self.settings_source())
            log.info("%s: switch restarted, re-pushing pipeline and %d objects", conn.name,
                     self.installed[conn.name].size())
            conn.set_pipeline(self.pipeline.p4info, self.pipeline.device_config, self.pipeline.cookie)
            conn.write(diff(self.p4, Intent(), self.installed[conn.name]))
            self.restores += 1

    def _packet_in_handler(self, switch: str) -> Callable[[p4runtime_pb2.PacketIn], None]:
        def handle(pkt: p4runtime_pb2.PacketIn) -> None:
            if self.on_packet_in is not None:  # looked up per packet: telemetry may attach later
                self.on_packet_in(switch, pkt)

        return handle

    # -- reads (CLI, telemetry, tests) ---------------------------------------------------
    def read_table(self, switch: str, table: str) -> list[p4runtime_pb2.TableEntry]:
        ent = p4runtime_pb2.Entity()
        ent.table_entry.table_id = self.p4.get("tables", table).preamble.id
        return [e.table_entry for e in self.conns[switch].read([ent])]

    def read_counter(self, switch: str, counter: str, indices: list[int] | None = None) -> dict[int, tuple[int, int]]:
        """index -> (packets, bytes) of an indirect counter: all cells, or just ``indices``."""
        ents = []
        for i in indices if indices is not None else [None]:
            ent = p4runtime_pb2.Entity()
            ent.counter_entry.CopyFrom(self.p4.counter_pb(counter, i))
            ents.append(ent)
        return {e.counter_entry.index.index: (e.counter_entry.data.packet_count, e.counter_entry.data.byte_count)
                for e in self.conns[switch].read(ents)}

    def read_groups(self, switch: str, profile: str) -> dict[int, list[tuple[int, ActionCall | None]]]:
        """group id -> [(member id, member action)] of one action profile."""
        prof_id = self.p4.get("action_profiles", profile).preamble.id
        mem = p4runtime_pb2.Entity()
        mem.action_profile_member.action_profile_id = prof_id
        grp = p4runtime_pb2.Entity()
        grp.action_profile_group.action_profile_id = prof_id
        conn = self.conns[switch]
        members = {}
        for e in conn.read([mem]):
            m = e.action_profile_member
            a = self.p4.by_id("actions", m.action.action_id)
            names = {p.id: p.name for p in a.params}
            members[m.member_id] = ActionCall(a.preamble.name, {names[p.param_id]: int.from_bytes(p.value, "big")
                                                               for p in m.action.params})
        return {e.action_profile_group.group_id: [(m.member_id, members.get(m.member_id))
                                                  for m in e.action_profile_group.members]
                for e in conn.read([grp])}

    def read_register(self, switch: str, register: str, indices: list[int] | None = None) -> dict[int, int]:
        """index -> value of a register: all cells, or just ``indices``."""
        ents = []
        for i in indices if indices is not None else [None]:
            ent = p4runtime_pb2.Entity()
            ent.register_entry.CopyFrom(self.p4.register_pb(register, i))
            ents.append(ent)
        return {e.register_entry.index.index: int.from_bytes(e.register_entry.data.bitstring, "big")
                for e in self.conns[switch].read(ents)}
