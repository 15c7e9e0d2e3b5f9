"""Match-action tables and action profiles/selectors, with BMv2's matching rules.

A table keeps its entries (``TableEntry`` from p4rt.entries, keyed by match + priority)
and an index built for the match kinds it has, updated on every write:
- only exact fields: one dict from the key tuple;
- one lpm field (plus exact ones): one dict per prefix length, tried longest first;
- any ternary/range/optional field: entries grouped by their mask tuple, one dict lookup of
  the masked key per group, groups tried by their best priority (tuple space search);
  entries with a range scanned in priority order. Larger priority wins; among equal
  priorities the entry inserted first.
The data plane calls ``apply(key, nbytes, now_us)`` and gets the chosen action as
``(action index in table.action_names, args tuple)`` plus the hit flag.

Idle timeout (``support_timeout = true``): only such tables record, on every hit, the time of
the hit in the entry (``now_us``, the switch's fabric time); the other tables' lookup code is
not touched. ``idle_expired(now_us)`` is the control plane's scan: entries whose
``idle_timeout_ns`` has passed since their last hit (or insertion, or last report) are
returned once and their timer restarts, as the P4Runtime spec asks of idle notifications.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from operator import and_, itemgetter
from typing import Any

from librt.vecs import vec
from mypy_extensions import i64

from p4rt.entries import (
    ActionCall,
    AlreadyExistsError,
    CounterData,
    Exact,
    FieldMatch,
    GroupRef,
    InvalidEntryError,
    Lpm,
    MatchKind,
    MemberRef,
    MeterConfig,
    NotFoundError,
    Optional,
    Range,
    ResourceExhaustedError,
    TableEntry,
    Ternary,
)
from p4switch.exec.externs import DirectCounter, DirectMeter, int_array
from p4switch.exec.hashes import FieldHash
from p4switch.exec.memo import remember

TABLE_AND_DEFAULT, TABLE_ONLY, DEFAULT_ONLY = "table_and_default", "table_only", "default_only"


@dataclass(frozen=True)
class KeyField:
    name: str
    match_kind: MatchKind
    width: int


@dataclass(frozen=True)
class ActionInfo:
    """An action of the program: P4Info name and its control-plane parameters."""

    name: str
    params: tuple[tuple[str, int], ...]


# what a key field left out of an entry matches, by match kind (a range: its whole span, made per field)
_WILDCARD = {MatchKind.LPM: (0, 0), MatchKind.TERNARY: (0, 0), MatchKind.OPTIONAL: None}


def _full(width: int) -> int:
    return (1 << width) - 1


def _prefix_mask(plen: int, width: int) -> int:
    return _full(width) ^ _full(width - plen)


def args_of(call: ActionCall, info: ActionInfo) -> tuple[int, ...]:
    """Validate an ActionCall against its action and order its arguments."""
    names = {n for n, _ in info.params}
    extra = set(call.params) - names
    if extra:
        raise InvalidEntryError(f"action {info.name}: unknown parameter(s) {', '.join(sorted(extra))}")
    args = []
    for pname, width in info.params:
        if pname not in call.params:
            raise InvalidEntryError(f"action {info.name}: missing parameter {pname}")
        v = call.params[pname]
        if not isinstance(v, int) or not 0 <= v <= _full(width):
            raise InvalidEntryError(f"action {info.name}: parameter {pname}={v} does not fit in bit<{width}>")
        args.append(v)
    return tuple(args)


@dataclass
class ActionGroup:
    group_id: int
    members: list[tuple[int, int]]  # (member_id, weight)
    max_size: int = 0


class ActionProfile:
    """``action_profile(size)`` or ``action_selector(algo, size, width)``: members are actions
    with arguments; groups (selector only) are weighted member lists. A group picks its member
    by the hash of the table's selector fields modulo the group size (BMv2), members ordered by
    id and repeated by weight."""

    def __init__(
        self,
        name: str,
        size: int,
        actions: dict[str, ActionInfo],
        selector_hash: Callable[[bytes], int] | None = None,
        max_group_size: int = 0,
    ) -> None:
        self.name = name
        self.size = size
        self.actions = actions
        self.has_selector = selector_hash is not None
        self.selector_hash = selector_hash
        self.max_group_size = max_group_size
        self.members: dict[int, ActionCall] = {}
        self.groups: dict[int, ActionGroup] = {}
        self._member_args: dict[int, tuple[str, tuple[int, ...]]] = {}
        self._group_slots: dict[int, list[int]] = {}
        self._refs: dict[tuple[str, int], int] = {}
        # the selections its tables remember (``Table._selected``), emptied by any change here
        self.memos: list[dict] = []

    def _changed(self) -> None:
        for memo in self.memos:
            memo.clear()

    def _resolve(self, call: ActionCall) -> tuple[str, tuple[int, ...]]:
        info = self.actions.get(call.name)
        if info is None:
            raise InvalidEntryError(f"action profile {self.name}: action {call.name} not allowed")
        return call.name, args_of(call, info)

    def add_member(self, member_id: int, action: ActionCall) -> None:
        if member_id in self.members:
            raise AlreadyExistsError(f"action profile {self.name}: member {member_id} exists")
        if len(self.members) >= self.size:
            raise ResourceExhaustedError(f"action profile {self.name} is full ({self.size} members)")
        self._member_args[member_id] = self._resolve(action)
        self.members[member_id] = action
        self._changed()

    def modify_member(self, member_id: int, action: ActionCall) -> None:
        if member_id not in self.members:
            raise NotFoundError(f"action profile {self.name}: no member {member_id}")
        self._member_args[member_id] = self._resolve(action)
        self.members[member_id] = action
        self._changed()

    def delete_member(self, member_id: int) -> None:
        if member_id not in self.members:
            raise NotFoundError(f"action profile {self.name}: no member {member_id}")
        if self._refs.get(("m", member_id)):
            raise InvalidEntryError(f"action profile {self.name}: member {member_id} is used by a table entry")
        for g in self.groups.values():
            if any(m == member_id for m, _ in g.members):
                raise InvalidEntryError(f"action profile {self.name}: member {member_id} is in group {g.group_id}")
        del self.members[member_id]
        del self._member_args[member_id]
        self._changed()

    def _check_group(self, group_id: int, members: list[tuple[int, int]], max_size: int) -> list[int]:
        if not self.has_selector:
            raise InvalidEntryError(f"action profile {self.name} has no selector: groups are not allowed")
        seen = set()
        for m, w in members:
            if m not in self.members:
                raise NotFoundError(f"action profile {self.name}: group {group_id} refers to missing member {m}")
            if m in seen:
                raise InvalidEntryError(f"action profile {self.name}: member {m} twice in group {group_id}")
            if w < 1:
                raise InvalidEntryError(f"action profile {self.name}: weight {w} of member {m} must be >= 1")
            seen.add(m)
        total = sum(w for _, w in members)
        limit = max_size or self.max_group_size
        if limit and total > limit:
            raise ResourceExhaustedError(f"action profile {self.name}: group {group_id} exceeds max size {limit}")
        return [m for m, w in sorted(members) for _ in range(w)]

    def add_group(self, group_id: int, members: list[tuple[int, int]], max_size: int = 0) -> None:
        if group_id in self.groups:
            raise AlreadyExistsError(f"action profile {self.name}: group {group_id} exists")
        if len(self.groups) >= self.size:
            raise ResourceExhaustedError(f"action profile {self.name} is full ({self.size} groups)")
        self._group_slots[group_id] = self._check_group(group_id, members, max_size)
        self.groups[group_id] = ActionGroup(group_id, list(members), max_size)
        self._changed()

    def modify_group(self, group_id: int, members: list[tuple[int, int]], max_size: int = 0) -> None:
        if group_id not in self.groups:
            raise NotFoundError(f"action profile {self.name}: no group {group_id}")
        self._group_slots[group_id] = self._check_group(group_id, members, max_size)
        self.groups[group_id] = ActionGroup(group_id, list(members), max_size)
        self._changed()

    def delete_group(self, group_id: int) -> None:
        if group_id not in self.groups:
            raise NotFoundError(f"action profile {self.name}: no group {group_id}")
        if self._refs.get(("g", group_id)):
            raise InvalidEntryError(f"action profile {self.name}: group {group_id} is used by a table entry")
        del self.groups[group_id]
        del self._group_slots[group_id]
        self._changed()

    # used by tables
    def ref(self, action: MemberRef | GroupRef, delta: int) -> None:
        k = ("m", action.member_id) if isinstance(action, MemberRef) else ("g", action.group_id)
        if delta > 0:
            if k[0] == "m" and action.member_id not in self.members:
                raise NotFoundError(f"action profile {self.name}: no member {action.member_id}")
            if k[0] == "g" and action.group_id not in self.groups:
                raise NotFoundError(f"action profile {self.name}: no group {action.group_id}")
        self._refs[k] = self._refs.get(k, 0) + delta

    def member_action(self, member_id: int) -> tuple[str, tuple[int, ...]] | None:
        return self._member_args.get(member_id)

    def group_action(self, group_id: int, h: int) -> tuple[str, tuple[int, ...]] | None:
        """The member of group ``group_id`` that selector hash ``h`` picks (None: no group or
        an empty one)."""
        slots = self._group_slots.get(group_id)
        if not slots:
            return None
        return self._member_args[slots[h % len(slots)]]


class _Rec:
    """An installed entry as the data plane sees it.

    ``hit`` is what a hit reads: the action's index, its arguments and ``counts``, the direct
    counter's packets and bytes (``externs.int_array``; None without one), to whose items
    it adds. The look-ups generated code makes answer with it rather than with the record
    (``Table.find``), so a hit is one dict probe and a typed tuple (reading ``action``,
    ``args`` and ``entry.counter`` by name from the separately compiled program was ~1,500
    instructions a counted hit, reading ``hit`` ~190). The counts live only there: the
    stored entry has no counter, and ``Table._copy`` puts them into the copy a reader gets."""

    __slots__ = ("entry", "eid", "counts", "hit", "masks", "values", "ranges", "prio", "seq", "last_hit",
                 "reported")

    def __init__(self, entry: TableEntry, eid: int, action: int, args: tuple[int, ...],
                 counts: vec[i64] | None) -> None:
        self.entry = entry
        self.eid = eid
        self.counts = counts
        self.set_action(action, args)

    def set_action(self, action: int, args: tuple[int, ...]) -> None:
        self.hit = (action, args, self.counts)


_seq = itertools.count()
UNSEEN = object()  # a key not looked up since the entries last changed (``Table.memo``)
# A key of several fields whose widths add up to at most this is remembered under one int, the
# fields packed side by side (``Table.memo_shifts``): in compiled code that stays a machine
# word (mypyc's short ints) until the probe, where a tuple boxes each field, allocates, and
# hashes and compares field by field (~500 instructions more a look-up).
PACKED_BITS = 62


def _rank(r: _Rec) -> tuple[int, int]:
    """Order of entries with the same key: larger priority first, then the earlier one."""
    return (-r.prio, r.seq)


class _MaskGroup:
    """Entries of a ternary table that share one mask tuple: masked key -> entries."""

    __slots__ = ("masks", "d", "top")

    def __init__(self, masks: tuple[int, ...]) -> None:
        self.masks = masks
        self.d: dict[tuple[int, ...], list[_Rec]] = {}
        self.top = 0


class Table:
    """One P4 table: the control plane writes ``TableEntry`` values (validated against the
    key and the actions), the generated code calls ``apply`` (or, for plain exact tables,
    reads ``exact_index`` itself)."""

    def __init__(
        self,
        name: str,
        key: list[KeyField],
        actions: list[ActionInfo],
        size: int,
        default_action: ActionCall,
        default_is_const: bool = False,
        is_const: bool = False,
        scopes: dict[str, str] | None = None,
        implementation: ActionProfile | None = None,
        direct_counter: DirectCounter | None = None,
        direct_meter: DirectMeter | None = None,
        support_timeout: bool = False,
    ) -> None:
        self.name = name
        self.support_timeout = support_timeout
        self.key = list(key)
        self.action_names = [a.name for a in actions]
        self._actions = {a.name: a for a in actions}
        self._action_index = {a.name: i for i, a in enumerate(actions)}
        self.scopes = scopes or {}
        self.size = size
        self.is_const = is_const
        self.default_is_const = default_is_const
        self.profile = implementation
        self.implementation = implementation.name if implementation else None
        self.dcounter = direct_counter
        self.dmeter = direct_meter
        self.direct_counter = direct_counter.name if direct_counter else None
        self.direct_meter = direct_meter.name if direct_meter else None
        self._match_fields = [(i, k) for i, k in enumerate(self.key) if k.match_kind != MatchKind.SELECTOR]
        self._match_names = frozenset(k.name for _, k in self._match_fields)
        self._selector_fields = [(i, k.width) for i, k in enumerate(self.key) if k.match_kind == MatchKind.SELECTOR]
        kinds = {k.match_kind for _, k in self._match_fields}
        self.needs_priority = bool(kinds & {MatchKind.TERNARY, MatchKind.RANGE, MatchKind.OPTIONAL})
        lpm = [i for i, (_, k) in enumerate(self._match_fields) if k.match_kind == MatchKind.LPM]
        if self.needs_priority:
            self._mode = "list"
        elif lpm:
            if len(lpm) > 1:
                raise ValueError(f"table {name}: more than one lpm key field")
            self._mode = "lpm"
        else:
            self._mode = "exact"
        self._lpm_pos = lpm[0] if lpm and not self.needs_priority else -1
        self._single = len(self._match_fields) == 1 and not self._selector_fields
        # every entry by its key (match and priority); the generated code skips a look-up while
        # it is empty (a table no entry was written to, fabric.p4's ACL in most runs)
        self.entries_by_key: dict[tuple, _Rec] = {}
        self._eids = itertools.count(1)
        # an exact table's entries by key: each one's ``hit`` where generated code looks them up
        # itself (``_inline``), else its record
        self._exact: dict = {}
        self._levels: list[tuple[int, tuple[int, ...] | int, dict]] = []
        self._by_plen: dict[int, dict] = {}
        # ternary/range/optional tables: entries without ranges grouped by mask tuple (one
        # dict lookup per distinct mask), entries with ranges in one priority-sorted list
        self._groups: dict[tuple[int, ...], _MaskGroup] = {}
        self._group_order: list[_MaskGroup] = []
        self._ranged: list[_Rec] = []
        self._ranged_keys: list[tuple[int, int]] = []
        # LPM and ternary/range/optional look-ups remembered per key (``memo``), emptied
        # whenever the entries change; an exact look-up is one probe already
        self._found: dict = {}
        # an action profile table's selections (action index, arguments, hit) per key, emptied
        # with ``_found`` and by any change of the profile (``ActionProfile.memos``)
        self._selected: dict = {}
        # idle timeout: entries with a TTL by entry id, and a lower bound of the fabric time
        # (us) at which the next one can expire (hits only move deadlines later)
        self._timed: dict[int, _Rec] = {}
        self._idle_next = 0
        self._initial_default = default_action
        self.default_action = default_action
        # the default's (action index, arguments) in a cell the generated code holds (bound as
        # ``<table>_default``): it reads the item natively, where ``default_pair`` is an
        # attribute of this Python object (a look-up by name for every miss)
        self.default_cell: list[tuple[int, Any]] = [self._resolve_call(default_action)]
        # ``_selected`` when ``apply`` answers from it (generated code probes it first), else None
        self.selected_memo: dict | None = None
        self.apply = self._build_apply()

    @property
    def default_pair(self) -> tuple[int, Any]:
        """The default action's (index in the table's actions, resolved arguments)."""
        return self.default_cell[0]

    @default_pair.setter
    def default_pair(self, pair: tuple[int, Any]) -> None:
        self.default_cell[0] = pair

    # ---- validation -------------------------------------------------------------------
    def _resolve_call(self, call: ActionCall) -> tuple[int, tuple[int, ...]]:
        idx = self._action_index.get(call.name)
        if idx is None:
            raise InvalidEntryError(f"table {self.name}: action {call.name} is not one of its actions")
        return idx, args_of(call, self._actions[call.name])

    def _fits(self, k: KeyField, v: int, what: str = "value") -> int:
        if not isinstance(v, int) or not 0 <= v <= _full(k.width):
            raise InvalidEntryError(f"table {self.name}: {k.name} {what} {v} does not fit in {k.width} bits")
        return v

    def _canon(self, match: dict[str, FieldMatch]) -> tuple:
        if not self._match_names.issuperset(match):
            unknown = set(match) - self._match_names
            raise InvalidEntryError(f"table {self.name}: unknown key field(s) {', '.join(sorted(unknown))}")
        out = []
        fits = self._fits
        for _, k in self._match_fields:
            m = match.get(k.name)
            kind = k.match_kind
            if m is None:
                if kind == MatchKind.EXACT:
                    raise InvalidEntryError(f"table {self.name}: exact key field {k.name} is required")
                out.append((0, _full(k.width)) if kind == MatchKind.RANGE else _WILDCARD[kind])
            elif isinstance(m, Lpm) and kind == MatchKind.LPM:
                if not 0 <= m.prefix_len <= k.width:
                    raise InvalidEntryError(f"table {self.name}: {k.name} prefix length {m.prefix_len} out of range")
                v = fits(k, m.value)
                if v & ~_prefix_mask(m.prefix_len, k.width):
                    raise InvalidEntryError(f"table {self.name}: {k.name} value has bits set beyond the prefix length")
                out.append((v, m.prefix_len))
            elif isinstance(m, Exact):
                v = fits(k, m.value)
                if kind == MatchKind.EXACT or kind == MatchKind.OPTIONAL:
                    out.append(v)
                elif kind == MatchKind.LPM:
                    out.append((v, k.width))
                elif kind == MatchKind.TERNARY:
                    out.append((v, _full(k.width)))
                else:  # RANGE
                    out.append((v, v))
            elif isinstance(m, Ternary) and kind == MatchKind.TERNARY:
                v, mk = fits(k, m.value), fits(k, m.mask, "mask")
                if v & ~mk:
                    raise InvalidEntryError(f"table {self.name}: {k.name} value has bits set outside the mask")
                out.append((v, mk))
            elif isinstance(m, Range) and kind == MatchKind.RANGE:
                lo, hi = fits(k, m.low, "low"), fits(k, m.high, "high")
                if lo > hi:
                    raise InvalidEntryError(f"table {self.name}: {k.name} range low {lo} > high {hi}")
                out.append((lo, hi))
            elif isinstance(m, Optional) and kind == MatchKind.OPTIONAL:
                out.append(None if m.value is None else fits(k, m.value))
            else:
                raise InvalidEntryError(f"table {self.name}: {type(m).__name__} match given for {kind.value} field {k.name}")
        return tuple(out)

    def _key_of(self, match: dict[str, FieldMatch], priority: int) -> tuple:
        if self.needs_priority:
            if priority <= 0:
                raise InvalidEntryError(f"table {self.name}: entries need a priority > 0")
        elif priority != 0:
            raise InvalidEntryError(f"table {self.name}: priority must be 0 for exact/lpm tables")
        return (self._canon(match), priority)

    def _action_of(self, action) -> tuple[int, tuple[int, ...]]:
        if isinstance(action, ActionCall):
            if self.profile is not None:
                raise InvalidEntryError(f"table {self.name} uses {self.profile.name}: entries need a member or group")
            idx, args = self._resolve_call(action)
            if self.scopes.get(action.name) == DEFAULT_ONLY:
                raise InvalidEntryError(f"table {self.name}: action {action.name} is default-only")
            return idx, args
        if self.profile is None:
            raise InvalidEntryError(f"table {self.name} has no action profile: entries need an action")
        if isinstance(action, GroupRef) and not self.profile.has_selector:
            raise InvalidEntryError(f"table {self.name}: {self.profile.name} has no selector, groups not allowed")
        return -1, ()

    # ---- control plane ----------------------------------------------------------------
    def insert(self, entry: TableEntry, now_us: int = 0) -> None:
        """Add an entry (AlreadyExists for the same match and priority, ResourceExhausted
        when the table is full). ``now_us``: fabric time of the insertion, where an idle
        timeout starts counting."""
        self._check_mutable()
        self.insert_const(entry, now_us)

    def insert_const(self, entry: TableEntry, now_us: int = 0) -> None:
        """Insert without the const-table check (the program's own ``const entries``)."""
        key = self._key_of(entry.match, entry.priority)
        if key in self.entries_by_key:
            raise AlreadyExistsError(f"table {self.name}: entry exists")
        if len(self.entries_by_key) >= self.size:
            raise ResourceExhaustedError(f"table {self.name} is full ({self.size} entries)")
        idx, args = self._action_of(entry.action)
        self._check_extras(entry)
        if self.profile is not None:
            self.profile.ref(entry.action, +1)
        stored = entry.copy()
        counts = None
        if self.dcounter is not None:
            start = entry.counter or CounterData()
            counts = int_array([start.packets, start.bytes])
            stored.counter = None  # counted in ``counts`` (see _Rec)
        rec = _Rec(stored, next(self._eids), idx, args, counts)
        rec.last_hit = rec.reported = now_us
        self.entries_by_key[key] = rec
        self._index_add(key, rec)
        self._track_idle(rec)

    def modify(self, entry: TableEntry) -> None:
        """Replace the action, meter, metadata and timeout of an existing entry; its direct
        counter keeps counting unless the entry carries new counter data."""
        self._check_mutable()
        key = self._key_of(entry.match, entry.priority)
        rec = self._rec_at(key)
        idx, args = self._action_of(entry.action)
        self._check_extras(entry)
        if self.profile is not None:
            self.profile.ref(entry.action, +1)
            self.profile.ref(rec.entry.action, -1)
        rec.entry.action = entry.action
        rec.set_action(idx, args)
        self._forget()  # the look-ups that answer with the hit see the new one
        if self._mode == "exact" and self._inline:
            self._exact[self._exact_key(key[0])] = rec.hit
        if self.dmeter is not None:
            rec.entry.meter = entry.meter
            self.dmeter.forget(rec.eid)
        if rec.counts is not None and entry.counter is not None:
            rec.counts[0], rec.counts[1] = entry.counter.packets, entry.counter.bytes
        rec.entry.idle_timeout_ns = entry.idle_timeout_ns
        rec.entry.metadata = entry.metadata
        self._track_idle(rec)

    def delete(self, entry: TableEntry) -> None:
        """Remove the entry with this match and priority (the action is not looked at)."""
        self._check_mutable()
        key = self._key_of(entry.match, entry.priority)
        rec = self.entries_by_key.pop(key, None)
        if rec is None:
            raise NotFoundError(f"table {self.name}: no such entry")
        if self.profile is not None:
            self.profile.ref(rec.entry.action, -1)
        if self.dmeter is not None:
            self.dmeter.forget(rec.eid)
        self._index_remove(key, rec)
        self._timed.pop(rec.eid, None)

    def clear(self) -> None:
        """Remove every entry (the runtime CLI's ``table_clear``), releasing the members and
        groups they used and the meter state of each."""
        for key, rec in list(self.entries_by_key.items()):
            if self.profile is not None:
                self.profile.ref(rec.entry.action, -1)
            if self.dmeter is not None:
                self.dmeter.forget(rec.eid)
            del self.entries_by_key[key]
            self._index_remove(key, rec)
        self._timed.clear()

    def _rec(self, match: dict[str, FieldMatch], priority: int) -> _Rec:
        return self._rec_at(self._key_of(match, priority))

    def _rec_at(self, key: tuple) -> _Rec:
        rec = self.entries_by_key.get(key)
        if rec is None:
            raise NotFoundError(f"table {self.name}: no such entry")
        return rec

    def get(self, match: dict[str, FieldMatch], priority: int = 0) -> TableEntry:
        """A copy of one entry (its direct counter as read now)."""
        return self._copy(self._rec(match, priority))

    def entries(self) -> list[TableEntry]:
        """Copies of every entry, in insertion order."""
        return [self._copy(r) for r in self.entries_by_key.values()]

    def set_counter(self, match: dict[str, FieldMatch], priority: int, data: CounterData) -> None:
        """Write the direct counter of one entry (allowed on const tables too)."""
        rec = self._rec(match, priority)
        if rec.counts is None:
            raise InvalidEntryError(f"table {self.name} has no direct counter")
        rec.counts[0], rec.counts[1] = data.packets, data.bytes

    def set_meter(self, match: dict[str, FieldMatch], priority: int, config: MeterConfig | None) -> None:
        """Configure the direct meter of one entry (None: unmetered, everything GREEN);
        its buckets start full again."""
        rec = self._rec(match, priority)
        if self.dmeter is None:
            raise InvalidEntryError(f"table {self.name} has no direct meter")
        self.dmeter.check_config(config)
        rec.entry.meter = config
        self.dmeter.forget(rec.eid)

    # ---- idle timeout -------------------------------------------------------------------
    def _track_idle(self, rec: _Rec) -> None:
        if rec.entry.idle_timeout_ns:
            self._timed[rec.eid] = rec
            self._idle_next = 0  # a new or shorter TTL may be due before the known bound
        else:
            self._timed.pop(rec.eid, None)

    def last_hit(self, match: dict[str, FieldMatch], priority: int = 0) -> int:
        """Fabric time (us) of the entry's last hit, or of its insertion if never hit
        (tables with support_timeout only: the others do not record hits)."""
        if not self.support_timeout:
            raise InvalidEntryError(f"table {self.name} does not support idle timeout (support_timeout)")
        return self._rec(match, priority).last_hit

    def idle_expired(self, now_us: int) -> list[TableEntry]:
        """Entries not hit for at least their ``idle_timeout_ns`` (counted from the last hit,
        the insertion or the previous report, whichever is latest). Each is returned once per
        idle period: its timer restarts now, so it comes again after another TTL without a
        hit. Cheap when nothing can be due: the earliest possible deadline is remembered."""
        if not self._timed or now_us < self._idle_next:
            return []
        out = []
        nxt = None
        for rec in self._timed.values():
            ttl_us = -(-rec.entry.idle_timeout_ns // 1000)  # round up: never report early
            due = max(rec.last_hit, rec.reported) + ttl_us
            if now_us >= due:
                out.append(self._copy(rec))
                rec.reported = now_us
                due = now_us + ttl_us
            nxt = due if nxt is None or due < nxt else nxt
        self._idle_next = nxt
        return out

    @staticmethod
    def _copy(rec: _Rec) -> TableEntry:
        """Callers get copies of an entry, its direct counter as counted now."""
        e = rec.entry.copy()
        if rec.counts is not None:
            e.counter = CounterData(rec.counts[0], rec.counts[1])
        return e

    def set_default(self, action: ActionCall) -> None:
        if self.default_is_const:
            raise InvalidEntryError(f"table {self.name}: the default action is const")
        resolved = self._resolve_call(action)
        if self.scopes.get(action.name) == TABLE_ONLY:
            raise InvalidEntryError(f"table {self.name}: action {action.name} cannot be the default action")
        self.default_pair = resolved
        self.default_action = action

    def reset_default(self) -> None:
        self.default_action = self._initial_default
        self.default_pair = self._resolve_call(self._initial_default)

    def _check_mutable(self) -> None:
        if self.is_const:
            raise InvalidEntryError(f"table {self.name} has const entries and cannot be changed")

    def _check_extras(self, entry: TableEntry) -> None:
        if entry.meter is not None:
            if self.dmeter is None:
                raise InvalidEntryError(f"table {self.name} has no direct meter")
            self.dmeter.check_config(entry.meter)
        if entry.counter is not None and self.dcounter is None:
            raise InvalidEntryError(f"table {self.name} has no direct counter")
        if entry.idle_timeout_ns and not self.support_timeout:
            raise InvalidEntryError(f"table {self.name} does not support idle timeout (support_timeout)")
        if entry.idle_timeout_ns < 0:
            raise InvalidEntryError(f"table {self.name}: idle timeout {entry.idle_timeout_ns} ns is negative")

    # ---- index ------------------------------------------------------------------------
    def _prepare(self, canon: tuple, rec: _Rec, priority: int) -> None:
        masks, values, ranges = [], [], []
        for (i, k), c in zip(self._match_fields, canon):
            full = _full(k.width)
            kind = k.match_kind
            if kind == MatchKind.EXACT:
                masks.append(full)
                values.append(c)
            elif kind == MatchKind.LPM:
                masks.append(_prefix_mask(c[1], k.width))
                values.append(c[0])
            elif kind == MatchKind.TERNARY:
                masks.append(c[1])
                values.append(c[0])
            elif kind == MatchKind.OPTIONAL:
                masks.append(0 if c is None else full)
                values.append(0 if c is None else c)
            else:
                masks.append(0)
                values.append(0)
                if c != (0, full):
                    ranges.append((i, c[0], c[1]))
        rec.masks = tuple(masks)
        rec.values = tuple(values)
        rec.ranges = tuple(ranges)
        rec.prio = priority
        rec.seq = next(_seq)

    def _exact_key(self, canon: tuple):
        return canon[0] if self._single else canon

    def _forget(self) -> None:
        """The remembered look-ups and selections go: the entries changed."""
        self._found.clear()
        self._selected.clear()

    def _index_add(self, key: tuple, rec: _Rec) -> None:
        self._forget()
        canon, priority = key
        if self._mode == "exact":
            self._exact[self._exact_key(canon)] = rec.hit if self._inline else rec
        elif self._mode == "lpm":
            plen = canon[self._lpm_pos][1]
            d = self._by_plen.get(plen)
            if d is None:
                d = self._by_plen[plen] = {}
                self._rebuild_levels()
            d[self._lpm_key(canon)] = rec
        else:
            self._prepare(canon, rec, priority)
            k = (-priority, rec.seq)
            if rec.ranges:
                pos = bisect.bisect(self._ranged_keys, k)
                self._ranged_keys.insert(pos, k)
                self._ranged.insert(pos, rec)
                return
            g = self._groups.get(rec.masks)
            if g is None:
                g = self._groups[rec.masks] = _MaskGroup(rec.masks)
            bucket = g.d.setdefault(rec.values, [])
            bucket.append(rec)
            bucket.sort(key=_rank)
            if rec.prio > g.top:  # priorities are >= 1, a new group starts at 0
                g.top = rec.prio
                self._reorder_groups()

    def _index_remove(self, key: tuple, rec: _Rec) -> None:
        self._forget()
        canon, _ = key
        if self._mode == "exact":
            del self._exact[self._exact_key(canon)]
        elif self._mode == "lpm":
            plen = canon[self._lpm_pos][1]
            d = self._by_plen[plen]
            del d[self._lpm_key(canon)]
            if not d:
                del self._by_plen[plen]
                self._rebuild_levels()
        else:
            if rec.ranges:
                pos = self._ranged.index(rec)
                del self._ranged[pos]
                del self._ranged_keys[pos]
                return
            g = self._groups[rec.masks]
            bucket = g.d[rec.values]
            bucket.remove(rec)
            if not bucket:
                del g.d[rec.values]
            if not g.d:
                del self._groups[rec.masks]
            elif rec.prio == g.top:  # it may have been the group's best entry
                g.top = max(b[0].prio for b in g.d.values())
            self._reorder_groups()

    def _reorder_groups(self) -> None:
        """Groups tried in order of their best priority (``top``, kept up to date by the
        index updates, one group at a time), so a lookup can stop early."""
        self._group_order[:] = sorted(self._groups.values(), key=lambda g: -g.top)

    def _lpm_key(self, canon: tuple):
        vals = tuple(c[0] if i == self._lpm_pos else c for i, c in enumerate(canon))
        return vals[0] if self._single else vals

    def _rebuild_levels(self) -> None:
        levels = []
        for plen in sorted(self._by_plen, reverse=True):
            masks = tuple(
                _prefix_mask(plen, k.width) if i == self._lpm_pos else _full(k.width)
                for i, (_, k) in enumerate(self._match_fields)
            )
            levels.append((plen, masks[0] if self._single else masks, self._by_plen[plen]))
        self._levels[:] = levels

    # ---- data plane -------------------------------------------------------------------
    def _remembered(self, search: Callable[[tuple], Any]) -> Callable[[tuple], Any]:
        """``search`` with its answers (the entry or its hit, or None for a miss) remembered per
        key until the entries change."""
        found = self._found

        def find(key):
            r = found.get(key, UNSEEN)
            if r is UNSEEN:
                r = remember(found, key, search(key))
            return r

        return find

    def find_packed(self, packed: int) -> Any:
        """``find`` of a key whose fields generated code packed into one int (``memo_shifts``:
        each field shifted left by its entry, or'ed; a lone field as it is), remembered under
        that int."""
        key = tuple([(packed >> shift) & mask for shift, mask in self._unpack])
        return remember(self._found, packed, self._search(key))

    def _build_apply(self):
        """Pick the lookup routine for this table's shape once, so that the per-packet path
        has no mode tests. Returns ``apply(key: tuple, nbytes, now_us) -> (index, args, hit)``.

        A table whose hit has no bookkeeping but its direct counter (``plain``, ``counted``) is
        looked up by generated code itself, through ``find``, ``memo`` and ``exact_index``:
        they answer with the entry's ``hit`` tuple. Any other table's are the records, which
        ``apply`` reads."""
        match_pos = [i for i, _ in self._match_fields]
        all_match = match_pos == list(range(len(self.key)))
        single = self._single
        mode = self._mode
        dcounter, dmeter, profile = self.dcounter, self.dmeter, self.profile
        timed = self.support_timeout
        # only plain tables get the inline lookup in generated code (no hit bookkeeping)
        self.plain = dcounter is None and dmeter is None and profile is None and not timed
        # a hit's only bookkeeping is its direct counter: generated code looks the entry up
        # inline too and counts the hit itself (``_Rec.hit``'s counts), as ``apply`` would
        self.counted = dcounter is not None and dmeter is None and profile is None and not timed
        inline = self._inline = self.plain or self.counted

        if mode == "exact":
            exact = self._exact
            if single:
                def find(key):
                    return exact.get(key[0])
            elif all_match:
                find = exact.get
            elif len(match_pos) == 1:  # one exact field beside selector fields
                pos = match_pos[0]

                def find(key):
                    return exact.get((key[pos],))
            else:
                pick = itemgetter(*match_pos)

                def find(key):
                    return exact.get(pick(key))
        elif mode == "lpm":
            levels = self._levels
            if single:
                def find(key):
                    v = key[0]
                    for _, m, d in levels:
                        r = d.get(v & m)
                        if r is not None:
                            return r
                    return None
            else:
                def find(key):
                    vals = [key[i] for i in match_pos]
                    for _, masks, d in levels:
                        r = d.get(tuple(map(and_, vals, masks)))
                        if r is not None:
                            return r
                    return None
        else:
            order, ranged = self._group_order, self._ranged

            def find(key):
                vals = [key[i] for i in match_pos] if not all_match else key
                best = None
                for g in order:
                    if best is not None and g.top < best.prio:
                        break
                    bucket = g.d.get(tuple(map(and_, vals, g.masks)))
                    if bucket:
                        r = bucket[0]
                        if best is None or r.prio > best.prio or (r.prio == best.prio and r.seq < best.seq):
                            best = r
                for r in ranged:
                    if best is not None and (r.prio < best.prio or (r.prio == best.prio and r.seq > best.seq)):
                        break
                    for v, m, x in zip(vals, r.masks, r.values):
                        if v & m != x:
                            break
                    else:
                        for i, lo, hi in r.ranges:
                            if not lo <= key[i] <= hi:
                                break
                        else:
                            return r
                return best

        if mode != "exact":
            if inline:
                search = find

                def find(key):
                    r = search(key)
                    return None if r is None else r.hit
            self._search = find
            find = self._remembered(find)
        # the selector fields' hash, from the whole key (its match fields have no width here)
        widths = dict(self._selector_fields)
        selector_hash = (FieldHash(profile.selector_hash, [widths.get(i) for i in range(len(self.key))])
                         if profile is not None and profile.selector_hash is not None else None)
        action_index = self._action_index
        me = self

        self.find = find
        # the remembered answers, which generated code probes itself (``UNSEEN``: ask ``find``,
        # or ``find_packed`` for a key packed as ``memo_shifts`` say)
        self.memo = self._found if mode != "exact" else None
        widths = [k.width for k in self.key]
        self.memo_shifts: tuple[int, ...] | None = None
        if self.memo is not None and (len(widths) == 1 or sum(widths) <= PACKED_BITS):
            self.memo_shifts = tuple(sum(widths[i + 1:]) for i in range(len(widths)))
        self._unpack = [(shift, _full(w)) for shift, w in zip(self.memo_shifts or (), widths)]
        # an exact table keyed by all its fields: generated code may use the dict directly
        self.exact_index = exact if mode == "exact" and all_match and (
            single or len(self._match_fields) != 1) else None
        if inline:
            def apply(key, nbytes, now_us):
                h = find(key)
                if h is None:
                    d = me.default_pair
                    return d[0], d[1], False
                c = h[2]
                if c is not None:
                    c[0] += 1
                    c[1] += nbytes
                return h[0], h[1], True
            return apply

        if profile is not None and dcounter is None and dmeter is None and not timed and (
                selector_hash is None or selector_hash.memo is not None):
            # a hit's member depends only on the key, the entries and the profile (not on a
            # random hash): remembered, a selector's hit is one probe, not four interpreted calls
            # (~7,300 instructions an ECMP packet)
            selected = self.selected_memo = self._selected
            profile.memos.append(selected)

            def apply(key, nbytes, now_us):
                s = selected.get(key)
                if s is not None:
                    return s
                r = find(key)
                if r is not None:
                    a = r.entry.action
                    if isinstance(a, MemberRef):
                        res = profile.member_action(a.member_id)
                    else:
                        res = profile.group_action(a.group_id, selector_hash(key) if selector_hash else 0)
                    if res is not None:
                        return remember(selected, key, (action_index[res[0]], res[1], True))
                d = me.default_pair
                return d[0], d[1], False
            return apply

        def apply(key, nbytes, now_us):
            r = find(key)
            if r is None:
                if dmeter is not None:  # a miss is not metered: the default action reads GREEN
                    dmeter.color = 0
                d = me.default_pair
                return d[0], d[1], False
            if timed:
                r.last_hit = now_us
            e = r.entry
            if dcounter is not None:
                c = r.counts
                c[0] += 1
                c[1] += nbytes
            if dmeter is not None:
                dmeter.mark(r.eid, e.meter, nbytes, now_us)
            if profile is None:
                h = r.hit
                return h[0], h[1], True
            a = e.action
            if isinstance(a, MemberRef):
                res = profile.member_action(a.member_id)
            else:
                res = profile.group_action(a.group_id, selector_hash(key) if selector_hash else 0)
            if res is None:
                d = me.default_pair
                return d[0], d[1], False
            return action_index[res[0]], res[1], True

        return apply
