"""``python -m difftest.corpus TESTDATA [-k NAME] [--count N] [--seed N] [--out DIR]``: the
differential tester over p4c's v1model STF corpus (the programs ``python -m
p4switch.stf.corpus`` runs), each program with its own STF file as ``--entries`` (its table
setup plus generated entries; its packets seed the mutations).

Each program runs as its own ``p4switch-difftest`` process (a hang is cut off after
``--timeout``) and ends as ``agree``, ``diverge`` (the STF test goes to ``--out``), ``p4c``
(the reference compiler refuses it), ``error`` (anything else that stopped the run: our front
end refuses it, BMv2 refused a write) or ``timeout``. Not part of ``make test``: the corpus is
p4c's and BMv2 must be installed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from p4switch.stf.corpus import stf_jobs

STATUSES = ("agree", "diverge", "p4c", "error", "timeout")


def run_one(program: str, stf: str, args: argparse.Namespace, out: Path, name: str) -> tuple[str, str]:
    cmd = [sys.executable, "-m", "difftest", program, "-I", str(Path(program).parent), "--entries", stf,
           "--count", str(args.count), "--seed", str(args.seed), "-o", str(out / f"{name.replace('/', '_')}.stf")]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "timeout", f"killed after {args.timeout} s"
    if res.returncode == 0:
        return "agree", res.stdout.strip()
    if res.returncode == 1 and "DIVERGENCE" in res.stdout:
        return "diverge", res.stdout.strip().splitlines()[-1]
    err = res.stderr.strip()
    return ("p4c" if "p4c refuses" in err else "error"), err


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m difftest.corpus", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("testdata", type=Path, help="p4c's testdata directory (or a p4c tree)")
    ap.add_argument("-k", dest="match", default="", help="only programs whose name contains this")
    ap.add_argument("--count", type=int, default=50, help="packets per program (default 50)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per program (default 300)")
    ap.add_argument("--out", type=Path, default=Path("difftest-corpus"), help="directory for divergences' STF tests")
    args = ap.parse_args(argv)
    jobs = [j for j in stf_jobs(args.testdata) if args.match in j.name]
    if not jobs:
        print(f"no programs found under {args.testdata}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    counts = dict.fromkeys(STATUSES, 0)
    for job in jobs:
        status, detail = run_one(job.program, job.stf, args, args.out, job.name)
        counts[status] += 1
        print(f"{status:<8} {job.name}", flush=True)
        if status != "agree" and detail:
            print("    " + detail.replace("\n", "\n    ")[:2000], flush=True)
    print(f"\n{len(jobs)} programs x {args.count} packets (seed {args.seed}): "
          + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return 0 if counts["diverge"] == counts["error"] == counts["timeout"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
