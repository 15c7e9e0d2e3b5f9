"""Write and Read of every P4Runtime entity against a loaded program (the executor API).

One class per request: ``Entities(program, schema, digests, oneshots, now_ns, lock)``;
``write(update)`` applies one update (a protobuf Update) or raises
P4RuntimeError/EntryError, the caller holding the device ``lock``; ``read(entity, out)`` puts
one Entity into a ReadOut per match (zero ids and missing indexes are wildcards) and takes
the lock itself, as briefly as it can.
``now_ns`` is the switch's clock: inserted entries start their idle timer at it, and reads that
ask for ``time_since_last_hit`` measure against it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from google.protobuf.message import DecodeError
from p4.v1 import p4runtime_pb2

from p4rt import codec as X
from p4rt import entries as E
from p4rt import wire as W
from p4rt.bytestrings import canonical, to_int
from p4rt.errors import Code, P4RuntimeError, invalid
from p4rt.schema import Schema, TableSchema
from p4switch.p4runtime.digests import DigestBatcher
from p4switch.p4runtime.oneshot import OneShots

Update = p4runtime_pb2.Update
Entity = p4runtime_pb2.Entity
INSERT, MODIFY, DELETE = Update.INSERT, Update.MODIFY, Update.DELETE


def _modify_only(kind: str, update_type: int) -> None:
    if update_type != MODIFY:
        raise invalid(f"{kind} entries can only be modified (not inserted or deleted)")


class Entities:
    """The executor-side half of Write and Read: P4Runtime entities in, executor calls out."""

    def __init__(self, program: Any, schema: Schema, digests: DigestBatcher, oneshots: OneShots,
                 now_ns: Callable[[], int], lock: Any, pause: Callable[[], None] | None = None) -> None:
        """``pause``: called between chunks of a long read (default ``yield_to_forwarding``)."""
        self.program = program
        self.pause = pause or yield_to_forwarding
        self.lock = lock
        self.schema = schema
        self.digests = digests
        self.oneshots = oneshots
        self.now_ns = now_ns

    # =========================================================================== writes
    def write(self, update: p4runtime_pb2.Update) -> None:
        """Apply one update; raises P4RuntimeError or EntryError (the caller maps both to
        the update's p4.v1.Error)."""
        if update.type == Update.UNSPECIFIED:
            raise invalid("update type is UNSPECIFIED")
        entity = update.entity
        kind = entity.WhichOneof("entity")
        handler = getattr(self, f"_write_{kind}", None) if kind else None
        if handler is None:
            raise P4RuntimeError(Code.UNIMPLEMENTED, f"writing {kind or 'an empty entity'} is not supported")
        handler(update.type, getattr(entity, kind))

    def _table(self, ts: TableSchema) -> Any:
        try:
            return self.program.tables[ts.name]
        except KeyError:
            raise P4RuntimeError(Code.INTERNAL, f"table {ts.name} of the P4Info is not in the program") from None

    def _write_table_entry(self, update_type: int, msg: p4runtime_pb2.TableEntry) -> None:
        ts = self.schema.table(msg.table_id)
        table = self._table(ts)
        if msg.is_const:
            raise invalid(f"{ts.name}: is_const is read-only (only the server sets it, on const entries it reads)")
        if msg.is_default_action:
            self._write_default(update_type, ts, table, msg)
            return
        if update_type != DELETE and msg.HasField("time_since_last_hit"):
            raise invalid(f"{ts.name}: time_since_last_hit is read-only (it must be unset in a write)")
        if ts.is_const:
            raise P4RuntimeError(Code.PERMISSION_DENIED, f"{ts.name} has const entries and cannot be written")
        one_shot = update_type != DELETE and msg.action.WhichOneof("type") == "action_profile_action_set"
        entry = X.entry_from_proto(self.schema, ts, msg, need_action=update_type != DELETE and not one_shot)
        profile = self._profile(ts.profile_id)[1] if ts.profile_id else None
        key = self.oneshots.key(ts, entry) if profile is not None else None
        now_us = self.now_ns() // 1000
        if one_shot:
            made = self.oneshots.create(self.schema, ts, profile, msg.action.action_profile_action_set)
            entry.action = E.GroupRef(made.group_id)
            try:
                if update_type == INSERT:
                    table.insert(entry, now_us)
                else:
                    table.modify(entry)
            except E.EntryError:
                self.oneshots.abandon(made, profile)
                raise
            self.oneshots.release(key, profile)
            self.oneshots.bind(key, made)
            return
        if update_type == INSERT:
            table.insert(entry, now_us)
        else:
            {MODIFY: table.modify, DELETE: table.delete}[update_type](entry)
        if profile is not None and update_type != INSERT:
            self.oneshots.release(key, profile)

    def _write_default(self, update_type: int, ts: TableSchema, table: Any, msg: p4runtime_pb2.TableEntry) -> None:
        if update_type != MODIFY:
            raise invalid(f"{ts.name}: the default entry can only be modified")
        if msg.match or msg.priority:
            raise invalid(f"{ts.name}: the default entry has no match key or priority")
        if msg.idle_timeout_ns or msg.HasField("time_since_last_hit"):
            raise invalid(f"{ts.name}: the default entry has no idle timeout")
        if ts.const_default_id:
            raise P4RuntimeError(Code.PERMISSION_DENIED, f"{ts.name} has a const default action")
        if not msg.HasField("action"):
            table.reset_default()
            return
        if ts.profile_id:
            raise P4RuntimeError(Code.UNIMPLEMENTED, f"{ts.name}: default entries of action-profile tables")
        table.set_default(X.table_action_from_proto(self.schema, ts, msg.action, default=True))

    def _profile(self, profile_id: int) -> tuple[Any, Any]:
        info = self.schema.lookup("action profile", self.schema.profiles, profile_id)
        return info, self.program.action_profiles[info.preamble.name]

    def _member_action(self, info: Any, action: p4runtime_pb2.Action) -> E.ActionCall:
        allowed = {ref.id for tid in info.table_ids for ref in self.schema.tables[tid].info.action_refs
                   if ref.scope != ref.DEFAULT_ONLY}
        if action.action_id not in allowed:
            raise invalid(f"{info.preamble.name}: action id {action.action_id} is not an action of its tables")
        return X.action_call_from_proto(self.schema, action)

    def _write_action_profile_member(self, update_type: int, msg: p4runtime_pb2.ActionProfileMember) -> None:
        info, profile = self._profile(msg.action_profile_id)
        if update_type == DELETE:
            profile.delete_member(msg.member_id)
            return
        call = self._member_action(info, msg.action)
        (profile.add_member if update_type == INSERT else profile.modify_member)(msg.member_id, call)

    def _write_action_profile_group(self, update_type: int, msg: p4runtime_pb2.ActionProfileGroup) -> None:
        info, profile = self._profile(msg.action_profile_id)
        if not info.with_selector:
            raise invalid(f"{info.preamble.name} is an action profile without selector: no groups")
        if update_type == DELETE:
            profile.delete_group(msg.group_id)
            return
        # an unset weight (0) counts as 1; the profile checks members, weights and max_size
        members = [(m.member_id, m.weight or 1) for m in msg.members]
        if info.max_group_size and msg.max_size > info.max_group_size:
            raise invalid(f"group {msg.group_id}: max_size {msg.max_size} exceeds {info.max_group_size}")
        (profile.add_group if update_type == INSERT else profile.modify_group)(msg.group_id, members, msg.max_size)

    def _write_counter_entry(self, update_type: int, msg: p4runtime_pb2.CounterEntry) -> None:
        _modify_only("counter", update_type)
        info = self.schema.lookup("counter", self.schema.counters, msg.counter_id)
        counter = self.program.counters[info.preamble.name]
        for index in self._indexes(info, msg):
            counter.write(index, X.counter_from_proto(msg.data))

    @staticmethod
    def _check_index(info: Any, index: int) -> None:
        """A negative index is malformed (INVALID_ARGUMENT); one past the end names a cell
        that does not exist (OUT_OF_RANGE), as the spec distinguishes them."""
        if index < 0:
            raise invalid(f"{info.preamble.name}: index {index} is negative")
        if index >= info.size:
            raise P4RuntimeError(Code.OUT_OF_RANGE, f"{info.preamble.name}: index {index} outside 0..{info.size - 1}")

    def _direct_target(self, msg: p4runtime_pb2.TableEntry, kind: str) -> tuple[TableSchema, Any, dict]:
        ts = self.schema.table(msg.table_id)
        if msg.is_default_action:
            raise P4RuntimeError(Code.UNIMPLEMENTED, f"{kind} of default entries")
        return ts, self._table(ts), X.match_from_proto(ts, msg.match)

    def _write_direct_counter_entry(self, update_type: int, msg: p4runtime_pb2.DirectCounterEntry) -> None:
        _modify_only("direct counter", update_type)
        ts, table, match = self._direct_target(msg.table_entry, "direct counters")
        if not ts.direct_counter:
            raise invalid(f"{ts.name} has no direct counter")
        table.set_counter(match, msg.table_entry.priority, X.counter_from_proto(msg.data))

    def _write_meter_entry(self, update_type: int, msg: p4runtime_pb2.MeterEntry) -> None:
        _modify_only("meter", update_type)
        info = self.schema.lookup("meter", self.schema.meters, msg.meter_id)
        meter = self.program.meters[info.preamble.name]
        config = X.meter_from_proto(msg.config) if msg.HasField("config") else None
        for index in self._indexes(info, msg):
            meter.set_config(index, config)

    def _write_direct_meter_entry(self, update_type: int, msg: p4runtime_pb2.DirectMeterEntry) -> None:
        _modify_only("direct meter", update_type)
        ts, table, match = self._direct_target(msg.table_entry, "direct meters")
        if not ts.direct_meter:
            raise invalid(f"{ts.name} has no direct meter")
        config = X.meter_from_proto(msg.config) if msg.HasField("config") else None
        table.set_meter(match, msg.table_entry.priority, config)

    def _write_register_entry(self, update_type: int, msg: p4runtime_pb2.RegisterEntry) -> None:
        _modify_only("register", update_type)
        info = self.schema.lookup("register", self.schema.registers, msg.register_id)
        register = self.program.registers[info.preamble.name]
        if msg.data.WhichOneof("data") != "bitstring":
            raise invalid(f"{info.preamble.name}: register data must be a bitstring")
        value = to_int(msg.data.bitstring, register.width, info.preamble.name)
        for index in self._indexes(info, msg):
            register.write(index, value)

    def _write_packet_replication_engine_entry(self, update_type: int, msg: p4runtime_pb2.PacketReplicationEngineEntry) -> None:
        pre = self.program.pre
        kind = msg.WhichOneof("type")
        if kind == "multicast_group_entry":
            group = msg.multicast_group_entry
            gid = group.multicast_group_id
            exists = gid in pre.mc_groups
            self._check_existence("multicast group", gid, update_type, exists)
            if update_type == DELETE:
                pre.delete_mc_group(gid)
            else:
                pre.set_mc_group(gid, self._replicas(group.replicas), group.metadata)
        elif kind == "clone_session_entry":
            session = msg.clone_session_entry
            sid = session.session_id
            self._check_existence("clone session", sid, update_type, sid in pre.clone_sessions)
            if update_type == DELETE:
                pre.delete_clone_session(sid)
            else:
                pre.set_clone_session(E.CloneSession(sid, self._replicas(session.replicas),
                                                     session.class_of_service, session.packet_length_bytes))
        else:
            raise invalid("packet replication engine entry without a multicast group or clone session")

    @staticmethod
    def _check_existence(kind: str, obj_id: int, update_type: int, exists: bool) -> None:
        if update_type == INSERT and exists:
            raise P4RuntimeError(Code.ALREADY_EXISTS, f"{kind} {obj_id} already exists")
        if update_type != INSERT and not exists:
            raise P4RuntimeError(Code.NOT_FOUND, f"{kind} {obj_id} does not exist")

    @staticmethod
    def _replicas(replicas: Iterable[p4runtime_pb2.Replica]) -> list[E.Replica]:
        out = []
        for r in replicas:
            port = r.egress_port if r.WhichOneof("port_kind") != "port" else to_int(r.port, 32, "replica port")
            out.append(E.Replica(port, r.instance))
        return out

    def _value_set(self, value_set_id: int) -> tuple[Any, Any]:
        info = self.schema.lookup("value set", self.schema.value_sets, value_set_id)
        if len(info.match) != 1:
            raise P4RuntimeError(Code.UNIMPLEMENTED, f"{info.preamble.name}: value sets of structs are not supported")
        return info, self.program.value_sets[info.preamble.name]

    def _write_value_set_entry(self, update_type: int, msg: p4runtime_pb2.ValueSetEntry) -> None:
        _modify_only("value set", update_type)
        info, value_set = self._value_set(msg.value_set_id)
        field = info.match[0]
        full = (1 << field.bitwidth) - 1
        members = []
        for member in msg.members:
            if len(member.match) != 1 or member.match[0].field_id != field.id:
                raise invalid(f"{info.preamble.name}: each member needs exactly one match on field id {field.id}")
            m = member.match[0]
            what = f"value set {info.preamble.name}"
            kind = m.WhichOneof("field_match_type")
            if kind == "exact":
                members.append((to_int(m.exact.value, field.bitwidth, what), full))
            elif kind == "ternary" and field.match_type == field.TERNARY:
                value, mask = to_int(m.ternary.value, field.bitwidth, what), to_int(m.ternary.mask, field.bitwidth, what)
                if value & ~mask:
                    raise invalid(f"{what}: ternary value has bits set outside the mask")
                members.append((value, mask))
            else:
                raise invalid(f"{what}: {kind} match not allowed here")
        value_set.set_members(members)

    def _write_digest_entry(self, update_type: int, msg: p4runtime_pb2.DigestEntry) -> None:
        self.schema.lookup("digest", self.schema.digests, msg.digest_id)
        exists = msg.digest_id in self.digests.configs
        self._check_existence("digest entry", msg.digest_id, update_type, exists)
        if update_type == DELETE:
            self.digests.remove(msg.digest_id)
        else:
            self.digests.configure(msg.digest_id, msg.config)

    # ============================================================================ reads
    # Readers put what they find into a ReadOut: encoded Entity messages for the kinds that
    # can be large (table entries, counters, registers; see wire.py for why), protobuf
    # Entities for the rest. The large kinds take the device lock only while they copy state
    # out, in stretches of at most SNAPSHOT cells or one table, and encode after letting go,
    # so a full Read never stalls forwarding for long; the others run under the lock.
    def read_all(self, entities: Iterable[Any], out: ReadOut) -> None:
        """``read`` of each entity in turn (an Entity, or its bytes), except that a run of
        cells of the same counter or register, each a (kind, object id, index) as
        ``wire.read_request`` finds them (what a poller such as the controller's telemetry
        sends: the cells of the ports it watches), is read as one selection: one hold of the
        device lock and one encoding for the run, not one for each cell."""
        run: tuple[str, int] | None = None  # (kind, object id) of the run of cells so far
        cells: list[int] = []
        for entity in entities:
            if type(entity) is tuple:
                kind, obj_id, index = entity
                if run != (kind, obj_id):
                    if run is not None:
                        self._read_cells(run, cells, out)
                    run, cells = (kind, obj_id), []
                cells.append(index)
                continue
            if run is not None:
                self._read_cells(run, cells, out)
                run = None
            self.read(_entity(entity), out)
        if run is not None:
            self._read_cells(run, cells, out)

    def _read_cells(self, run: tuple[str, int], indexes: list[int], out: ReadOut) -> None:
        kind, obj_id = run
        counter = kind == "counter_entry"
        info = (self.schema.lookup("counter", self.schema.counters, obj_id) if counter
                else self.schema.lookup("register", self.schema.registers, obj_id))
        if indexes:  # the smallest and the largest decide (not an interpreted call a cell)
            self._check_index(info, min(indexes))
            self._check_index(info, max(indexes))
        if counter:
            self._counter_cells(obj_id, self.program.counters[info.preamble.name], indexes, out)
        else:
            self._register_cells(obj_id, self.program.registers[info.preamble.name], indexes, out)

    def read(self, entity: p4runtime_pb2.Entity, out: ReadOut) -> None:
        """Put one Entity into ``out`` for every object ``entity`` selects."""
        kind = entity.WhichOneof("entity")
        handler = getattr(self, f"_read_{kind}", None) if kind else None
        if handler is None:
            raise P4RuntimeError(Code.UNIMPLEMENTED, f"reading {kind or 'an empty entity'} is not supported")
        if kind in _LOCKS_ITSELF:
            handler(getattr(entity, kind), out)
        else:
            with self.lock:
                handler(getattr(entity, kind), out)

    def _read_table_entry(self, msg: p4runtime_pb2.TableEntry, out: ReadOut,
                          counter: bool = False, meter: bool = False) -> None:
        tables = [self.schema.table(msg.table_id)] if msg.table_id else list(self.schema.tables.values())
        with_counter = counter or msg.HasField("counter_data")
        with_meter = meter or msg.HasField("meter_config")
        with_idle = msg.HasField("time_since_last_hit")
        if with_idle and msg.is_default_action:
            raise invalid("the default entry has no idle timeout: time_since_last_hit must be unset")
        if with_idle and msg.table_id and not tables[0].idle_timeout:
            raise invalid(f"{tables[0].name} does not support idle timeout: time_since_last_hit must be unset")
        for ts in tables:
            table = self._table(ts)
            if msg.is_default_action:
                with self.lock:
                    default = table.default_action
                out.raw(_TABLE_ENTRY + W.with_length(X.default_entry_bytes(self.schema, ts, default)))
                continue
            idle = with_idle and ts.idle_timeout  # a wildcard read skips tables without it
            match = X.match_from_proto(ts, msg.match) if msg.match else None
            with self.lock:  # copy out what the data plane and writers change
                if match is not None:
                    try:
                        found = [table.get(match, msg.priority)]
                    except E.NotFoundError:
                        found = []
                else:
                    found = table.entries()
                if msg.priority:
                    found = [e for e in found if e.priority == msg.priority]
                now_ns = self.now_ns()
                hits = [table.last_hit(e.match, e.priority) for e in found] if idle else None
                sets = {i: self.oneshots.action_set_of(ts, e) for i, e in enumerate(found)
                        if isinstance(e.action, E.GroupRef) and e.action.group_id in self.oneshots.hidden}
            is_const = ts.is_const
            for i, entry in enumerate(found):
                if i and not i % SNAPSHOT:
                    self.pause()
                action_set = sets.get(i)
                body = X.entry_bytes(self.schema, ts, entry, with_counter, with_meter,
                                     action=X.action_set_bytes(action_set) if action_set is not None else None,
                                     is_const=is_const,
                                     elapsed_ns=now_ns - hits[i] * 1000 if hits is not None else None)
                out.raw(_TABLE_ENTRY + W.with_length(body))

    def _read_action_profile_member(self, msg: p4runtime_pb2.ActionProfileMember, out: ReadOut) -> None:
        ids = [msg.action_profile_id] if msg.action_profile_id else list(self.schema.profiles)
        for pid in ids:
            _info, profile = self._profile(pid)
            for member_id, call in sorted(profile.members.items()):
                if (msg.member_id and member_id != msg.member_id) or member_id in self.oneshots.hidden:
                    continue
                m = out.add().action_profile_member
                m.action_profile_id, m.member_id = pid, member_id
                m.action.MergeFromString(X.action_call_bytes(self.schema, call))

    def _read_action_profile_group(self, msg: p4runtime_pb2.ActionProfileGroup, out: ReadOut) -> None:
        ids = [msg.action_profile_id] if msg.action_profile_id else list(self.schema.profiles)
        for pid in ids:
            info, profile = self._profile(pid)
            if not info.with_selector:
                continue
            for group_id, group in sorted(profile.groups.items()):
                if (msg.group_id and group_id != msg.group_id) or group_id in self.oneshots.hidden:
                    continue
                g = out.add().action_profile_group
                g.action_profile_id, g.group_id, g.max_size = pid, group_id, group.max_size
                for member_id, weight in group.members:
                    g.members.add(member_id=member_id, weight=weight)

    def _indexes(self, info: Any, msg: Any) -> Iterable[int]:
        """The index a counter/meter/register entity names (OUT_OF_RANGE past the end), or
        every index when it names none."""
        if msg.HasField("index"):
            self._check_index(info, msg.index.index)
            return [msg.index.index]
        return range(info.size)

    def _selected(self, kind: str, infos: dict[int, Any], objects: dict[str, Any], obj_id: int,
                  msg: Any) -> Iterable[tuple[int, Any, Iterable[int]]]:
        """(id, executor object, indexes) of every counter/meter/register a read names: id 0
        is every object of the kind, an unset index every cell."""
        for oid in [obj_id] if obj_id else list(infos):
            info = self.schema.lookup(kind, infos, oid)
            yield oid, objects[info.preamble.name], self._indexes(info, msg)

    def _snapshots(self, indexes: Iterable[int], read: Callable[[list[int]], list[Any]]) -> Iterable[list[Any]]:
        """The cells, copied under the device lock SNAPSHOT at a time by ``read`` (the
        extern's compiled ``count_cells`` or ``read_cells``: one call a slice, not one a cell).
        The pause comes after the caller has encoded a slice, so that neither the copy (device
        lock) nor the encoding (GIL) of more than one slice runs between two packets."""
        indexes = list(indexes)
        for start in range(0, len(indexes), SNAPSHOT):
            with self.lock:
                cells = read(indexes[start:start + SNAPSHOT])
            yield cells
            self.pause()

    def _read_counter_entry(self, msg: p4runtime_pb2.CounterEntry, out: ReadOut) -> None:
        for cid, counter, indexes in self._selected("counter", self.schema.counters, self.program.counters,
                                                    msg.counter_id, msg):
            self._counter_cells(cid, counter, indexes, out)

    def _counter_cells(self, cid: int, counter: Any, indexes: Iterable[int], out: ReadOut) -> None:
        for cells in self._snapshots(indexes, counter.count_cells):
            out.extend_raw(W.counter_entities(cid, cells))

    def _read_meter_entry(self, msg: p4runtime_pb2.MeterEntry, out: ReadOut) -> None:
        for mid, meter, indexes in self._selected("meter", self.schema.meters, self.program.meters, msg.meter_id, msg):
            for index in indexes:
                m = out.add().meter_entry
                m.meter_id, m.index.index = mid, index
                config = meter.get_config(index)
                if config is not None:
                    m.config.MergeFromString(X.meter_bytes(config))

    def _read_register_entry(self, msg: p4runtime_pb2.RegisterEntry, out: ReadOut) -> None:
        for rid, register, indexes in self._selected("register", self.schema.registers, self.program.registers,
                                                     msg.register_id, msg):
            self._register_cells(rid, register, indexes, out)

    def _register_cells(self, rid: int, register: Any, indexes: Iterable[int], out: ReadOut) -> None:
        for cells in self._snapshots(indexes, register.read_cells):
            out.extend_raw(W.register_entities(rid, [(i, canonical(v)) for i, v in cells]))

    def _read_direct(self, msg: Any, out: ReadOut, kind: str) -> None:
        """Direct counter or meter entries: the table entries read with their ``counter_data``
        or ``meter_config``, which moves out of the entry into the direct entity. A wildcard
        table id skips the tables without that resource; naming one is INVALID_ARGUMENT."""
        counter = kind == "counter"
        found = ReadOut()
        self._read_table_entry(msg.table_entry, found, counter=counter, meter=not counter)
        for item in found.entities():
            entry = item.table_entry
            ts = self.schema.tables[entry.table_id]
            if not (ts.direct_counter if counter else ts.direct_meter):
                if msg.table_entry.table_id:
                    raise invalid(f"{ts.name} has no direct {kind}")
                continue
            if counter:
                direct = out.add().direct_counter_entry
                direct.data.CopyFrom(entry.counter_data)
                entry.ClearField("counter_data")
            else:
                direct = out.add().direct_meter_entry
                if entry.HasField("meter_config"):
                    direct.config.CopyFrom(entry.meter_config)
                entry.ClearField("meter_config")
            direct.table_entry.CopyFrom(entry)

    def _read_direct_counter_entry(self, msg: p4runtime_pb2.DirectCounterEntry, out: ReadOut) -> None:
        self._read_direct(msg, out, "counter")

    def _read_direct_meter_entry(self, msg: p4runtime_pb2.DirectMeterEntry, out: ReadOut) -> None:
        self._read_direct(msg, out, "meter")

    def _read_packet_replication_engine_entry(self, msg: p4runtime_pb2.PacketReplicationEngineEntry,
                                              out: ReadOut) -> None:
        """Multicast groups and clone sessions; an empty entity (or id 0) reads all of them."""
        pre = self.program.pre
        kind = msg.WhichOneof("type")

        def selected(objects: dict[int, Any], wanted: int) -> list[tuple[int, Any]]:
            return [(i, obj) for i, obj in sorted(objects.items()) if not wanted or i == wanted]

        if kind in (None, "multicast_group_entry"):
            for gid, replicas in selected(pre.mc_groups, msg.multicast_group_entry.multicast_group_id):
                group = out.add().packet_replication_engine_entry.multicast_group_entry
                group.multicast_group_id, group.metadata = gid, pre.mc_metadata[gid]
                self._replicas_into(replicas, group.replicas)
        if kind in (None, "clone_session_entry"):
            for sid, session in selected(pre.clone_sessions, msg.clone_session_entry.session_id):
                cs = out.add().packet_replication_engine_entry.clone_session_entry
                cs.session_id, cs.class_of_service, cs.packet_length_bytes = sid, session.cos, session.truncate
                self._replicas_into(session.replicas, cs.replicas)

    @staticmethod
    def _replicas_into(replicas: list[E.Replica], out: Any) -> None:
        for r in replicas:
            out.add(egress_port=r.port, instance=r.instance)

    def _read_value_set_entry(self, msg: p4runtime_pb2.ValueSetEntry, out: ReadOut) -> None:
        ids = [msg.value_set_id] if msg.value_set_id else list(self.schema.value_sets)
        for vid in ids:
            info, value_set = self._value_set(vid)
            field = info.match[0]
            full = (1 << field.bitwidth) - 1
            entry = out.add().value_set_entry
            entry.value_set_id = vid
            for value, mask in value_set.members:
                m = entry.members.add().match.add(field_id=field.id)
                if mask == full:
                    m.exact.value = canonical(value)
                else:
                    m.ternary.value, m.ternary.mask = canonical(value), canonical(mask)

    def _read_digest_entry(self, msg: p4runtime_pb2.DigestEntry, out: ReadOut) -> None:
        for digest_id, config in sorted(self.digests.configs.items()):
            if msg.digest_id and digest_id != msg.digest_id:
                continue
            entry = out.add().digest_entry
            entry.digest_id = digest_id
            entry.config.CopyFrom(config)


class ReadOut:
    """What a Read found, in order: encoded Entity messages and protobuf Entities."""

    def __init__(self) -> None:
        self.items: list[bytes | p4runtime_pb2.Entity] = []
        self._messages = 0  # how many items are protobuf Entities (none, for a poller's cells)

    def add(self) -> p4runtime_pb2.Entity:
        self.items.append(Entity())
        self._messages += 1
        return self.items[-1]

    def raw(self, entity: bytes) -> None:
        self.items.append(entity)

    def extend_raw(self, entities: list[bytes]) -> None:
        self.items.extend(entities)

    def responses(self, chunk: int) -> Iterator[bytes]:
        """Serialized ReadResponses of at most ``chunk`` entities (one empty one if none)."""
        if not self.items:
            yield b""
        for start in range(0, len(self.items), chunk):
            items = self.items[start:start + chunk]
            yield W.read_response(items if not self._messages else
                                  [e if isinstance(e, bytes) else e.SerializeToString() for e in items])

    def entities(self) -> list[p4runtime_pb2.Entity]:
        """Everything as protobuf Entities (for the few readers that reshape them)."""
        return [Entity.FromString(e) if isinstance(e, bytes) else e for e in self.items]


SNAPSHOT = 256  # counter/register cells copied per hold of the device lock, entries encoded between pauses


def yield_to_forwarding() -> None:
    """Let a thread waiting for the device lock (or the GIL) run now, not at the end of the
    interpreter's 5 ms switch interval: the control plane works in chunks so that packets
    pass between them, and this makes them pass."""
    time.sleep(0)


def _entity(entity: Any) -> p4runtime_pb2.Entity:
    """An Entity of a ReadRequest, parsed if it came as bytes."""
    if not isinstance(entity, bytes):
        return entity
    try:
        return p4runtime_pb2.Entity.FromString(entity)
    except DecodeError as e:
        raise P4RuntimeError(Code.INVALID_ARGUMENT, f"malformed entity: {e}") from None


_LOCKS_ITSELF = {"table_entry", "counter_entry", "register_entry", "direct_counter_entry", "direct_meter_entry"}
_TABLE_ENTRY = W.ENTITY_TAGS["table_entry"]
