"""The two sides of a differential run; on both, ``send(port, frame)`` returns the frames the
target transmitted for one frame in.

Ours runs in process (the executor, as ``p4switch-stf`` runs it): the lines go through the STF
runner, which records each write as values (``StfRunner.writes``). BMv2 gets the same writes,
translated to its Thrift runtime calls with the names of p4c's BMv2 JSON, and the same frames
through :class:`lab.bmv2_packets.Bmv2PacketSwitch`. So an entry means one thing on both sides,
and the report's STF lines are exactly what both ran.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from lab.bmv2_packets import Bmv2PacketSwitch
from p4rt.bmv2_runtime import Bmv2Runtime, field_bytes, match_param
from p4rt.entries import ActionCall, TableEntry, priority_from_cli
from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.stf.runner import StfError, StfRunner

Output = list[tuple[int, bytes]]


class OurTarget:
    def __init__(self, checked) -> None:
        self.prog = LoadedProgram.from_checked(checked)
        self.runner = StfRunner(self.prog, io.StringIO())
        self.pipe: V1Pipeline = self.runner.pipe
        self.now_us = 0

    def apply(self, lines: list[str]) -> list[str]:
        """Runs the lines; returns those that were refused (each with the reason)."""
        refused = []
        for line in lines:
            try:
                self.runner.command(line)
            except StfError as e:
                refused.append(f"{line}  # {e}")
        return refused

    @property
    def writes(self) -> list[tuple]:
        return self.runner.writes

    def send(self, port: int, frame: bytes) -> Output:
        self.now_us += 1
        return self.pipe.process(port, frame, self.now_us)


class Bmv2Writes:
    """Our target's recorded writes as BMv2 Thrift calls, with the names of p4c's JSON; ``prog``
    (ours, same program) gives key widths and action parameter order, which p4c's JSON has
    in the same order."""

    def __init__(self, config: dict, prog: LoadedProgram) -> None:
        self.prog = prog
        self.json_tables = {t["name"]: t for p in config.get("pipelines", []) for t in p.get("tables", [])}
        self.json_actions = {a["name"] for a in config.get("actions", [])}
        self.mc_groups: dict[int, int] = {}
        self.mc_nodes: list[int] = []

    def _table(self, name: str) -> str | None:
        """BMv2's name of table ``name``, or None when p4c's mid end removed it (a table whose
        apply it folded away is in no pipeline: writes to it change nothing BMv2 does, and if
        ours applies it to effect, the outputs differ and that is reported)."""
        if name in self.json_tables:
            return name
        hits = [t for t in self.json_tables if t.endswith("." + name)]
        if len(hits) > 1:
            raise StfError(0, f"table {name} is ambiguous in BMv2's JSON: {', '.join(sorted(hits))}")
        return hits[0] if hits else None

    def _action(self, table: str, name: str) -> str:
        names = list(self.json_tables[table].get("actions", [])) or sorted(self.json_actions)
        if name in names:
            return name
        hits = [a for a in names if a.endswith("." + name) or name.endswith("." + a)]
        if len(hits) != 1:
            raise StfError(0, f"BMv2's JSON has no action {name} in table {table}")
        return hits[0]

    def _data(self, call: ActionCall) -> list[bytes]:
        return [field_bytes(call.params[p], w) for p, w in self.prog.actions[call.name].params]

    def replay(self, writes: list[tuple], rt: Bmv2Runtime) -> None:
        for w in writes:
            kind = w[0]
            if kind == "add":
                table = self.prog.tables[w[1]]
                entry: TableEntry = w[2]
                name = self._table(w[1])
                if name is None:
                    continue
                key = [match_param(entry.match.get(k.name), k.width) for k in table.key]
                # ours: larger wins; BMv2's runtime: smaller wins
                prio = priority_from_cli(entry.priority) if table.needs_priority else None
                rt.table_add(name, key, self._action(name, entry.action.name), self._data(entry.action), prio)
            elif kind == "setdefault":
                name = self._table(w[1])
                if name is not None:
                    rt.table_set_default(name, self._action(name, w[2].name), self._data(w[2]))
            elif kind == "mirroring_add":
                rt.mirroring_add(w[1], w[2])
            elif kind == "mc_mgrp_create":
                self.mc_groups[w[1]] = rt.mc_mgrp_create(w[1])
            elif kind == "mc_node_create":
                self.mc_nodes.append(rt.mc_node_create(w[1], w[2]))
            elif kind == "mc_node_associate":
                rt.mc_node_associate(self.mc_groups[w[1]], self.mc_nodes[w[2]])
            elif kind == "register_write":
                rt.register_write(w[1], w[2], w[3])


class Bmv2Target:
    """``simple_switch`` running p4c's JSON for the program, given ``writes`` (ours)."""

    def __init__(self, json_path: Path, prog: LoadedProgram, workdir: Path, settle: float,
                 writes: list[tuple]) -> None:
        self.switch = Bmv2PacketSwitch(json_path, workdir, settle)
        try:
            Bmv2Writes(json.loads(Path(json_path).read_text()), prog).replay(writes, self.switch.runtime)
        except BaseException:
            self.switch.close()
            raise

    def close(self) -> None:
        self.switch.close()

    def send(self, port: int, frame: bytes, settle: float | None = None) -> Output:
        return self.switch.send(port, frame, settle)
