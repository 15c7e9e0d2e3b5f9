"""Run p4c's own test corpus on our target: ``python -m p4switch.stf.corpus TESTDATA``.

TESTDATA is p4c's ``testdata`` directory (or a p4c checkout holding one), extracted anywhere
outside this repository, e.g.::

    git -C p4c archive HEAD testdata | tar x -C /tmp/p4c-corpus
    python -m p4switch.stf.corpus /tmp/p4c-corpus/testdata            # v1model STF tests
    python -m p4switch.stf.corpus --frontend /tmp/p4c-corpus/testdata # front end on every program

STF mode runs every v1model STF test the way p4c's BMv2 driver (bmv2stf.py) does, which
ignores ``check_counter`` lines (their mismatches are printed as notes): ``p4_16_samples/X.p4`` that includes ``v1model.p4`` with
its ``X.stf``, and the P4-16 translations of P4_14 programs, ``p4_14_samples_outputs/X-frontend.p4``
with ``p4_14_samples/X.stf``. Each test ends as ``pass``, ``fail`` (an expectation does not hold),
``error`` (a diagnostic: the program or STF file is refused with file:line:col or line N),
``crash`` (a Python exception escaped, or the pipeline counted an internal fault) or ``timeout``.

Front-end mode compiles every ``p4_16_samples/*.p4`` (p4c accepts them) and every
``p4_16_errors/*.p4`` (p4c rejects them), and loads the V1Switch programs into the executor:
each must be accepted or get a diagnostic, never a crash; the summary counts the samples
refused and the errors accepted.

Tests run in worker processes (``-j``), so that a hang is cut off after ``--timeout`` seconds
and nothing one program does can take the others with it. Not part of ``make test``: the
corpus is p4c's and is not vendored here (see p4switch/exec/CONFORMANCE.md).
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path

from p4switch.exec import LoadedProgram
from p4switch.exec.compile_base import UnsupportedError
from p4switch.frontend import CompileError, compile_file
from p4switch.stf.runner import StfError, run_stf_file

STF_STATUSES = ("pass", "fail", "error", "crash", "timeout")
FE_STATUSES = ("accept", "diagnostic", "crash", "timeout")


@dataclass
class Job:
    """One corpus program: ``stf`` is None in front-end mode."""

    name: str
    program: str
    stf: str | None = None


# ---- finding the tests --------------------------------------------------------------------
def _testdata(root: Path) -> Path:
    return root / "testdata" if (root / "testdata").is_dir() else root


def stf_jobs(root: Path) -> list[Job]:
    """Every v1model STF test of the corpus, P4-16 samples first."""
    td = _testdata(root)
    jobs = []
    for stf in sorted((td / "p4_16_samples").glob("*.stf")):
        prog = stf.with_suffix(".p4")
        if prog.is_file() and "v1model.p4" in prog.read_text(errors="replace"):
            jobs.append(Job(prog.stem, str(prog), str(stf)))
    for stf in sorted((td / "p4_14_samples").glob("*.stf")):
        prog = td / "p4_14_samples_outputs" / (stf.stem + "-frontend.p4")
        if prog.is_file():
            jobs.append(Job("p4_14/" + stf.stem, str(prog), str(stf)))
    return jobs


def frontend_jobs(root: Path) -> list[Job]:
    td = _testdata(root)
    return ([Job(p.stem, str(p)) for p in sorted((td / "p4_16_samples").glob("*.p4"))]
            + [Job("errors/" + p.stem, str(p)) for p in sorted((td / "p4_16_errors").glob("*.p4"))])


# ---- one test, inside a worker --------------------------------------------------------------
class _FaultLog(logging.Handler):
    """Collects what the pipeline logs about faults inside the program (with tracebacks)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(logging.Formatter().format(record))


def _is_v1model(checked) -> bool:
    try:
        _ = checked.pipeline
    except CompileError:  # not a V1Switch program: the front end alone is what runs
        return False
    return True


def _first_line(e: BaseException) -> str:
    return (str(e).splitlines() or [type(e).__name__])[0]


def run_one(job: Job) -> dict:
    """Compile (and, with an STF file, run) one program; never raises."""

    include = [os.path.dirname(job.program)]
    faults = _FaultLog()
    logging.getLogger().addHandler(faults)
    try:
        checked = compile_file(job.program, include_dirs=include)
        if job.stf is None and not _is_v1model(checked):
            return {"status": "accept", "detail": ""}
        prog = LoadedProgram.from_checked(checked)
        if job.stf is None:  # loaded into the executor too
            return {"status": "accept", "detail": ""}
        out = io.StringIO()
        res = run_stf_file(prog, job.stf, out, check_counters=False)  # as p4c's bmv2stf.py
        if res.stats.get("dropped_internal_error"):
            return {"status": "crash", "detail": "\n".join(faults.records) or out.getvalue()}
        if not res.ok:
            return {"status": "fail", "detail": "\n".join(res.failures)}
        notes = "".join(f"\nnot checked, as by p4c: {n}" for n in res.notes)
        return {"status": "pass", "detail": f"{res.packets_sent} sent, {res.packets_received} received{notes}"}
    except (CompileError, UnsupportedError, StfError) as e:
        where = "" if isinstance(e, CompileError) else (job.stf + ": " if isinstance(e, StfError) else "")
        return {"status": "diagnostic" if job.stf is None else "error", "detail": where + _first_line(e)}
    except Exception:  # a bug of ours: exactly what this tool is for
        return {"status": "crash", "detail": traceback.format_exc()}
    finally:
        logging.getLogger().removeHandler(faults)


