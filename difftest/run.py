"""One differential run: compile with both compilers, derive entries and packets, run them
through our target and BMv2, find the first packet whose outputs differ, confirm it on fresh
switches with a long settle time (reduced to that packet alone when it diverges alone) and
write it up as an STF test whose ``expect`` lines are BMv2's output.
"""

from __future__ import annotations

import math
import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from difftest.generate import EntryGenerator, Packet, packets
from difftest.paths import ParserPath, ParserPaths
from difftest.targets import Bmv2Target, OurTarget, Output
from lab.targets import TargetUnavailable, compile_program
from p4rt.bmv2_runtime import Bmv2Error
from p4switch.exec.compile_base import UnsupportedError
from p4switch.frontend import CompileError, compile_file
from p4switch.stf.runner import StfError

SETUP_COMMANDS = ("add", "setdefault", "mirroring_add", "mc_mgrp_create", "mc_node_create", "mc_node_associate",
                  "register_write")


class ToolError(Exception):
    """A missing tool, a program one of the compilers refuses, or a bad input file (exit 2)."""


@dataclass
class Config:
    program: str
    include_dirs: list[str] = field(default_factory=list)
    entries: str | None = None  # an STF file: its setup lines are used, its packets seed mutation
    seed: int = 1
    count: int = 100
    per_table: int = 3
    ports: list[int] = field(default_factory=lambda: [0, 1, 2, 3])
    settle: float = 0.2
    confirm_settle: float = 1.0
    generate_entries: bool = True
    workdir: str | None = None
    bmv2_json: str | None = None  # BMv2 JSON compiled elsewhere (then p4c is not run)


@dataclass
class Divergence:
    index: int  # of the packet in the run
    packet: Packet
    ours: Output
    bmv2: Output
    lines: list[str]  # the STF setup lines both targets ran
    history: list[tuple[Packet, Output]]  # packets sent before it in the STF test, with BMv2's output
    confirmed: bool


@dataclass
class Result:
    packets: int
    paths: int
    lines: list[str]
    refused: list[str]
    divergence: Divergence | None = None
    forwarded: int = 0  # packets with at least one frame out (on our target)


def _frame_text(frame: bytes) -> str:
    return frame.hex().upper()


def _outputs_text(out: Output) -> str:
    return "; ".join(f"port {p}: {_frame_text(f)}" for p, f in out) if out else "dropped"


def stf_text(cfg: Config, d: Divergence) -> str:
    """The divergence as an STF test that passes on BMv2 (run ours with ``p4switch-stf
    --all-ports``, so that a packet BMv2 drops must not come out anywhere)."""
    incs = "".join(f" -I {i}" for i in cfg.include_dirs)
    head = [
        "# Found by p4switch-difftest: our target and BMv2 differ on the last packet below.",
        f"# program: {cfg.program}{incs}",
        f"# seed {cfg.seed}, packet {d.index} of the run ({d.packet.origin})",
        f"# ours: {_outputs_text(d.ours)}",
        f"# bmv2: {_outputs_text(d.bmv2)}",
        "# expected (BMv2's output): p4switch-stf --all-ports PROGRAM THIS.stf",
    ]
    if d.history:
        head.append(f"# it differs only after the {len(d.history)} packets before it (state they leave, or "
                    "values of invalid headers BMv2 keeps from earlier packets)")
    body = list(d.lines)
    for pkt, out in d.history + [(d.packet, d.bmv2)]:
        body.append(f"packet {pkt.port} {_frame_text(pkt.frame)}")
        body += [f"expect {p} {_frame_text(f)}$" for p, f in out]
    return "\n".join(head + body) + "\n"


def _input_file(path: str | None) -> tuple[list[str], list[tuple[int, bytes]]]:
    """Setup lines and seed packets of the ``--entries`` STF file."""
    if path is None:
        return [], []
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ToolError(f"{path}: {e.strerror}") from None
    lines, seeds = [], []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        words = line.split()
        if words and words[0].lower() in SETUP_COMMANDS:
            lines.append(line)
        elif words and words[0].lower() == "packet":
            try:
                seeds.append((int(words[1], 0), bytes.fromhex("".join(words[2:]))))
            except (ValueError, IndexError):
                raise ToolError(f"{path}: bad packet line {line!r}") from None
    return lines, seeds


