"""The package structure of DESIGN.md, checked on the import graph so it stays true.

Every import statement of the project (module level, inside functions and under
TYPE_CHECKING alike) is read with ``ast``; nothing is imported. The rules:

- no cycles between top-level packages;
- ``p4rt`` (the protocol side every party shares) and ``lab`` (starting targets for tests and
  demos) depend on no package above them, so either target can be driven through them;
- the controller and the PTF tests never import our target (``p4switch``): they talk to ours
  and to BMv2 through the protocols only;
- the NIC's sans-IO core owns no socket and no clock, and reads no files;
- only ``topo`` imports Mininet;
- imports sit at module level, except optional heavy dependencies (Mininet, matplotlib,
  readline), so a dependency is never hidden inside a function.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p.parent.name for p in ROOT.glob("*/__init__.py")) + ["tests"]

# Neutral packages and what each may import from the project.
ALLOWED = {
    "netbase": set(),
    "p4rt": {"netbase"},
    "lab": {"netbase", "p4rt"},
    # the target and the NIC model know nothing of who drives them (live process or simulator)
    "p4switch": {"netbase", "p4rt"},
    "nicmodel": {"netbase"},
    # the virtual-time fabric sits above both, below the controller
    "fabricsim": {"netbase", "p4rt", "p4switch", "nicmodel", "topo"},
}
NO_TARGET_INTERNALS = ("controller", "ptf_tests", "lab", "p4rt")

# The NIC model's drivers own its I/O: the live raw-socket driver, the command line, the
# management API's Unix-socket server. Everything else in nicmodel is the sans-IO core.
NIC_DRIVERS = {"nicmodel/live.py", "nicmodel/cli.py", "nicmodel/mgmt.py"}
# Modules of the core that touch files, and why that is not I/O of the transport core:
NIC_FILE_USERS = {
    "nicmodel/stats.py",  # writes a finished run's records (CSV/JSON export for the driver)
    "nicmodel/workloads.py",  # a user's own flow-size CDF named by path (the built-in ones are
                              # package data, read through importlib.resources)
}
IO_MODULES = {"socket", "socketserver", "select", "selectors", "time"}
OPTIONAL_HEAVY = ("mininet", "matplotlib", "readline", "ptf")


@dataclass(frozen=True)
class Import:
    path: str  # relative to the repository root
    line: int
    module: str  # the module named by the statement
    in_function: bool


def _project_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _imports(path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(), str(path))
    rel = path.relative_to(ROOT).as_posix()
    out: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                out.extend(Import(rel, child.lineno, a.name, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                out.extend(Import(rel, child.lineno, f"{child.module}.{a.name}", in_function) for a in child.names)
            visit(child, inner)

    visit(tree, False)
    return out


ALL = {p.relative_to(ROOT).as_posix(): _imports(p) for p in _project_files()}


def _top(module_or_path: str) -> str:
    return module_or_path.replace("/", ".").split(".")[0]


def package_graph() -> dict[str, dict[str, int]]:
    """Edges between top-level packages with the number of import statements behind each."""
    graph: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for path, imports in ALL.items():
        for imp in imports:
            src, dst = _top(path), _top(imp.module)
            if dst in PACKAGES and dst != src:
                graph[src][dst] += 1
    return graph


def test_the_scan_sees_the_project() -> None:
    assert {"p4rt", "lab", "p4switch", "controller", "nicmodel", "topo", "netbase"} <= set(PACKAGES)
    assert package_graph()["controller"]["p4rt"] > 0  # a rule below that found nothing proves nothing


def test_no_cycles_between_top_level_packages() -> None:
    graph = package_graph()

    def cycle_from(start: str) -> list[str] | None:
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, {}):
                if nxt == start:
                    return path + [start]
                if nxt not in path:
                    stack.append((nxt, path + [nxt]))
        return None

    cycles = {" -> ".join(c) for pkg in PACKAGES if (c := cycle_from(pkg))}
    assert not cycles, f"package cycles: {sorted(cycles)}"


def test_neutral_packages_depend_only_downwards() -> None:
    bad = [f"{imp.path}:{imp.line} imports {imp.module}"
           for path, imports in ALL.items() if _top(path) in ALLOWED
           for imp in imports
           if _top(imp.module) in PACKAGES and _top(imp.module) not in ALLOWED[_top(path)] | {_top(path)}]
    assert not bad, "\n".join(bad)


def test_controller_and_tests_of_any_target_do_not_import_our_target() -> None:
    bad = [f"{imp.path}:{imp.line} imports {imp.module}"
           for path, imports in ALL.items() if _top(path) in NO_TARGET_INTERNALS
           for imp in imports if _top(imp.module) == "p4switch"]
    assert not bad, "\n".join(bad)


def _nic_core() -> list[str]:
    return [p for p in ALL if p.startswith("nicmodel/") and p not in NIC_DRIVERS]


def test_the_nic_core_owns_no_socket_and_no_clock() -> None:
    bad = [f"{imp.path}:{imp.line} imports {imp.module}" for path in _nic_core() for imp in ALL[path]
           if imp.module.split(".")[0] in IO_MODULES]
    assert not bad, "\n".join(bad)


def test_the_nic_core_reads_no_files() -> None:
    bad = []
    for path in _nic_core():
        if path in NIC_FILE_USERS:
            continue
        for node in ast.walk(ast.parse((ROOT / path).read_text())):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if (isinstance(f, ast.Name) and f.id == "open") or \
                    (isinstance(f, ast.Attribute) and f.attr in ("open", "read_text", "read_bytes")
                     and not _reads_package_data(f)):
                bad.append(f"{path}:{node.lineno}")
    assert not bad, "file access in the NIC core: " + ", ".join(bad)


def _reads_package_data(f: ast.Attribute) -> bool:
    """``importlib.resources.files(...)....read_text()``: data shipped inside the package."""
    node: ast.AST = f.value
    while isinstance(node, (ast.Attribute, ast.Call, ast.BinOp)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "files":
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "files":
            return True
        node = node.func if isinstance(node, ast.Call) else node.left if isinstance(node, ast.BinOp) else node.value
    return False


def test_only_topo_imports_mininet() -> None:
    bad = [f"{imp.path}:{imp.line}" for path, imports in ALL.items() for imp in imports
           if imp.module.split(".")[0] == "mininet" and _top(path) not in ("topo", "tests")]
    assert not bad, "Mininet imported outside topo: " + ", ".join(bad)


def test_imports_sit_at_module_level_except_optional_heavy_dependencies() -> None:
    bad = [f"{imp.path}:{imp.line} {imp.module}" for imports in ALL.values() for imp in imports
           if imp.in_function and not imp.module.startswith(OPTIONAL_HEAVY)
           and not _mininet_node(imp.module)]
    assert not bad, "imports inside functions:\n" + "\n".join(bad)


def _mininet_node(module: str) -> bool:
    """topo's Mininet nodes import Mininet at module level, so they load with it."""
    return module.startswith(("topo.p4node", "topo.rnic_host"))


if __name__ == "__main__":  # print the graph: python -m tests.test_architecture
    for src, dsts in sorted(package_graph().items()):
        for dst, n in sorted(dsts.items()):
            print(f"{src:10} -> {dst:10} {n}")
