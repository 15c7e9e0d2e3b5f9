"""Run an STF file against a loaded program, the way p4c's BMv2 STF runner does:
commands in file order (table writes take effect before the packets that follow them),
``expect`` lines collected per port and compared in order with what each port emitted.

Commands: ``packet PORT HEX``, ``expect PORT [HEX[$]]`` (``*`` = any nibble, ``$`` = the
packet ends here, no HEX = any packets on that port), ``add TABLE [PRIORITY] KEY:VALUE ...
ACTION(PARAM:VALUE, ...)``, ``setdefault TABLE ACTION(...)``, ``mirroring_add SESSION PORT``,
``mc_mgrp_create GROUP``, ``mc_node_create RID PORT...``, ``mc_node_associate GROUP NODE``,
``register_write REG INDEX VALUE``, ``register_read REG INDEX VALUE`` (checks the value),
``counter_read COUNTER INDEX [packets=N] [bytes=N]`` (checks what is given),
``check_counter COUNTER(INDEX) packets == N`` / ``bytes == N`` (``COUNTER($NAME)``: the
direct counter of the entry added with ``add ... = NAME``; without a condition it only
names the counter), ``wait``; ``#`` comments. Only the ports named by ``packet``/``expect``
lines are checked (as by p4c's driver) unless ``all_ports``: then a packet on any other port
is unexpected too, so a file can say "this packet is dropped". p4c's own BMv2 driver ignores ``check_counter``;
``check_counters=False`` does the same (a mismatch is then a note, not a failure).

Time: each packet arrives 1 µs after the previous one; ``wait`` advances the clock by 1 s.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from p4rt.entries import ActionCall, CloneSession, CounterData, EntryError, Replica, TableEntry, priority_from_cli
from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.exec.externs import Counter
from p4switch.stf.values import ValueError_, parse_int, parse_match


class StfError(Exception):
    """A malformed STF line or one that names something the program does not have."""

    def __init__(self, lineno: int, message: str) -> None:
        super().__init__(f"line {lineno}: {message}")
        self.lineno = lineno


@dataclass
class StfResult:
    ok: bool
    failures: list[str] = field(default_factory=list)
    packets_sent: int = 0
    packets_received: int = 0
    stats: dict[str, int] = field(default_factory=dict)  # the pipeline's counters
    notes: list[str] = field(default_factory=list)  # counter checks not counted as failures


@dataclass
class _Expect:
    lineno: int
    pattern: str  # upper-case hex with '*', without '$'
    exact_end: bool


def _hex_bytes(text: str, lineno: int) -> bytes:
    h = "".join(text.split())
    if len(h) % 2:
        raise StfError(lineno, f"odd number of hex digits in packet {h!r}")
    try:
        return bytes.fromhex(h)
    except ValueError:
        raise StfError(lineno, f"bad packet hex {h!r}") from None


def _matches(exp: _Expect, got: bytes) -> bool:
    g = got.hex().upper()
    p = exp.pattern
    if len(g) < len(p) or (exp.exact_end and len(g) != len(p)):
        return False
    return all(pc == "*" or pc == gc for pc, gc in zip(p, g))


def _is_key(token: str) -> bool:
    depth = 0
    for ch in token:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == ":" and depth == 0:
            return True
    return False


def _split_action(text: str, lineno: int) -> tuple[str, dict[str, str]]:
    m = re.fullmatch(r"\s*([\w.$\[\]]+)\s*(?:\((.*)\))?\s*", text)
    if not m:
        raise StfError(lineno, f"bad action {text!r}")
    args = {}
    body = (m.group(2) or "").strip()
    if body:
        for part in body.split(","):
            if ":" not in part:
                raise StfError(lineno, f"action argument {part.strip()!r} is not NAME:VALUE")
            k, v = part.split(":", 1)
            args[k.strip()] = v.strip()
    return m.group(1), args


class StfRunner:
    def __init__(self, prog: LoadedProgram, out: TextIO = sys.stdout, check_counters: bool = True,
                 all_ports: bool = False) -> None:
        self.prog = prog
        self.check_counters = check_counters
        self.all_ports = all_ports
        self.notes: list[str] = []
        self.pipe = V1Pipeline(prog)
        self.out = out
        self.now_us = 0
        self.received: dict[int, list[bytes]] = {}
        self.expects: dict[int, list[_Expect]] = {}
        self.any_ports: set[int] = set()
        # Ports named by any packet/expect line. p4c's STF driver gives BMv2 an interface only
        # for those, so frames sent anywhere else vanish unobserved; we check the same ports.
        self.ports: set[int] = set()
        self.failures: list[str] = []
        self.sent = 0
        self.mc_nodes: list[tuple[int, list[int]]] = []
        self.mc_members: dict[int, list[int]] = {}
        self.auto_prio = 1 << 20
        self.handles: dict[str, tuple] = {}  # "add ... = NAME": (table, match, priority)
        # the control-plane writes made, in order, as values another target can replay:
        # ("add", table, TableEntry), ("setdefault", table, ActionCall), ("mirroring_add", session,
        # port), ("mc_mgrp_create", group), ("mc_node_create", rid, ports),
        # ("mc_node_associate", group, node), ("register_write", register, index, value)
        self.writes: list[tuple] = []

    # ---- names -----------------------------------------------------------------------------
    def _table(self, name: str, lineno: int):
        try:
            return self.prog.table(name)
        except EntryError as e:
            raise StfError(lineno, str(e)) from None

    def _key_field(self, table, name: str, lineno: int):
        n = re.sub(r"\$(\d+)", r"[\1]", name)
        # validity keys are named hdr.$valid$ (p4c); STF files write hdr.$valid, hdr.valid,
        # hdr.isValid() or just hdr
        cands = [n, n + "()", re.sub(r"\.(\$valid\$?|valid|isValid\(\))$", ".$valid$", n), n + ".$valid$"]
        for k in table.key:
            if k.name in cands:
                return k
        hits = [k for k in table.key if any(k.name.endswith("." + c) for c in cands)]
        if len(hits) == 1:
            return hits[0]
        # a `field & MASK` key: BMv2 names it by the field (p4c puts the mask in the JSON key)
        hits = [k for k in table.key if re.sub(r"\s*&\s*[\w']+$", "", k.name) in cands]
        if len(hits) == 1:
            return hits[0]
        raise StfError(lineno, f"table {table.name} has no key field {name}"
                       + (" (ambiguous)" if hits else "") + f"; keys: {', '.join(k.name for k in table.key)}")

    def _action(self, table, name: str, args: dict[str, str], lineno: int) -> ActionCall:
        names = table.action_names
        if name not in names:
            # a name local to the control first; a bare suffix only if no such name exists
            hits = [a for a in names if a.endswith("." + name)] or [a for a in names if a.endswith(name)]
            if len(hits) != 1:
                raise StfError(lineno, f"table {table.name} has no action {name}" + (" (ambiguous)" if hits else ""))
            name = hits[0]
        info = self.prog.actions[name]
        widths = dict(info.params)
        params = {}
        for k, v in args.items():
            if k not in widths:
                raise StfError(lineno, f"action {name} has no parameter {k}")
            try:
                params[k] = parse_int(v) & ((1 << widths[k]) - 1)
            except ValueError_ as e:
                raise StfError(lineno, str(e)) from None
        return ActionCall(name, params)

    # ---- commands --------------------------------------------------------------------------
    def command(self, raw: str, lineno: int = 1) -> None:
        """Runs one STF line (comments and blank lines do nothing)."""
        line = raw.split("#", 1)[0].strip()
        if not line:
            return
        word, _, rest = line.partition(" ")
        handler = getattr(self, "cmd_" + word.lower(), None)
        if handler is None:
            raise StfError(lineno, f"unknown STF command {word!r}")
        try:
            handler(rest.strip(), lineno)
        except (EntryError, ValueError_) as e:
            raise StfError(lineno, str(e)) from None
        except (ValueError, IndexError):  # too few or too many words on the line
            raise StfError(lineno, f"malformed {word} line: {line!r}") from None

    def run(self, text: str) -> StfResult:
        for lineno, raw in enumerate(text.splitlines(), 1):
            self.command(raw, lineno)
        self._check_outputs()
        received = sum(len(v) for v in self.received.values())
        return StfResult(not self.failures, self.failures, self.sent, received, dict(self.pipe.stats),
                         self.notes)

    def cmd_packet(self, rest: str, lineno: int) -> None:
        port, _, data = rest.partition(" ")
        frame = _hex_bytes(data, lineno)
        self.ports.add(parse_int(port))
        self.now_us += 1
        self.sent += 1
        for p, f in self.pipe.process(parse_int(port), frame, self.now_us):
            self.received.setdefault(p, []).append(f)

    def cmd_expect(self, rest: str, lineno: int) -> None:
        port, _, data = rest.partition(" ")
        p = parse_int(port)
        self.ports.add(p)
        pat = "".join(data.split()).upper()
        if not pat:
            self.any_ports.add(p)
            return
        exact = pat.endswith("$")
        pat = pat.rstrip("$")
        if not re.fullmatch(r"[0-9A-F*]*", pat):
            raise StfError(lineno, f"bad expected packet {data!r}")
        self.expects.setdefault(p, []).append(_Expect(lineno, pat, exact))

    def cmd_add(self, rest: str, lineno: int) -> None:
        m = re.match(r"(\S+)\s*(.*)", rest)
        if not m:
            raise StfError(lineno, "add needs a table")
        table = self._table(m.group(1), lineno)
        rest = m.group(2)
        prio = None
        pm = re.match(r"(\d+)\s+(.*)", rest)
        if pm and ":" not in rest.split()[0]:
            prio = int(pm.group(1))
            rest = pm.group(2)
        tokens = rest.split()
        # keys are NAME:VALUE with the ':' outside parentheses (a key may be isValid());
        # the action is the first token that is not a key
        at = next((i for i, t in enumerate(tokens) if not _is_key(t)), None)
        if at is None:
            raise StfError(lineno, "add needs an action")
        words = tokens[:at]
        action_text = " ".join(tokens[at:])
        handle = None
        if "=" in action_text.rsplit(")", 1)[-1]:  # "= NAME": check_counter c($NAME) refers to it
            action_text, handle = action_text.rsplit("=", 1)
            handle = handle.strip()
        match = {}
        for w in words:
            k, v = w.rsplit(":", 1)
            kf = self._key_field(table, k, lineno)
            mt = parse_match(v, kf.match_kind, kf.width)
            if mt is not None:
                match[kf.name] = mt
        name, args = _split_action(action_text, lineno)
        call = self._action(table, name, args, lineno)
        if table.needs_priority:
            if prio is None:  # entries without priority: earlier ones win
                self.auto_prio -= 1
                prio = self.auto_prio
            else:  # larger wins in STF: p4c's bmv2stf.py hands BMv2 (smaller wins) 10000 - N;
                # ranks above the implicit ones (below 2^20)
                prio = priority_from_cli(10000 - prio)
        else:
            prio = 0
        entry = TableEntry(match, call, prio)
        table.insert(entry)
        self.writes.append(("add", table.name, entry))
        if handle:
            self.handles[handle] = (table, match, prio)

    def cmd_setdefault(self, rest: str, lineno: int) -> None:
        tname, _, action_text = rest.partition(" ")
        table = self._table(tname, lineno)
        name, args = _split_action(action_text, lineno)
        call = self._action(table, name, args, lineno)
        table.set_default(call)
        self.writes.append(("setdefault", table.name, call))

    def cmd_mirroring_add(self, rest: str, lineno: int) -> None:
        parts = rest.split()
        if len(parts) != 2:
            raise StfError(lineno, "mirroring_add SESSION PORT")
        sid, port = parse_int(parts[0]), parse_int(parts[1])
        self.prog.pre.set_clone_session(CloneSession(sid, [Replica(port, 0)]))
        self.writes.append(("mirroring_add", sid, port))

    def cmd_mc_mgrp_create(self, rest: str, lineno: int) -> None:
        g = parse_int(rest.split()[0])
        self.mc_members[g] = []
        self.prog.pre.set_mc_group(g, [])
        self.writes.append(("mc_mgrp_create", g))

    def cmd_mc_node_create(self, rest: str, lineno: int) -> None:
        parts = rest.split()
        if len(parts) < 2:
            raise StfError(lineno, "mc_node_create RID PORT...")
        self.mc_nodes.append((parse_int(parts[0]), [parse_int(p) for p in parts[1:]]))
        self.writes.append(("mc_node_create", *self.mc_nodes[-1]))

    def cmd_mc_node_associate(self, rest: str, lineno: int) -> None:
        parts = rest.split()
        g, node = parse_int(parts[0]), parse_int(parts[1])
        if node >= len(self.mc_nodes):
            raise StfError(lineno, f"no multicast node {node}")
        if g not in self.mc_members:
            raise StfError(lineno, f"no multicast group {g}")
        self.mc_members[g].append(node)
        replicas = [Replica(port, rid) for n in self.mc_members[g]
                    for rid, ports in [self.mc_nodes[n]] for port in ports]
        self.prog.pre.set_mc_group(g, replicas)
        self.writes.append(("mc_node_associate", g, node))

    def cmd_register_write(self, rest: str, lineno: int) -> None:
        name, idx, val = rest.split()
        reg = self.prog.register(name)
        reg.write(parse_int(idx), parse_int(val))
        self.writes.append(("register_write", reg.name, parse_int(idx), parse_int(val)))

    def cmd_register_read(self, rest: str, lineno: int) -> None:
        parts = rest.split()
        reg = self.prog.register(parts[0])
        got = reg.read(parse_int(parts[1]))
        if len(parts) > 2:
            want = parse_int(parts[2])
            if got != want:
                self._fail(f"line {lineno}: register {reg.name}[{parts[1]}] is {got:#x}, expected {want:#x}")
        else:
            print(f"{reg.name}[{parts[1]}] = {got}", file=self.out)

    def _counter(self, name: str, lineno: int) -> Counter:
        c = self.prog.counter(name)
        if not isinstance(c, Counter):
            raise StfError(lineno, f"{c.name} is a direct counter: it counts per entry of table {c.table}, "
                                   "not by index")
        return c

    def cmd_counter_read(self, rest: str, lineno: int) -> None:
        parts = rest.split()
        c = self._counter(parts[0], lineno)
        idx = parse_int(parts[1])
        data = c.read(idx)
        checks = dict(p.split("=", 1) for p in parts[2:] if "=" in p)
        self._check_counter(c.name, idx, data, checks, lineno)
        if not checks:
            print(f"{c.name}[{idx}] = packets {data.packets} bytes {data.bytes}", file=self.out)

    def cmd_check_counter(self, rest: str, lineno: int) -> None:
        m = re.fullmatch(r"([\w.]+)\((\$?\w+)\)(?:\s+(packets|bytes)\s*==\s*(\w+))?", rest)
        if not m:
            raise StfError(lineno, "check_counter NAME(INDEX) [packets|bytes == N]")
        checks = {m.group(3): m.group(4)} if m.group(3) else {}
        if m.group(2).startswith("$"):  # a direct counter, by the handle of a table entry
            if m.group(2)[1:] not in self.handles:
                raise StfError(lineno, f"no table entry was added as {m.group(2)[1:]}")
            table, match, prio = self.handles[m.group(2)[1:]]
            data = table.get(match, prio).counter or CounterData()
            self._check_counter(m.group(1), m.group(2), data, checks, lineno)
            return
        c = self._counter(m.group(1), lineno)
        idx = parse_int(m.group(2))
        self._check_counter(c.name, idx, c.read(idx), checks, lineno)

    def _check_counter(self, name: str, idx: int, data: CounterData, checks: dict[str, str], lineno: int) -> None:
        for k, v in checks.items():
            got = getattr(data, k)
            if got != parse_int(v):
                msg = f"line {lineno}: counter {name}[{idx}] {k} is {got}, expected {v}"
                if self.check_counters:
                    self._fail(msg)
                else:
                    self.notes.append(msg)

    def cmd_wait(self, rest: str, lineno: int) -> None:
        self.now_us += 1_000_000

    # ---- checking --------------------------------------------------------------------------
    def _fail(self, msg: str) -> None:
        self.failures.append(msg)
        print("*** " + msg, file=self.out)

    def _check_outputs(self) -> None:
        # p4c's driver only sees ports named in the file; ``all_ports`` also fails on a packet
        # sent anywhere else (a test that expects a drop)
        for port in sorted(self.ports | (set(self.received) if self.all_ports else set())):
            if port in self.any_ports:
                continue
            exps = self.expects.get(port, [])
            got = self.received.get(port, [])
            for i, exp in enumerate(exps):
                if i >= len(got):
                    self._fail(f"line {exp.lineno}: expected packet on port {port} not received\n"
                               f"    expected {exp.pattern}{'$' if exp.exact_end else ''}")
                    continue
                if not _matches(exp, got[i]):
                    self._fail(f"line {exp.lineno}: packet {i} on port {port} differs\n"
                               f"    expected {exp.pattern}{'$' if exp.exact_end else ''}\n"
                               f"    received {got[i].hex().upper()}")
            for extra in got[len(exps):]:
                self._fail(f"unexpected packet on port {port}\n    received {extra.hex().upper()}")


def run_stf(prog: LoadedProgram, text: str, out: TextIO = sys.stdout, check_counters: bool = True,
            all_ports: bool = False) -> StfResult:
    return StfRunner(prog, out, check_counters, all_ports).run(text)


def run_stf_file(prog: LoadedProgram, path: str | Path, out: TextIO = sys.stdout,
                 check_counters: bool = True, all_ports: bool = False) -> StfResult:
    return run_stf(prog, Path(path).read_text(), out, check_counters, all_ports)