def derive_inputs(checked, cfg: Config) -> tuple[list[str], list[str], list[Packet], int]:
    """(setup lines our target takes, generated lines it refused, packets, number of parser
    paths), all determined by ``cfg.seed``."""
    rng = random.Random(cfg.seed)
    walker = ParserPaths(checked, rng, cfg.ports)
    first = walker.paths()
    crafted: list[ParserPath] = list(first)
    rounds = math.ceil(cfg.count * 0.4 / max(1, len(first)))
    for _ in range(min(rounds, 8) - 1):  # fresh random bits in every round
        crafted += walker.paths()
    lines, seeds = _input_file(cfg.entries)
    scratch = OurTarget(checked)
    refused = scratch.apply(lines)
    if refused:
        raise ToolError(f"{cfg.entries}: our target refuses {refused[0]}")
    if cfg.generate_entries:
        gen = EntryGenerator(scratch.prog, rng, cfg.ports, crafted)
        generated = gen.lines(cfg.per_table)
        if not any(line.split()[0].lower().startswith(("mc_", "mirroring")) for line in lines):
            generated = gen.replication_lines() + generated  # the file's own groups and sessions win
        refused = scratch.apply(generated)
        bad = {r.split("  # ", 1)[0] for r in refused}
        lines += [g for g in generated if g not in bad]
    return lines, refused, packets(rng, cfg.count, cfg.ports, crafted, seeds), len(first)


class DiffRun:
    def __init__(self, cfg: Config, log: TextIO) -> None:
        self.cfg = cfg
        self.log = log
        try:
            self.checked = compile_file(cfg.program, include_dirs=cfg.include_dirs)
            OurTarget(self.checked)
        except CompileError as e:
            raise ToolError(f"our front end refuses the program:\n{e}") from None
        except UnsupportedError as e:
            raise ToolError(f"our target cannot run the program: {e}") from None
        self._tmp = tempfile.TemporaryDirectory(prefix="difftest-") if cfg.workdir is None else None
        self.work = Path(cfg.workdir or self._tmp.name)
        if cfg.bmv2_json is not None:
            self.json_path = Path(cfg.bmv2_json)
            if not self.json_path.is_file():
                raise ToolError(f"{cfg.bmv2_json}: no such file")
        else:
            try:
                compiled = compile_program("bmv2", cfg.program, self.work / "p4c", cfg.include_dirs)
            except TargetUnavailable as e:
                raise ToolError(str(e)) from None
            except RuntimeError as e:
                raise ToolError(f"p4c refuses the program (our front end accepts it):\n{e}") from None
            self.json_path = compiled.device_config_path
        self.runs = 0

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()

    # ---- running ---------------------------------------------------------------------------
    def ours(self, lines: list[str]) -> OurTarget:
        t = OurTarget(self.checked)
        refused = t.apply(lines)
        if refused:  # the same lines were taken by a fresh target before
            raise ToolError(f"our target refuses {refused[0]}")
        return t

    def bmv2(self, ours: OurTarget, settle: float) -> Bmv2Target:
        self.runs += 1
        try:
            return Bmv2Target(self.json_path, ours.prog, self.work / f"bmv2-{self.runs}", settle, ours.writes)
        except (Bmv2Error, StfError) as e:
            raise ToolError(f"BMv2 refused a control-plane write: {e}") from None

    def both(self, lines: list[str], pkts: list[Packet], settle: float) -> tuple[list[Output], list[Output]]:
        ours = self.ours(lines)
        mine = [sorted(ours.send(p.port, p.frame)) for p in pkts]
        bm = self.bmv2(ours, settle)
        try:
            theirs = [sorted(bm.send(p.port, p.frame)) for p in pkts]
        finally:
            bm.close()
        return mine, theirs

    def run(self) -> Result:
        lines, refused, pkts, npaths = derive_inputs(self.checked, self.cfg)
        res = Result(len(pkts), npaths, lines, refused)
        print(f"{self.cfg.program}: {npaths} parser paths, {len(lines)} table/setup lines "
              f"({len(refused)} generated ones refused by our target), {len(pkts)} packets", file=self.log)
        mine, theirs = self.both(lines, pkts, self.cfg.settle)
        res.forwarded = sum(1 for m in mine if m)
        first = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), None)
        if first is None:
            return res
        print(f"packet {first} differs; confirming on fresh switches (settle {self.cfg.confirm_settle} s)",
              file=self.log)
        d = self._confirm(lines, pkts, first, mine[first], theirs[first])
        if d.confirmed:
            res.divergence = d
        else:  # BMv2 answered late on a loaded machine: what the slow rerun saw is what counts
            print(f"packet {first}: not reproduced with settle {self.cfg.confirm_settle} s "
                  f"(BMv2 was slow the first time); no divergence", file=self.log)
        return res

    def _confirm(self, lines: list[str], pkts: list[Packet], first: int, mine: Output, theirs: Output) -> Divergence:
        slow = self.cfg.confirm_settle
        alone_mine, alone_theirs = self.both(lines, [pkts[first]], slow)
        if alone_mine != alone_theirs:
            return Divergence(first, pkts[first], alone_mine[0], alone_theirs[0], lines, [], True)
        prefix = pkts[:first + 1]
        m, t = self.both(lines, prefix, slow)
        j = next((i for i, (a, b) in enumerate(zip(m, t)) if a != b), None)
        if j is None:
            return Divergence(first, pkts[first], mine, theirs, lines, [], False)
        return Divergence(j, pkts[j], m[j], t[j], lines, list(zip(pkts[:j], t[:j])), True)
