"""``netbase.hotpath``: each package's per-packet modules (the clock's and wire formats', the
switch's, the NIC model's, the simulator's) run compiled when built for exactly these sources,
as Python otherwise, and the Python ones (the reference) still pass their package's tests."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from netbase import build_cache
from netbase.hotpath import ROOT, HotPath

PACKAGES = ("netbase", "p4switch", "nicmodel", "fabricsim")
WHERE = "import importlib, sys; print(*(importlib.import_module(m).__file__ for m in sys.argv[1:]))"
TESTS = Path(__file__).parent.parent


def _group(package: str) -> HotPath:
    return importlib.import_module(package).HOTPATH


def _files(modules: tuple[str, ...], env: dict[str, str]) -> list[str]:
    run = subprocess.run([sys.executable, "-c", WHERE, *modules], capture_output=True, text=True,
                         timeout=60, env={**os.environ, **env}, check=True)
    return run.stdout.split()


@pytest.mark.parametrize("package", PACKAGES)
def test_built_modules_replace_the_python_ones(package: str) -> None:
    group = _group(package)
    built = group.build()  # made by make setup: found in the cache
    assert _files(group.modules, {build_cache.BACKEND_ENV: "auto"}) == [
        str(group.extension(built, m)) for m in group.modules]
    assert all(f.endswith(".py") for f in _files(group.modules, {build_cache.BACKEND_ENV: "python"}))


def test_an_edited_module_is_not_shadowed_by_its_old_build(tmp_path: Path) -> None:
    group = _group("p4switch")
    for m in group.modules:
        source = group.source(m).relative_to(ROOT)
        (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / source, tmp_path / source)
    copy = HotPath(group.package, group.modules, root=tmp_path)
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
], ids=PACKAGES[1:])
def test_the_python_modules_pass_their_tests(tests: tuple[str, ...]) -> None:
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not net",
                          *(str(TESTS / t) for t in tests)],
                         capture_output=True, text=True, timeout=900, cwd=ROOT,
                         env={**os.environ, build_cache.BACKEND_ENV: "python"})
    assert run.returncode == 0, run.stdout[-3000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
