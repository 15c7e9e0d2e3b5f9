"""The NIC's transport core is sans-IO: no module of it imports sockets, select, clocks,
threads or subprocesses, and none opens files. Drivers (live.py, the simulator, the CLI,
the management API, workloads) do the I/O; this keeps it that way."""

from __future__ import annotations

import ast
from pathlib import Path

import nicmodel

CORE = ["actions", "counters", "int_md", "loss_detection", "nic", "psn", "qp", "requester",
        "responder", "roce", "verbs", "cc/__init__", "cc/base", "cc/dcqcn", "cc/hpcc",
        "cc/timely"]
FORBIDDEN = {"socket", "select", "selectors", "time", "datetime", "threading", "asyncio",
             "subprocess", "os", "pathlib", "io", "shutil", "random"}


def violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bad += [a.name for a in node.names if a.name.split(".")[0] in FORBIDDEN]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in FORBIDDEN:
                bad.append(node.module)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "open":
                bad.append(f"open() at line {node.lineno}")
    return bad


def test_the_core_modules_do_no_io():
    root = Path(nicmodel.__file__).parent
    found = {name: violations(root / f"{name}.py") for name in CORE}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_check_sees_a_forbidden_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import time\nfrom socket import socket\nopen('x')\n")
    assert violations(probe) == ["time", "socket", "open() at line 3"]
