"""``netbase.hotpath``: the per-packet modules (the clock's and wire formats', the switch's, the
NIC model's, the simulator's, P4Runtime's wire encoding) run compiled, as one build, when built for exactly these sources,
as Python otherwise, and the Python ones (the reference) still pass their package's tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from netbase import build_cache
from netbase.hotpath import DATA_PATH, ROOT, HotPath

WHERE = "import importlib, sys; print(*(importlib.import_module(m).__file__ for m in sys.argv[1:]))"
TESTS = Path(__file__).parent.parent


def _files(modules: tuple[str, ...], env: dict[str, str]) -> list[str]:
    run = subprocess.run([sys.executable, "-c", WHERE, *modules], capture_output=True, text=True,
                         timeout=60, env={**os.environ, **env}, check=True)
    return run.stdout.split()


def test_built_modules_replace_the_python_ones() -> None:
    built = DATA_PATH.build()  # made by make setup: found in the cache
    assert {m.split(".")[0] for m in DATA_PATH.modules} == {"netbase", "p4switch", "nicmodel", "fabricsim", "p4rt",
                                                            "controller"}
    assert _files(DATA_PATH.modules, {build_cache.BACKEND_ENV: "auto"}) == [
        str(DATA_PATH.extension(built, m)) for m in DATA_PATH.modules]
    assert all(f.endswith(".py") for f in _files(DATA_PATH.modules, {build_cache.BACKEND_ENV: "python"}))


@pytest.mark.parametrize("first", ["p4switch.switch.device", "nicmodel.nic", "fabricsim.host", "p4rt.wire",
                                   "controller.int_reports"])
def test_a_module_imported_first_comes_from_the_build(first: str) -> None:
    """Whichever package a process imports first, its modules come from the one build (netbase's
    finder is in place before them), so a call between packages is a call between native classes."""
    built = DATA_PATH.build()
    assert _files((first, "netbase.clock"), {build_cache.BACKEND_ENV: "auto"}) == [
        str(DATA_PATH.extension(built, m)) for m in (first, "netbase.clock")]


def test_an_edited_module_is_not_shadowed_by_its_old_build(tmp_path: Path) -> None:
    group = DATA_PATH
    for m in group.modules:
        source = group.source(m).relative_to(ROOT)
        (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / source, tmp_path / source)
    copy = HotPath(group.modules, root=tmp_path)
    assert copy.build_dir() == group.build_dir() and copy.build_dir().exists()  # the same bytes: the same build
    with (tmp_path / "p4switch/switch/tm.py").open("a") as f:
        f.write("# edited\n")
    assert not copy.build_dir().exists()
    assert copy.find_spec("p4switch.switch.tm", None) is None  # imported from the .py
    assert group.find_spec("p4switch.switch.link", None) is None  # never compiled


# each runs netbase's modules (the clock, pause frames, checksums) as Python too
@pytest.mark.parametrize("tests", [
    ("p4switch/switch/test_switch_device.py", "p4switch/switch/test_switch_tm.py"),
    ("nicmodel",),
    ("fabricsim/test_fsim_fabric.py", "fabricsim/test_fsim_spray_reorder.py"),
    ("p4switch/p4runtime/test_p4rt_wire.py",),
], ids=["p4switch", "nicmodel", "fabricsim", "p4rt"])
def test_the_python_modules_pass_their_tests(tests: tuple[str, ...]) -> None:
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not net",
                          *(str(TESTS / t) for t in tests)],
                         capture_output=True, text=True, timeout=900, cwd=ROOT,
                         env={**os.environ, build_cache.BACKEND_ENV: "python"})
    assert run.returncode == 0, run.stdout[-3000:]
    assert " passed" in run.stdout and " failed" not in run.stdout


def test_a_copy_of_some_of_the_packages_runs_as_python(tmp_path: Path) -> None:
    """An installed or copied package without the others (nicmodel and netbase alone): the
    build's modules expect each other's native classes, so none is imported from it."""
    for m in DATA_PATH.modules:
        if m.startswith(("netbase.", "nicmodel.")):
            source = DATA_PATH.source(m).relative_to(ROOT)
            (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / source, tmp_path / source)
    copy = HotPath(DATA_PATH.modules, root=tmp_path)
    assert not copy.complete() and DATA_PATH.complete()
    assert copy.find_spec("nicmodel.nic", None) is None
