"""One-shot action selector programming: a table entry that carries its own weighted set of
actions instead of naming a group.

The server turns the set into a group of members in the table's action selector, with ids
counted down from the top of the 32-bit range so they never meet the controller's own, hides
them from member and group reads, and gives the set back verbatim when the entry is read.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from p4.v1 import p4runtime_pb2

from p4rt import codec as X
from p4rt import entries as E
from p4rt.errors import invalid
from p4rt.schema import Schema, TableSchema

TOP_ID = 0xFFFFFFFF


@dataclass
class _Installed:
    group_id: int
    member_ids: list[int]
    action_set: p4runtime_pb2.ActionProfileActionSet


@dataclass
class OneShots:
    """The server-made groups, by table entry (table name, match, priority)."""

    installed: dict[Hashable, _Installed] = field(default_factory=dict)
    hidden: set[int] = field(default_factory=set)
    next_id: int = TOP_ID

    @staticmethod
    def key(ts: TableSchema, entry: E.TableEntry) -> Hashable:
        return ts.name, tuple(sorted(entry.match.items(), key=lambda kv: kv[0])), entry.priority

    def _allocate(self) -> int:
        while self.next_id in self.hidden:
            self.next_id -= 1
        self.hidden.add(self.next_id)
        return self.next_id

    def create(self, schema: Schema, ts: TableSchema, profile: Any,
               action_set: p4runtime_pb2.ActionProfileActionSet) -> _Installed:
        """Members and a group for ``action_set`` (validated against the table's actions)."""
        if not schema.profiles[ts.profile_id].with_selector:
            raise invalid(f"{ts.name}: one-shot action sets need an action selector")
        if not action_set.action_profile_actions:
            raise invalid(f"{ts.name}: empty one-shot action set")
        calls = []
        for item in action_set.action_profile_actions:
            ref = ts.actions.get(item.action.action_id)
            if ref is None or ref.scope == ref.DEFAULT_ONLY:
                raise invalid(f"{ts.name}: action id {item.action.action_id} cannot be used in its entries")
            if item.weight <= 0:
                raise invalid(f"{ts.name}: one-shot action weights must be positive")
            calls.append((X.action_call_from_proto(schema, item.action), item.weight))
        made = _Installed(self._allocate(), [], action_set)
        try:
            for call, _weight in calls:
                member_id = self._allocate()
                profile.add_member(member_id, call)
                made.member_ids.append(member_id)
            profile.add_group(made.group_id, [(m, w) for m, (_, w) in zip(made.member_ids, calls)], 0)
        except E.EntryError:
            self._destroy(profile, made)
            raise
        return made

    def _destroy(self, profile: Any, made: _Installed) -> None:
        if made.group_id in profile.groups:
            profile.delete_group(made.group_id)
        for member_id in made.member_ids:
            profile.delete_member(member_id)
        self.hidden.difference_update([made.group_id, *made.member_ids])

    def bind(self, key: Hashable, made: _Installed) -> None:
        """The entry ``key`` now uses the group ``made`` (released with it)."""
        self.installed[key] = made

    def release(self, key: Hashable, profile: Any) -> None:
        """The entry no longer uses its one-shot group (deleted or given another action)."""
        made = self.installed.pop(key, None)
        if made is not None:
            self._destroy(profile, made)

    def abandon(self, made: _Installed, profile: Any) -> None:
        """Undo ``create`` when the table refused the entry."""
        self._destroy(profile, made)

    def action_set_of(self, ts: TableSchema, entry: E.TableEntry) -> p4runtime_pb2.ActionProfileActionSet | None:
        made = self.installed.get(self.key(ts, entry))
        return made.action_set if made is not None else None
