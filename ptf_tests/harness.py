"""``python -m ptf_tests.harness [--target ours|bmv2] [--test-dir DIR] [PROGRAM] [-- PTF ARGS]``

Runs a PTF suite against a freshly started switch: creates uniquely named veth pairs, compiles
PROGRAM for the target, starts the target on the switch ends (ours by default, BMv2's
``simple_switch_grpc`` on request), pushes the pipeline over P4Runtime, runs ``ptf`` with the
host ends mapped to the same port numbers, and tears everything down even on failure (switch
stopped by PID, veths deleted). Without ``--test-dir`` every suite under ``ptf_tests/`` runs.

A suite is a directory of PTF tests; its program is PROGRAM if given, else the path written in
the suite's ``PROGRAM`` file (relative to the repository root), else the one ``.p4`` file in it.
The switch runs with ports 1..4, CPU port 255 and 8 priority queues per port.
Tests get their parameters through ``--test-params``: ``grpc_addr``, ``device_id``, ``p4info``,
``cpu_port``, ``thrift_port``, ``target``, ``ports`` (see ``ptf_tests/base.py``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from lab.targets import (
    TARGETS,
    TargetUnavailable,
    compile_program,
    free_tcp_port,
    push_pipeline,
    start_switch,
    switch_command,
)
from lab.veth import VethPairs

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEVICE_ID = 1
CPU_PORT = 255
NUM_PORTS = 4
PRIORITY_QUEUES = 8  # simple_switch --priority-queues 8: v1model priority p uses queue p
_RAN = re.compile(r"^Ran (\d+) tests? in ")
_NOT_PASSED = re.compile(r"(?:failures|errors)=(\d+)")
_SKIPPED = re.compile(r"skipped=(\d+)")


def run_ptf(cmd: list[str], cwd: Path) -> tuple[int, int, int]:
    """Run ``ptf``, passing its unittest report (stderr) through while reading the totals from
    it, so that the harness can print one summary across suites: (exit code, passed, failed).
    Skipped tests are neither."""
    ran = not_passed = skipped = 0
    with subprocess.Popen(cmd, cwd=cwd, stderr=subprocess.PIPE, text=True, errors="replace") as proc:
        assert proc.stderr is not None
        for line in proc.stderr:
            sys.stderr.write(line)
            if m := _RAN.match(line):
                ran = int(m.group(1))
            elif line.startswith(("OK (", "FAILED (")):
                not_passed = sum(int(n) for n in _NOT_PASSED.findall(line))
                skipped = sum(int(n) for n in _SKIPPED.findall(line))
    if proc.returncode != 0 and not ran:
        not_passed = max(not_passed, 1)  # ptf failed before running anything: count the suite as one failure
    return proc.returncode, max(0, ran - not_passed - skipped), not_passed


def suite_program(test_dir: Path) -> Path:
    marker = test_dir / "PROGRAM"
    if marker.exists():
        return (REPO / marker.read_text().strip()).resolve()
    programs = sorted(test_dir.glob("*.p4"))
    if len(programs) != 1:
        raise SystemExit(f"{test_dir}: give PROGRAM, or put one .p4 file or a PROGRAM file in the suite")
    return programs[0]


def suites() -> list[Path]:
    return sorted(d for d in HERE.iterdir() if d.is_dir() and any(d.glob("*.py")) and not d.name.startswith("_"))


def run_suite(target: str, test_dir: Path, program: Path, ptf_args: list[str], include_dirs: list[str],
              priority_queues: int, work: Path) -> tuple[int, int, int]:
    """Run one suite: (exit code, tests passed, tests failed)."""
    print(f"=== PTF suite {test_dir.relative_to(REPO) if test_dir.is_relative_to(REPO) else test_dir} "
          f"on {target} with {program.name}", flush=True)
    compiled = compile_program(target, program, work, include_dirs)
    grpc_addr = f"127.0.0.1:{free_tcp_port()}"
    thrift_port = free_tcp_port()
    with VethPairs(NUM_PORTS, prefix="pt") as veths:
        ports = list(range(1, NUM_PORTS + 1))
        print("veth pairs (switch/ptf): " + " ".join(f"{s}/{h}" for s, h in zip(veths.switch_side, veths.host_side)),
              flush=True)
        cmd = switch_command(target, dict(zip(ports, veths.switch_side)), DEVICE_ID, grpc_addr, thrift_port,
                             cpu_port=CPU_PORT, priority_queues=priority_queues)
        switch = start_switch(cmd, grpc_addr, thrift_port, work / "switch.log")
        try:
            switch.wait_ready()
            push_pipeline(grpc_addr, DEVICE_ID, compiled).close()
            params = (f"grpc_addr='{grpc_addr}';device_id={DEVICE_ID};p4info='{compiled.p4info_path}';"
                      f"cpu_port={CPU_PORT};thrift_port={thrift_port};target='{target}';ports={ports!r}")
            ptf_cmd = [str(Path(sys.executable).parent / "ptf"), "--test-dir", str(test_dir), "--pypath", str(REPO),
                       "--test-params", params, "--disable-ipv6", "--allow-user"]
            for port, host in zip(ports, veths.host_side):
                ptf_cmd += ["-i", f"{port}@{host}"]
            rc, passed, failed = run_ptf(ptf_cmd + ptf_args, work)
            if switch.proc.poll() is not None:
                print(f"the switch died during the tests:\n{switch.log_tail()}", file=sys.stderr)
                return 1, passed, max(failed, 1)
            return rc, passed, failed
        finally:
            switch.stop()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ptf_args: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, ptf_args = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(prog="python -m ptf_tests.harness", description=__doc__.split("\n\n")[1])
    ap.add_argument("program", nargs="?", help="P4 program (default: the suite's own)")
    ap.add_argument("--target", choices=TARGETS, default="ours")
    ap.add_argument("--test-dir", action="append", default=None, help="PTF suite directory (repeatable)")
    ap.add_argument("-I", "--include", action="append", default=[], help="include directory for the compiler")
    ap.add_argument("--priority-queues", type=int, default=PRIORITY_QUEUES,
                    help=f"egress queues per port (default {PRIORITY_QUEUES}, as fabric.p4 expects)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, compiled files)")
    args = ap.parse_args(argv)
    dirs = [Path(d).resolve() for d in args.test_dir] if args.test_dir else suites()
    failed = tests_passed = tests_failed = 0
    for test_dir in dirs:
        program = Path(args.program).resolve() if args.program else suite_program(test_dir)
        work = Path(tempfile.mkdtemp(prefix=f"ptf-{test_dir.name}-"))
        try:
            rc, passed, not_passed = run_suite(args.target, test_dir, program, ptf_args, args.include,
                                               args.priority_queues, work)
        except TargetUnavailable as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except (RuntimeError, OSError) as e:  # P4RuntimeError and ConnectionError included
            print(f"error: {e}", file=sys.stderr)
            rc, passed, not_passed = 1, 0, 1
        tests_passed += passed
        tests_failed += not_passed
        if rc != 0:
            failed += 1
            print(f"suite {test_dir.name} failed; logs in {work}", file=sys.stderr)
        elif not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"work directory kept: {work}")
    print(f"{tests_passed} passed, {tests_failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
