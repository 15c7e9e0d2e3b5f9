"""Every P4 program in programs/ runs its STF file(s) on our target with exact output bytes,
with each backend: the generated Python run as it is, and compiled by mypyc (``native.py``).

``NAME.stf`` (and ``NAME.*.stf``) belong to ``NAME.p4``."""

import io
from pathlib import Path

import pytest

from p4switch.exec import LoadedProgram
from p4switch.stf import run_stf_file

pytestmark = pytest.mark.slow  # the whole STF corpus through the executor

HERE = Path(__file__).parent / "programs"
STFS = sorted(HERE.glob("*.stf"))


def _program(stf: Path) -> Path:
    return HERE / (stf.name.split(".")[0] + ".p4")


@pytest.mark.parametrize("backend", ["python", "mypyc"])
@pytest.mark.parametrize("stf", STFS, ids=[s.name for s in STFS])
def test_stf(stf: Path, backend: str, monkeypatch):
    monkeypatch.setenv("P4SWITCH_BACKEND", backend)
    prog = LoadedProgram.from_file(_program(stf))
    assert prog.compiled.backend == backend
    out = io.StringIO()
    res = run_stf_file(prog, stf, out)
    assert res.ok, out.getvalue()
    assert res.packets_sent > 0


def test_library_covers_many_programs():
    assert len({_program(s) for s in STFS}) >= 8
