"""``p4switch-compile``: outputs like p4c, errors as file:line:col without a traceback."""

import json
import subprocess
import sys
from pathlib import Path

from google.protobuf import json_format
from p4.config.v1 import p4info_pb2

from p4switch.compile_cli import main
from p4switch.p4info.device_config import decode

HERE = Path(__file__).parent
BASIC = HERE / "programs" / "basic_l3.p4"


def test_writes_device_config_and_p4info_in_every_format(tmp_path):
    txt, js, binary, out = (tmp_path / n for n in ("p.p4info.txtpb", "p.p4info.json", "p.p4info.bin", "p.json"))
    assert main([str(BASIC), "--target", "bmv2", "--arch", "v1model",
                 "--p4runtime-files", f"{txt},{js},{binary}", "-o", str(out)]) == 0
    assert txt.read_text() == (HERE / "golden" / "basic_l3.p4info.txtpb").read_text()
    from_bin = p4info_pb2.P4Info.FromString(binary.read_bytes())
    from_json = json_format.Parse(js.read_text(), p4info_pb2.P4Info())
    assert from_bin == from_json and from_bin.tables[0].preamble.name == "MyIngress.ipv4_lpm"
    cfg = decode(out.read_bytes())
    assert cfg.name == "basic_l3.p4" and "ipv4_lpm" in cfg.source


def test_output_directory_gets_program_named_json(tmp_path):
    assert main([str(BASIC), "-o", str(tmp_path) + "/"]) == 0
    assert json.loads((tmp_path / "basic_l3.json").read_text())["target"] == "p4switch"


def test_defines_and_include_dirs(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "sizes.p4").write_text("#define ROUTES 77\n")
    prog = tmp_path / "prog.p4"
    prog.write_text(BASIC.read_text().replace("#include <v1model.p4>", "#include <v1model.p4>\n#include \"sizes.p4\"")
                    .replace("size = 1024;", "#ifdef BIG\n size = ROUTES;\n#endif"))
    txt = tmp_path / "p.txtpb"
    assert main([str(prog), "-I", str(tmp_path / "inc"), "-D", "BIG", "--p4runtime-files", str(txt),
                 "-o", str(tmp_path / "p.json")]) == 0
    assert "size: 77" in txt.read_text()


def test_errors_are_located_and_exit_1(tmp_path, capsys):
    bad = tmp_path / "bad.p4"
    bad.write_text(BASIC.read_text().replace("bit<16>   etherType;", "bit<16>   etherType"))
    assert main([str(bad), "-o", str(tmp_path / "bad.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:") and ": error: " in err and "Traceback" not in err
    assert not (tmp_path / "bad.json").exists()
    assert main([str(BASIC), "--p4runtime-files", str(tmp_path / "x.yaml"), "-o", str(tmp_path / "x.json")]) == 1
    assert "known suffixes" in capsys.readouterr().err


def test_console_script_runs_as_a_process(tmp_path):
    missing = tmp_path / "missing.p4"
    proc = subprocess.run([sys.executable, "-m", "p4switch.compile_cli", str(missing)], capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "missing.p4" in proc.stderr


def test_an_unknown_p4info_suffix_writes_nothing(tmp_path, capsys):
    good, bad = tmp_path / "p.p4info.txtpb", tmp_path / "p.p4info.yaml"
    assert main([str(BASIC), "--p4runtime-files", f"{good},{bad}", "-o", str(tmp_path / "p.json")]) == 1
    assert "p.p4info.yaml" in capsys.readouterr().err
    assert not good.exists() and not (tmp_path / "p.json").exists()
