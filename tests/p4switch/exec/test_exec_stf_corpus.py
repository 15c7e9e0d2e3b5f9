"""``python -m p4switch.stf.corpus``: finds a corpus' v1model STF tests the way p4c lays
them out, runs each in a worker and tells pass, fail, error and crash apart."""

import shutil
import subprocess
import sys
from pathlib import Path

from p4switch.exec import LoadedProgram
from p4switch.stf import corpus

CONF = Path(__file__).parents[1] / "frontend" / "conformance"


def _corpus(tmp_path: Path) -> Path:
    """A tiny testdata tree: a passing test, a failing one, a refused program, a P4_14
    translation, a program of another architecture (not an STF test of v1model)."""
    td = tmp_path / "testdata"
    s16, s14, o14, err = (td / d for d in ("p4_16_samples", "p4_14_samples", "p4_14_samples_outputs",
                                           "p4_16_errors"))
    for d in (s16, s14, o14, err):
        d.mkdir(parents=True)
    shutil.copy(CONF / "empty_actions.p4", s16 / "good-bmv2.p4")
    shutil.copy(CONF / "empty_actions.stf", s16 / "good-bmv2.stf")
    shutil.copy(CONF / "empty_actions.p4", s16 / "wrong-bmv2.p4")
    (s16 / "wrong-bmv2.stf").write_text("packet 0 05 00\nexpect 1 05 04$\n")
    (s16 / "broken-bmv2.p4").write_text("#include <v1model.p4>\ncontrol c( {\n")
    (s16 / "broken-bmv2.stf").write_text("packet 0 00\n")
    shutil.copy(CONF / "empty_actions.p4", o14 / "old-frontend.p4")
    shutil.copy(CONF / "empty_actions.stf", s14 / "old.stf")
    (s16 / "other.p4").write_text("control c(inout bit<8> x) { apply { x = x + 1; } }\n")
    (s16 / "other.stf").write_text("packet 0 00\n")
    (err / "bad.p4").write_text("control c(inout bit<8> x) { apply { x = y; } }\n")
    return td


def test_stf_mode_reports_each_test_and_a_summary(tmp_path):
    td = _corpus(tmp_path)
    assert [j.name for j in corpus.stf_jobs(tmp_path)] == ["broken-bmv2", "good-bmv2", "wrong-bmv2", "p4_14/old"]
    run = subprocess.run([sys.executable, "-m", "p4switch.stf.corpus", "-j", "2", str(td)],
                         capture_output=True, text=True, timeout=300)
    lines = run.stdout.splitlines()
    assert run.returncode == 1
    assert {ln.split()[1]: ln.split()[0] for ln in lines if ln and not ln.startswith((" ", "4 "))} == {
        "good-bmv2": "pass", "wrong-bmv2": "fail", "broken-bmv2": "error", "p4_14/old": "pass"}
    assert "broken-bmv2.p4:2:12: error: syntax error" in run.stdout  # the diagnostic, with its position
    assert lines[-1] == "4 programs: 2 pass, 1 fail, 1 error, 0 crash, 0 timeout"


def test_frontend_mode_compiles_every_sample_and_error_program(tmp_path):
    run = subprocess.run([sys.executable, "-m", "p4switch.stf.corpus", "--frontend", str(_corpus(tmp_path))],
                         capture_output=True, text=True, timeout=300)
    assert "diagnostic (p4c accepts) broken-bmv2" in run.stdout
    assert "diagnostic errors/bad" in run.stdout
    assert run.stdout.splitlines()[-1] == ("p4_16_samples: 3 of 4 accepted; "
                                           "p4_16_errors: 1 of 1 refused")


def test_a_python_exception_is_a_crash_with_its_traceback(tmp_path, monkeypatch):
    td = _corpus(tmp_path)

    def broken(checked):
        raise AttributeError("'NoneType' object has no attribute 'type'")

    monkeypatch.setattr(LoadedProgram, "from_checked", broken)
    res = corpus.run_one(corpus.Job("good", str(td / "p4_16_samples" / "good-bmv2.p4"),
                                    str(td / "p4_16_samples" / "good-bmv2.stf")))
    assert res["status"] == "crash"
    assert res["detail"].startswith("Traceback") and "AttributeError" in res["detail"]
