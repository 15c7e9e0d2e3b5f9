"""Executor speed in process (``V1Pipeline.process``, no I/O, no queues).

- basic L3: Ethernet/IPv4 parse, LPM table with 100 routes, TTL decrement, IPv4 checksum
  verify and update (tests/p4switch/exec/programs/basic_l3.p4); issue 14's goal: 250,000
  packets/s on one core.
- fabric.p4 (p4src/fabric.p4) routing; issue 14's goal: 120,000 packets/s.

Both with each backend: the generated Python, and it compiled by mypyc (``native.py``).

Each figure is the median of several rounds (``median_rate``): the machine is shared, and
a round that other work slowed down moves a median less than a mean.

Run alone: ``python -m bench.bench_exec``.
"""

from __future__ import annotations

import io
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from bench.result import Result
from p4rt.entries import ActionCall, Lpm, MatchKind, TableEntry, Ternary
from p4switch.exec import LoadedProgram, V1Pipeline, native
from p4switch.exec.tables import ActionInfo, KeyField, Table
from p4switch.frontend import compile_file
from p4switch.stf.runner import StfRunner

ROOT = Path(__file__).resolve().parent.parent
BASIC = ROOT / "tests" / "p4switch" / "exec" / "programs" / "basic_l3.p4"
FABRIC = ROOT / "p4src" / "fabric.p4"


