"""The state one switch should hold, and the ordered P4Runtime updates that get it there.

The controller never edits a switch piecemeal: it computes the whole desired state from the
topology and settings (see ``fabric_rules``), then writes the difference from what it installed
before. That one mechanism serves first installation (diff from empty), profile switches and
``fabricctl set`` (diff between two settings), and recovery after a switch restart (the switch
is empty again: diff from empty). Ordering follows referential integrity: members before the
groups that use them before the entries that point at them; deletes in reverse.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4.v1 import p4runtime_pb2

from p4rt.entries import ActionCall, CloneSession, TableEntry
from p4rt.p4info import P4InfoIndex

Update = p4runtime_pb2.Update


def _match_key(entry: TableEntry) -> tuple:
    return tuple(sorted(entry.match.items(), key=lambda kv: kv[0]))


@dataclass
class Intent:
    """Desired control-plane state of one switch, keyed so two intents can be diffed."""

    entries: dict[tuple, tuple[str, TableEntry]] = field(default_factory=dict)
    defaults: dict[str, ActionCall] = field(default_factory=dict)
    members: dict[tuple[str, int], ActionCall] = field(default_factory=dict)
    groups: dict[tuple[str, int], tuple[tuple[int, int], ...]] = field(default_factory=dict)
    clone_sessions: dict[int, CloneSession] = field(default_factory=dict)

    def add_entry(self, table: str, entry: TableEntry) -> None:
        key = (table, _match_key(entry), entry.priority)
        if key in self.entries:
            raise ValueError(f"{table}: two entries with the same match {entry.match}")
        self.entries[key] = (table, entry)

    def set_default(self, table: str, action: ActionCall) -> None:
        self.defaults[table] = action

    def add_member(self, profile: str, member_id: int, action: ActionCall) -> None:
        self.members[(profile, member_id)] = action

    def add_group(self, profile: str, group_id: int, members: list[tuple[int, int]]) -> None:
        """``members``: (member id, weight); kept sorted, since a group has no member order."""
        self.groups[(profile, group_id)] = tuple(sorted(members))

    def add_clone_session(self, cs: CloneSession) -> None:
        self.clone_sessions[cs.session_id] = cs

    def size(self) -> int:
        return len(self.entries) + len(self.defaults) + len(self.members) + len(self.groups) + len(self.clone_sessions)


def _update(kind: int, **entity) -> Update:
    u = Update(type=kind)
    for name, msg in entity.items():
        getattr(u.entity, name).CopyFrom(msg)
    return u


def diff(p4: P4InfoIndex, old: Intent, new: Intent) -> list[Update]:
    """Updates that turn a switch holding ``old`` into one holding ``new``."""
    INSERT, MODIFY, DELETE = Update.INSERT, Update.MODIFY, Update.DELETE
    out: list[Update] = []

    def changed(old_map: dict, new_map: dict):
        for key, value in new_map.items():
            if key not in old_map:
                yield INSERT, key, value
            elif old_map[key] != value:
                yield MODIFY, key, value

    for kind, (prof, mid), call in changed(old.members, new.members):
        out.append(_update(kind, action_profile_member=p4.member_pb(prof, mid, call)))
    for kind, (prof, gid), members in changed(old.groups, new.groups):
        out.append(_update(kind, action_profile_group=p4.group_pb(prof, gid, list(members))))
    for kind, _, cs in changed(old.clone_sessions, new.clone_sessions):
        out.append(_update(kind, packet_replication_engine_entry=p4.clone_session_pb(cs)))
    for kind, _, (table, entry) in changed(old.entries, new.entries):
        out.append(_update(kind, table_entry=p4.table_entry_pb(table, entry)))
    for _, table, call in changed(old.defaults, new.defaults):
        out.append(_update(MODIFY, table_entry=p4.table_entry_pb(table, None, call)))
    # deletes: entries, then groups, then members (nothing may point at a deleted object)
    for key, (table, entry) in old.entries.items():
        if key not in new.entries:
            out.append(_update(DELETE, table_entry=p4.table_entry_pb(table, entry)))
    for table in old.defaults.keys() - new.defaults.keys():
        out.append(_update(MODIFY, table_entry=p4.table_entry_pb(table, None)))  # back to the program's default
    for (prof, gid), members in old.groups.items():
        if (prof, gid) not in new.groups:
            out.append(_update(DELETE, action_profile_group=p4.group_pb(prof, gid, list(members))))
    for (prof, mid), call in old.members.items():
        if (prof, mid) not in new.members:
            out.append(_update(DELETE, action_profile_member=p4.member_pb(prof, mid, call)))
    for sid, cs in old.clone_sessions.items():
        if sid not in new.clone_sessions:
            out.append(_update(DELETE, packet_replication_engine_entry=p4.clone_session_pb(cs)))
    return out
