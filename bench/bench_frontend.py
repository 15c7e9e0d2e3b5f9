"""Front-end speed: preprocess + parse + type-check time of real programs.

Parsing speed matters little (programs are compiled once per pipeline load), but loading
fabric.p4 into the switch or the P4Runtime server must stay within seconds.
Run alone: ``python -m bench.bench_frontend``.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench.result import Result
from p4switch.frontend import compile_file
from p4switch.frontend.parser import _parser

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = [
    ("basic_l3", ROOT / "tests" / "p4switch" / "frontend" / "programs" / "basic_l3.p4", []),
    ("fabric", ROOT / "p4src" / "fabric.p4", [str(ROOT / "p4src" / "include")]),
]


def run() -> list[Result]:
    t0 = time.process_time()
    _parser()  # LALR tables: built once per process
    results = [Result("frontend grammar load", (time.process_time() - t0) * 1000, "ms",
                      "once per process (LALR tables cached by lark in the temp dir)")]
    for name, path, includes in PROGRAMS:
        if not path.exists():
            continue
        compile_file(str(path), include_dirs=includes)  # warm
        n = 3
        t0 = time.perf_counter()
        for _ in range(n):
            compile_file(str(path), include_dirs=includes)
        ms = (time.perf_counter() - t0) / n * 1000
        lines = sum(1 for _ in path.open()) + sum(
            sum(1 for _ in p.open()) for d in includes for p in Path(d).glob("*.p4"))
        results.append(Result(f"frontend compile {name}.p4", ms, "ms",
                              f"cpp + parse + check, {lines} source lines (+ v1model.p4)"))
    return results


if __name__ == "__main__":
    for r in run():
        print(f"{r.name:<36} {r.value:>10,.1f} {r.unit:<4} {r.detail}")