def _ipv4_frame(dst: int, rng: random.Random) -> bytes:
    ip = bytearray(20 + 8 + 18)
    ip[0] = 0x45
    ip[2:4] = len(ip).to_bytes(2, "big")
    ip[8] = 64
    ip[9] = 17
    ip[12:16] = (0x0A000001).to_bytes(4, "big")
    ip[16:20] = dst.to_bytes(4, "big")
    s = sum(int.from_bytes(ip[i:i + 2], "big") for i in range(0, 20, 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    ip[10:12] = (~s & 0xFFFF).to_bytes(2, "big")
    eth = bytes.fromhex("000000000001" "000000000002" "0800")
    return eth + bytes(ip)


def median_rate(process: Callable, port: int, frames: list[bytes], seconds: float,
                rounds: int = 5) -> tuple[float, int]:
    """(median packets/s over ``rounds`` rounds of ``seconds / rounds`` CPU seconds each,
    frames sent out) of ``process(port, frame, now_us)``, the clock ticking 1 us a packet."""
    rates = []
    out = now = 0
    for _ in range(rounds):
        n = 0
        t0 = time.process_time()
        deadline = t0 + seconds / rounds
        while True:
            for f in frames:
                now += 1
                out += len(process(port, f, now))
            n += len(frames)
            if time.process_time() >= deadline:
                break
        rates.append(n / (time.process_time() - t0))
    return statistics.median(rates), out


def basic_workload(backend: str | None = None) -> tuple[V1Pipeline, int, list[bytes]]:
    """basic L3 with 100 random routes and one frame to each: (pipeline, port, frames).
    ``backend`` as for ``LoadedProgram.from_checked``."""
    prog = LoadedProgram.from_checked(compile_file(str(BASIC)), backend)
    t = prog.tables["MyIngress.ipv4_lpm"]
    rng = random.Random(1)
    dsts = []
    nets = set()
    while len(nets) < 100:
        plen = rng.choice([8, 16, 24, 32])
        net = (0x0A000000 | rng.getrandbits(24)) & ((0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF)
        if (net, plen) in nets:
            continue
        nets.add((net, plen))
        t.insert(TableEntry({"hdr.ipv4.dstAddr": Lpm(net, plen)},
                            ActionCall("MyIngress.ipv4_forward", {"dstAddr": 0xAA0000 + len(nets), "port": 1 + len(nets) % 8})))
        dsts.append(net | (rng.getrandbits(32 - plen) if plen < 32 else 0))
    return V1Pipeline(prog), 0, [_ipv4_frame(d, rng) for d in dsts]


def fabric_routing_workload(backend: str | None = None) -> tuple[V1Pipeline, int, list[bytes]]:
    """fabric.p4 configured by the control-plane lines of p4src/tests/fabric_routing.stf,
    fed with that file's routed packets (L3 LPM, next-hop MACs, TTL, checksums, counters):
    (pipeline, port, frames)."""
    stf = FABRIC.parent / "tests" / "fabric_routing.stf"
    checked = compile_file(str(FABRIC), include_dirs=[str(FABRIC.parent), str(FABRIC.parent / "include")])
    prog = LoadedProgram.from_checked(checked, backend)
    lines = stf.read_text().splitlines()
    setup = "\n".join(x for x in lines if x.split(" ", 1)[0] in ("add", "setdefault", "mirroring_add"))
    frames = [bytes.fromhex(x.split(None, 2)[2].replace(" ", "")) for x in lines
              if x.startswith("packet 1 ")][:2]
    runner = StfRunner(prog, io.StringIO())
    runner.run(setup)
    return runner.pipe, 1, frames


def bench_basic(backend: str, seconds: float = 2.0) -> Result:
    pipe, port, frames = basic_workload(backend)
    rate, out = median_rate(pipe.process, port, frames, seconds)
    assert out > 0, "basic L3 benchmark forwarded nothing"
    return Result(f"exec basic_l3 (LPM 100 routes) [{backend}]", rate, "packets/s",
                  f"in process, CPU time of one core, median of 5; goal 250,000; {len(frames)} routes")


def bench_fabric(backend: str, seconds: float = 2.0) -> Result:
    pipe, port, frames = fabric_routing_workload(backend)
    rate, out = median_rate(pipe.process, port, frames, seconds)
    assert out > 0, "fabric.p4 routing benchmark forwarded nothing"
    return Result(f"exec fabric.p4 (routing) [{backend}]", rate, "packets/s",
                  "in process, CPU time, median of 5; goal 120,000; tables from p4src/tests/fabric_routing.stf")


def bench_ternary(seconds: float = 1.0) -> list[Result]:
    """Lookups in a 1,000-entry ternary table (two fields, 8 distinct masks), the shape of
    an ACL: what one table apply costs when it is large. Twice: 256 keys asked again and again
    (a flow's packets: the table remembers the answer per key, ``p4switch/exec/memo.py``), and
    65,536 keys in turn, each asked again only after the memo has started over (the search)."""
    fwd = ActionInfo("acl.fwd", (("port", 9),))
    t = Table("acl", [KeyField("dst", MatchKind.TERNARY, 32), KeyField("dport", MatchKind.TERNARY, 16)],
              [fwd], 2048, ActionCall("acl.fwd", {"port": 0}))
    rng = random.Random(3)
    masks = [(0xFFFFFFFF << s & 0xFFFFFFFF, m) for s in (0, 8, 16, 24) for m in (0xFFFF, 0)]
    n = 0
    while n < 1000:
        dm, pm = rng.choice(masks)
        try:
            t.insert(TableEntry({"dst": Ternary(rng.getrandbits(32) & dm, dm), "dport": Ternary(rng.getrandbits(16) & pm, pm)},
                                ActionCall("acl.fwd", {"port": n % 512}), priority=rng.randint(1, 1000)))
            n += 1
        except Exception:  # duplicate random key: draw again
            continue
    apply = t.apply
    out = []
    for what, count in (("repeated keys", 256), ("new keys", 65536)):
        keys = [(rng.getrandbits(32), rng.getrandbits(16)) for _ in range(count)]
        done = 0
        t0 = time.process_time()
        while time.process_time() - t0 < seconds:
            for k in keys[done % count:done % count + 256]:
                apply(k, 64, 0)
            done += 256
        out.append(Result(f"exec ternary lookup (1000 entries, {what})", done / (time.process_time() - t0),
                          "lookups/s", f"8 mask groups, priorities 1..1000, {count} distinct keys in turn"))
    return out


def run() -> list[Result]:
    return [*(bench(backend) for backend in native.BACKENDS for bench in (bench_basic, bench_fabric)),
            *bench_ternary()]


if __name__ == "__main__":
    for r in run():
        print(f"{r.name:<36} {r.value:>12,.0f} {r.unit} {r.detail}")
