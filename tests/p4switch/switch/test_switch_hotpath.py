"""``p4switch.hotpath``: the switch's per-packet modules run compiled when built for exactly
these sources, as Python otherwise, and the Python ones (the reference) still pass the
device's and the traffic manager's tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from p4switch import build_cache, hotpath

WHERE = "import importlib, sys; print(*(importlib.import_module(m).__file__ for m in sys.argv[1:]))"


def _files(env: dict[str, str]) -> list[str]:
    run = subprocess.run([sys.executable, "-c", WHERE, *hotpath.MODULES], capture_output=True, text=True,
                         timeout=60, env={**os.environ, **env}, check=True)
    return run.stdout.split()


def test_built_modules_replace_the_python_ones() -> None:
    built = hotpath.build()  # made by make setup: found in the cache
    env = {build_cache.BACKEND_ENV: "auto"}
    assert _files(env) == [str(built / (m.replace(".", "/") + build_cache.SUFFIX)) for m in hotpath.MODULES]
    assert all(f.endswith(".py") for f in _files({build_cache.BACKEND_ENV: "python"}))


def test_an_edited_module_is_not_shadowed_by_its_old_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for m in hotpath.MODULES:
        source = Path(m.replace(".", "/") + ".py")
        (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(hotpath.ROOT / source, tmp_path / source)
    monkeypatch.setattr(hotpath, "ROOT", tmp_path)
    assert hotpath.build_dir().exists()  # the same bytes: the same build
    with (tmp_path / "p4switch/switch/tm.py").open("a") as f:
        f.write("# edited\n")
    assert not hotpath.build_dir().exists()
    finder = hotpath._Finder()
    assert finder.find_spec("p4switch.switch.tm", None) is None  # imported from the .py
    assert finder.find_spec("p4switch.switch.link", None) is None  # never compiled


def test_the_python_modules_pass_the_device_and_tm_tests() -> None:
    here = Path(__file__).parent
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(here / "test_switch_device.py"), str(here / "test_switch_tm.py")],
                         capture_output=True, text=True, timeout=600, cwd=hotpath.ROOT,
                         env={**os.environ, build_cache.BACKEND_ENV: "python"})
    assert run.returncode == 0, run.stdout[-3000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
