"""Table entries and packets for a differential run, all from one seeded ``random.Random``.

Entries are STF ``add``/``setdefault`` lines (the form the divergence report and both replays
use), generated per table from the loaded program's tables: random actions among those an
entry may use, random parameters, keys of every match kind. A key whose expression is a
header field the parser extracts takes, more often than not, the value that field has in one
of the crafted frames, so entries get hit; 9-bit (port) keys and
parameters mostly come from the port set. Packets are frames crafted per parser path
(:mod:`difftest.paths`), frames mutated from those and from the seed corpus (the ``packet``
lines of an STF file), and random frames.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from difftest.paths import ParserPath
from p4rt.entries import MatchKind
from p4switch.exec import LoadedProgram, Table
from p4switch.exec.tables import DEFAULT_ONLY, TABLE_ONLY

PORT_WIDTH = 9


@dataclass(frozen=True)
class Packet:
    port: int
    frame: bytes
    origin: str  # "path start -> ... -> accept", "mutated ...", "random", "seed"


def stf_key_name(name: str) -> str | None:
    """The name an STF ``add`` line gives a key field (``hdr.x.f & 0xFF`` is named by its
    field, as BMv2's CLI does); None for a key expression without a one-word name."""
    base = name.split(" & ", 1)[0]
    return None if any(c.isspace() for c in base) else base


def _hex(v: int) -> str:
    return f"0x{v:x}"


class EntryGenerator:
    def __init__(self, prog: LoadedProgram, rng: random.Random, ports: list[int], paths: list[ParserPath]) -> None:
        self.prog = prog
        self.rng = rng
        self.ports = ports
        self.pool: dict[str, list[int]] = {}
        for p in paths:
            for name, (value, _) in p.fields.items():
                self.pool.setdefault(name, []).append(value)

    def _key_value(self, name: str, width: int) -> int:
        full = (1 << width) - 1
        rel = name.split(" & ", 1)[0].split(".", 1)[-1]
        if width == PORT_WIDTH and self.rng.random() < 0.8:  # ingress_port, egress_spec, ...
            return self.rng.choice(self.ports)
        if rel.endswith("$valid$"):
            return self.rng.randint(0, 1)
        if rel in self.pool and self.rng.random() < 0.75:
            return self.rng.choice(self.pool[rel]) & full
        return self.rng.getrandbits(width)

    def _match(self, kind: MatchKind, name: str, width: int) -> str | None:
        full = (1 << width) - 1
        v = self._key_value(name, width)
        r = self.rng
        if kind == MatchKind.EXACT:
            return _hex(v)
        if kind == MatchKind.LPM:
            plen = r.choice([width, r.randint(0, width), r.randint(width // 2, width)])
            mask = full ^ ((1 << (width - plen)) - 1)
            return f"{_hex(v & mask)}/{plen}"
        if kind == MatchKind.TERNARY:
            mask = r.choice([full, full ^ ((1 << r.randint(0, width)) - 1), r.getrandbits(width), 0])
            return f"{_hex(v & mask)}&&&{_hex(mask)}"
        if kind == MatchKind.RANGE:
            lo, hi = max(0, v - r.randint(0, 16)), min(full, v + r.randint(0, 16))
            return f"{lo}->{hi}"
        if kind == MatchKind.OPTIONAL:
            return "*" if r.random() < 0.3 else _hex(v)
        return None

    def _action(self, table: Table, default: bool) -> str | None:
        scope_out = TABLE_ONLY if default else DEFAULT_ONLY
        names = [a for a in table.action_names if table.scopes.get(a) != scope_out]
        if not names:
            return None
        name = self.rng.choice(names)
        args = []
        for pname, width in self.prog.actions[name].params:
            if width == PORT_WIDTH and self.rng.random() < 0.8:
                v = self.rng.choice(self.ports)
            else:
                v = self.rng.getrandbits(width)
            args.append(f"{pname}:{_hex(v)}")
        return f"{name}({', '.join(args)})"

    def table_lines(self, table: Table, per_table: int) -> list[str]:
        """STF lines for one table: up to ``per_table`` entries and maybe a default action."""
        lines = []
        if table.profile is None and not table.is_const and table.key:
            keys = [(stf_key_name(k.name), k) for k in table.key]
            if all(n is not None for n, _ in keys):
                for _ in range(self.rng.randint(1, per_table)):
                    words = []
                    for n, k in keys:
                        m = self._match(k.match_kind, k.name, k.width)
                        if m is None:
                            return lines
                        words.append(f"{n}:{m}")
                    action = self._action(table, default=False)
                    if action is None:
                        break
                    prio = f" {self.rng.randint(1, 9999)}" if table.needs_priority else ""
                    lines.append(f"add {table.name}{prio} {' '.join(words)} {action}")
        if not table.default_is_const and table.profile is None and self.rng.random() < 0.3:
            action = self._action(table, default=True)
            if action is not None:
                lines.append(f"setdefault {table.name} {action}")
        return lines

    def replication_lines(self, groups: int = 4) -> list[str]:
        """Multicast groups 1..``groups`` (one or two nodes of one to three ports, random
        rids) and clone sessions 1..``groups`` to one port each, so that programs which
        multicast or clone have somewhere to send the copies."""
        lines = []
        nodes = 0
        for g in range(1, groups + 1):
            lines.append(f"mc_mgrp_create {g}")
            for _ in range(self.rng.randint(1, 2)):
                ports = sorted(self.rng.sample(self.ports, self.rng.randint(1, min(3, len(self.ports)))))
                lines.append(f"mc_node_create {self.rng.randrange(1 << 16)} {' '.join(map(str, ports))}")
                lines.append(f"mc_node_associate {g} {nodes}")
                nodes += 1
            lines.append(f"mirroring_add {g} {self.rng.choice(self.ports)}")
        return lines

    def lines(self, per_table: int) -> list[str]:
        return [line for name in sorted(self.prog.tables) for line in self.table_lines(self.prog.tables[name], per_table)]


def mutate(rng: random.Random, frame: bytes) -> bytes:
    """One to three random edits: flip a bit, set a byte, cut the tail, insert or append bytes."""
    data = bytearray(frame)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(5)
        if op == 0 and data:
            i = rng.randrange(len(data) * 8)
            data[i // 8] ^= 0x80 >> (i % 8)
        elif op == 1 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif op == 2 and len(data) > 1:
            del data[rng.randint(1, len(data) - 1):]
        elif op == 3:
            i = rng.randint(0, len(data))
            data[i:i] = rng.randbytes(rng.randint(1, 4))
        else:
            data += rng.randbytes(rng.randint(1, 8))
    return bytes(data)


def packets(rng: random.Random, count: int, ports: list[int], paths: list[ParserPath],
            seeds: list[tuple[int, bytes]]) -> list[Packet]:
    """``count`` packets: crafted per parser path (each path in turn), mutated from a crafted
    frame or a seed, or random (length 1..128), in proportions 2:2:1."""
    corpus = [(p.port, p.frame) for p in paths] + seeds
    out: list[Packet] = []
    crafted = 0
    for _ in range(count):
        kind = rng.choices(("path", "mutated", "random"), (2, 2, 1))[0] if corpus else "random"
        if kind == "path" and paths:
            p = paths[crafted % len(paths)]
            crafted += 1
            out.append(Packet(p.port, p.frame, "path " + p.name))
        elif kind in ("path", "mutated"):
            port, frame = rng.choice(corpus)
            if rng.random() < 0.2:
                port = rng.choice(ports)
            out.append(Packet(port, mutate(rng, frame), "mutated"))
        else:
            out.append(Packet(rng.choice(ports), rng.randbytes(rng.randint(1, 128)), "random"))
    return out
