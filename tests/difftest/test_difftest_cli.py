"""p4switch-difftest's exit status and messages when it cannot run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from difftest.cli import main

PROGRAMS = Path(__file__).parent / "programs"


def test_a_missing_p4c_is_named(monkeypatch, tmp_path, capsys) -> None:
    (tmp_path / "cpp").symlink_to(shutil.which("cpp"))  # our front end's preprocessor, and no p4c
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main([str(PROGRAMS / "hits.p4"), "--count", "5"]) == 2
    assert "p4c" in capsys.readouterr().err


def test_a_program_our_front_end_refuses_is_a_tool_error(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <v1model.p4>\ncontrol C() { apply { x = 1; } }\n")
    assert main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert "our front end refuses the program" in err and "bad.p4:2:" in err


@pytest.mark.parametrize("args", [["--count", "0"], ["--ports", "1,x"], ["--ports", "600"], ["--settle", "0"]])
def test_usage_errors_exit_2(args, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main([str(PROGRAMS / "hits.p4"), *args])
    assert e.value.code == 2


def test_a_missing_bmv2_json_is_named(tmp_path, capsys) -> None:
    assert main([str(PROGRAMS / "hits.p4"), "--bmv2-json", str(tmp_path / "none.json")]) == 2
    assert "none.json: no such file" in capsys.readouterr().err


def test_a_program_our_executor_cannot_run_is_a_tool_error(tmp_path, capsys) -> None:
    prog = tmp_path / "vs.p4"
    prog.write_text("""#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct s_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    value_set<s_t>(4) pvs;
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a, hdr.h.b) { pvs: accept; default: reject; }
    }
}
control C(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
""")
    assert main([str(prog)]) == 2
    err = capsys.readouterr().err
    assert "our target cannot run the program" in err and "value_set of a struct type" in err
