"""A P4 program loaded into the executor: generated pipeline code plus the control-plane
objects (tables, action profiles, counters, meters, registers, replication engine)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from p4rt.entries import NotFoundError
from p4switch.exec.compile import Compiled, compile_checked
from p4switch.exec.externs import Counter, DirectCounter, DirectMeter, Meter, Register, ValueSet
from p4switch.exec.replication import PacketReplicationEngine
from p4switch.exec.tables import ActionInfo, ActionProfile, Table
from p4switch.frontend import compile_file, compile_source


class LoadedProgram:
    """One compiled program and its control-plane objects, all by P4Info name. A switch
    swaps the whole object when a new pipeline is pushed, so nothing outlives its program."""

    def __init__(self, compiled: Compiled, checked: Any = None) -> None:
        self.checked = checked
        self.compiled = compiled
        self.tables: dict[str, Table] = compiled.tables
        self.action_profiles: dict[str, ActionProfile] = compiled.action_profiles
        self.counters: dict[str, Counter | DirectCounter] = compiled.counters
        self.meters: dict[str, Meter | DirectMeter] = compiled.meters
        self.registers: dict[str, Register] = compiled.registers
        self.value_sets: dict[str, ValueSet] = compiled.value_sets
        self.actions: dict[str, ActionInfo] = compiled.actions
        self.pre = PacketReplicationEngine()
        self.entries: dict[str, Callable] = compiled.entries
        self.field_lists = compiled.field_lists
        self.error_codes = compiled.error_codes
        self.error_names = {v: k for k, v in compiled.error_codes.items()}

    @classmethod
    def from_checked(cls, checked: Any, backend: str | None = None) -> "LoadedProgram":
        """``backend``: ``python`` or ``mypyc`` (``native.py``); None takes ``P4SWITCH_BACKEND``."""
        return cls(compile_checked(checked, backend), checked)

    @classmethod
    def from_file(cls, path: str | Path, include_dirs: list[str] | None = None,
                  defines: dict[str, str] | None = None, target: str | None = "bmv2") -> "LoadedProgram":
        """``target`` as for ``compile_source``: ``None`` runs what the language allows beyond
        what BMv2 takes (loops, for one)."""
        return cls.from_checked(compile_file(str(path), include_dirs=list(include_dirs or []),
                                             defines=dict(defines or {}), target=target))

    @classmethod
    def from_source(cls, text: str, filename: str = "<prog>.p4") -> "LoadedProgram":
        return cls.from_checked(compile_source(text, filename=filename))

    @property
    def source(self) -> str:
        """The generated Python code (for debugging and profiling)."""
        return self.compiled.source

    def table(self, name: str) -> Table:
        """A table by P4Info name, or by a unique suffix (``ipv4_lpm`` for
        ``MyIngress.ipv4_lpm``), the way p4c's STF runner lets tests name tables."""
        return _by_name(self.tables, name, "table")

    def counter(self, name: str) -> Counter | DirectCounter:
        return _by_name(self.counters, name, "counter")

    def meter(self, name: str) -> Meter | DirectMeter:
        return _by_name(self.meters, name, "meter")

    def register(self, name: str) -> Register:
        return _by_name(self.registers, name, "register")

    def action(self, name: str) -> ActionInfo:
        return _by_name(self.actions, name, "action")


def _by_name(objs: dict[str, Any], name: str, what: str) -> Any:
    if name in objs:
        return objs[name]
    hits = [k for k in objs if k.endswith("." + name)]
    if len(hits) == 1:
        return objs[hits[0]]
    if not hits:
        raise NotFoundError(f"no {what} named {name}")
    raise NotFoundError(f"{what} name {name} is ambiguous: {', '.join(sorted(hits))}")