def _worker() -> None:
    """Read jobs (JSON lines) on stdin, write one JSON result line per job on stdout."""
    results = sys.stdout
    sys.stdout = sys.stderr  # whatever a program prints must not garble the results
    for line in sys.stdin:
        job = Job(**json.loads(line))
        results.write(json.dumps(run_one(job)) + "\n")
        results.flush()


# ---- driving the workers --------------------------------------------------------------------
def run_jobs(jobs: list[Job], workers: int, timeout: float, report) -> list[dict]:
    """Run ``jobs`` on ``workers`` processes; ``report(job, result)`` is called as each ends.
    A worker that exceeds ``timeout`` on a job is killed (it is ours) and replaced."""
    results: list[dict | None] = [None] * len(jobs)
    lock = threading.Lock()
    pending = list(range(len(jobs)))[::-1]

    def take() -> int | None:
        with lock:
            return pending.pop() if pending else None

    def drive() -> None:
        proc = None
        while (i := take()) is not None:
            if proc is None:
                proc = subprocess.Popen([sys.executable, "-m", "p4switch.stf.corpus", "--worker"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
            proc.stdin.write(json.dumps(jobs[i].__dict__) + "\n")
            proc.stdin.flush()
            line: list[str] = []
            reader = threading.Thread(target=lambda out=proc.stdout, got=line: got.append(out.readline()), daemon=True)
            reader.start()
            reader.join(timeout)
            if reader.is_alive() or not line or not line[0]:
                status = "timeout" if reader.is_alive() else "crash"
                proc.kill()
                proc.wait()
                proc = None
                detail = f"worker killed after {timeout} s" if status == "timeout" else "worker died"
                res = {"status": status, "detail": detail}
            else:
                res = json.loads(line[0])
            results[i] = res
            with lock:
                report(jobs[i], res)
        if proc is not None:
            proc.stdin.close()
            proc.wait()

    threads = [threading.Thread(target=drive) for _ in range(max(1, workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [r for r in results if r is not None]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m p4switch.stf.corpus", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("testdata", nargs="?", type=Path, help="p4c's testdata directory (or a p4c tree)")
    ap.add_argument("--frontend", action="store_true", help="compile every sample and error program")
    ap.add_argument("-j", dest="jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per test (default 120)")
    ap.add_argument("-k", dest="match", default="", help="only tests whose name contains this")
    ap.add_argument("-v", "--verbose", action="store_true", help="print details of passing tests too")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker()
        return 0
    if args.testdata is None:
        ap.error("the testdata directory is required")
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    jobs = (frontend_jobs if args.frontend else stf_jobs)(args.testdata)
    jobs = [j for j in jobs if args.match in j.name]
    if not jobs:
        print(f"no tests found under {args.testdata}", file=sys.stderr)
        return 2
    good = ("accept", "diagnostic") if args.frontend else ("pass",)

    def report(job: Job, res: dict) -> None:
        status = res["status"]
        if args.frontend and status in good:  # say which way it went only when p4c differs
            status = {("errors/", "accept"): "accept (p4c rejects)",
                      ("", "diagnostic"): "diagnostic (p4c accepts)"}.get(
                          (job.name[:7] if job.name.startswith("errors/") else "", status), status)
        print(f"{status:<10} {job.name}", flush=True)
        detail = res["detail"].rstrip()
        if detail and (args.verbose or res["status"] not in good or status != res["status"]
                       or "not checked" in detail):
            print("    " + detail.replace("\n", "\n    "), flush=True)

    results = run_jobs(jobs, args.jobs, args.timeout, report)
    statuses = FE_STATUSES if args.frontend else STF_STATUSES
    counts = {s: sum(r["status"] == s for r in results) for s in statuses}
    print(f"\n{len(results)} programs: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    if args.frontend:
        samples = [(j, r) for j, r in zip(jobs, results) if not j.name.startswith("errors/")]
        errors = [(j, r) for j, r in zip(jobs, results) if j.name.startswith("errors/")]
        print(f"p4_16_samples: {sum(r['status'] == 'accept' for _, r in samples)} of {len(samples)} accepted; "
              f"p4_16_errors: {sum(r['status'] == 'diagnostic' for _, r in errors)} of {len(errors)} refused")
    return 0 if all(r["status"] in good for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
