"""fabricctl commands that need no running switch: help, argument errors, profiles, report."""

from __future__ import annotations

import io
import json
import shlex
from pathlib import Path

import pytest

from controller.cli import COMMANDS, build_parser, main, parse_set
from controller.config_cmd import CURRENT_FILE
from controller.config_file import uniform
from controller.profiles import settings_for
from controller.results import Message, RunResult
from controller.state import FabricState, NicInfo, SwitchInfo
from controller.textfmt import ProgressBar
from fabricctl.main import build_parser as installed_parser
from topo.builder import leaf_spine


@pytest.fixture
def state_file(tmp_path):
    """A state file for a fabric that is not running (nothing listens on its ports)."""
    topo = leaf_spine(grpc_base=1100)
    st = FabricState(topo.to_dict(), "ours", str(tmp_path / "none.p4info.txtpb"), str(tmp_path / "none.json"),
                     {s.name: SwitchInfo(f"127.0.0.1:{s.grpc_port}", s.device_id) for s in topo.switches},
                     {h.name: NicInfo(str(tmp_path / f"{h.name}.sock"), h.ip) for h in topo.hosts},
                     out_dir=str(tmp_path / "out"))
    path = tmp_path / "state.json"
    st.save(path)
    return path


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    assert e.value.code == 0
    assert f"usage: fabricctl {command}" in capsys.readouterr().out


def test_top_level_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    for command in COMMANDS:
        assert command in out


@pytest.mark.parametrize("argv, message", [
    ([], "the following arguments are required: COMMAND"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["run", "ring"], "invalid choice: 'ring'"),
    (["run", "poisson", "--load", "1.5"], "expected a number in (0, 1]"),
    (["run", "incast", "--size", "-4"], "expected a positive integer"),
    (["tables"], "the following arguments are required: SWITCH"),
])
def test_argument_errors_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_no_state_file_is_a_clear_failure(tmp_path, capsys):
    assert main(["--state", str(tmp_path / "missing.json"), "status"]) == 1
    assert "no running fabric: state file" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{\"version\": 99}")
    assert main(["--state", str(tmp_path / "bad.json"), "status"]) == 1
    assert "not a fabric state file" in capsys.readouterr().err


def test_profile_list(capsys):
    assert main(["profile"]) == 0
    out = capsys.readouterr().out
    assert "baseline" in out and "ai-fabric" in out and "HPCC" in out


def test_bad_settings_rejected_before_contacting_switches(state_file, capsys):
    before = state_file.read_text()
    for argv, message in ((["set", "ecn", "pmax=2"], "ecn.pmax: 2.0 is outside 0.0..1.0"),
                          (["set", "ecn", "kmin_bytes"], "expected KEY=VALUE"),
                          (["set", "warp", "x=1"], "unknown section 'warp'"),
                          (["set", "spray", "algo=psychic"], "lb.spray_algo: 'psychic' is not one of"),
                          (["profile", "turbo"], "unknown profile 'turbo'")):
        assert main(["--state", str(state_file), *argv]) == 2, argv
        assert message in capsys.readouterr().err
    assert state_file.read_text() == before  # nothing recorded as applied


def test_drills_that_would_overwrite_a_pending_canary_refuse_before_touching_the_fabric(state_file, capsys):
    """A canary pending on leaf1 and h1_1: the congestion drill (the LB mode of every node) and
    restarting a canary switch are refused, naming the way out; other drills go ahead (and
    here find no fabric)."""
    ns = uniform(leaf_spine(), settings_for("ai-fabric"))
    (state_file.parent / CURRENT_FILE).write_text(json.dumps({"nodes": ns.to_dict(), "canary": ["h1_1", "leaf1"]}))
    for argv in (["congestion", "--into", "leaf2:3"], ["switch-restart", "leaf1"]):
        assert main(["--state", str(state_file), "drill", *argv]) == 2
        err = capsys.readouterr().err
        assert "a canary is pending on h1_1,leaf1" in err and "--promote" in err and "--rollback" in err, err
    main(["--state", str(state_file), "drill", "switch-restart", "spine1"])
    assert "canary" not in capsys.readouterr().err


def test_unknown_switch_for_shell(state_file, capsys):
    assert main(["--state", str(state_file), "shell", "leaf9"]) == 2
    assert "no switch named 'leaf9'" in capsys.readouterr().err


def test_report_from_saved_runs(state_file, tmp_path, capsys):
    runs = tmp_path / "out" / "runs"
    bmv2 = {"busiest link util": "register port_tx_bytes, Thrift register_read",
            "ECN marks": "counter ecn_marks, P4Runtime counter read"}
    for i, profile in enumerate(("baseline", "ai-fabric")):
        RunResult("all-reduce", profile, {}, 100.0 * (i + 1), 4096,
                  [Message("h1_1", "h2_1", 4096, 50.0, 5.0)], sources=bmv2).save(runs / f"00{i}-all-reduce-{profile}.json")
    assert main(["--state", str(state_file), "report"]) == 0
    out = capsys.readouterr().out
    assert "all-reduce/baseline" in out and "all-reduce/ai-fabric" in out
    # the report says where each switch figure was read
    assert "source of busiest link util: register port_tx_bytes, Thrift register_read" in out.splitlines()
    assert "source of ECN marks: counter ecn_marks, P4Runtime counter read" in out.splitlines()
    assert (tmp_path / "out" / "plots" / "fct_cdf.png").stat().st_size > 1000
    bad = tmp_path / "junk.json"
    bad.write_text(json.dumps({"hello": 1}))
    assert main(["report", str(bad)]) == 2
    assert "not a run result" in capsys.readouterr().err


def test_parser_is_complete():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)


def test_missing_pipeline_and_nics_are_clear_failures(state_file, tmp_path, capsys):
    """Commands that need the compiled pipeline or the NICs say what is missing, and exit 1."""
    assert main(["--state", str(state_file), "tables", "leaf1"]) == 1
    assert "the fabric's compiled pipeline is missing" in capsys.readouterr().err
    (tmp_path / "none.p4info.txtpb").write_text("")
    (tmp_path / "none.json").write_text("{}")
    assert main(["--state", str(state_file), "run", "all-to-all"]) == 1
    assert "the NIC of h1_1 does not answer at" in capsys.readouterr().err


def test_readme_cli_examples_are_valid():
    """Every `fabricctl ...` line in README.md parses, and every `set` there is a valid change."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    examples = [line.split("#")[0].strip() for line in readme.splitlines() if line.startswith("fabricctl ")]
    assert len(examples) >= 10
    for line in examples:
        args = installed_parser().parse_args(shlex.split(line)[1:])
        if args.command == "set":
            settings_for("baseline", parse_set(args.section, args.values))
        if args.command == "profile" and args.name:
            settings_for(args.name)


def test_progress_bar_into_a_log_prints_a_line_per_quarter():
    """Not a terminal (CI, `make run > log`): five lines per run, not one per update."""
    out = io.StringIO()
    bar = ProgressBar("all-reduce (baseline)", out)
    for i in range(101):
        bar.update(i / 100, f"{i // 20}s")
    bar.done("5s")
    lines = out.getvalue().splitlines()
    assert [line.split("]")[1].split()[0] for line in lines] == ["0%", "25%", "50%", "75%", "100%"]
    assert lines[-1].startswith("all-reduce (baseline) [" + "#" * 30 + "]")
