"""The STF runner reports mismatches with both packets and fails; the CLI exits non-zero."""

import io
from pathlib import Path

import pytest

from p4rt.entries import Exact
from p4switch.exec import LoadedProgram
from p4switch.stf import StfError, run_stf
from p4switch.stf.cli import main

PROG = Path(__file__).parent / "programs" / "basic_l3.p4"
ROUTE = "add ipv4_lpm hdr.ipv4.dstAddr:0x0A000100/24 ipv4_forward(dstAddr:0xAA, port:1)\n"
PKT = "00000000000100000000000208004500002100010000401165C60A0000010A00010504D20050000DA1DA68656C6C6F"
OUT = "0000000000AA000000000001080045000021000100003F1166C60A0000010A00010504D20050000DA1DA68656C6C6F"


def run(text: str):
    out = io.StringIO()
    res = run_stf(LoadedProgram.from_file(PROG), text, out)
    return res, out.getvalue()


def test_wrong_bytes_are_reported_with_both_packets():
    bad = OUT[:-2] + "00"
    res, text = run(ROUTE + f"packet 0 {PKT}\nexpect 1 {bad}\n")
    assert not res.ok
    assert bad in text and OUT in text


def test_prefix_match_and_dollar():
    res, _ = run(ROUTE + f"packet 0 {PKT}\nexpect 1 {OUT[:40]}\n")
    assert res.ok
    res, _ = run(ROUTE + f"packet 0 {PKT}\nexpect 1 {OUT[:40]}$\n")
    assert not res.ok


def test_missing_and_unexpected_packets_fail():
    res, text = run(f"packet 0 {PKT}\nexpect 1 {OUT}\n")  # no route: nothing comes out
    assert not res.ok and "not received" in text
    res, text = run(ROUTE + f"packet 0 {PKT}\npacket 0 {PKT}\nexpect 1 {OUT}\n")
    assert not res.ok and "unexpected packet on port 1" in text


def test_ports_no_line_names_are_not_observed():
    # As under p4c's STF driver, where BMv2 only has interfaces for the ports the file names.
    res, _ = run(ROUTE + f"packet 0 {PKT}\n")
    assert res.ok and res.packets_received == 1
    res, text = run(ROUTE + f"packet 0 {PKT}\nexpect 1\n" + f"packet 0 {PKT}\nexpect 0\n")
    assert res.ok


def test_cli_exit_status(tmp_path, capsys):
    good = tmp_path / "good.stf"
    good.write_text(ROUTE + f"packet 0 {PKT}\nexpect 1 {OUT}$\n")
    bad = tmp_path / "bad.stf"
    bad.write_text(ROUTE + f"packet 0 {PKT}\nexpect 2 {OUT}$\n")
    assert main([str(PROG), str(good)]) == 0
    assert main([str(PROG), str(bad)]) == 1
    broken = tmp_path / "broken.stf"
    broken.write_text("add no_such_table k:1 a()\n")
    assert main([str(PROG), str(broken)]) == 2
    assert "no_such_table" in capsys.readouterr().err


def test_cli_reports_program_errors_with_position(tmp_path, capsys):
    bad = tmp_path / "bad.p4"
    bad.write_text(PROG.read_text().replace("hdr.ipv4.ttl - 1;", "hdr.ipv4.ttl - ;"))
    stf = tmp_path / "t.stf"
    stf.write_text("")
    assert main([str(bad), str(stf)]) == 2
    err = capsys.readouterr().err
    assert "bad.p4:" in err and "error" in err and "Traceback" not in err


def test_short_table_names_must_be_unambiguous():
    prog = LoadedProgram.from_file(PROG.parent / "language.p4")
    assert prog.table("add16.t").name == "I.add16.t"
    with pytest.raises(StfError, match="ambiguous"):
        run_stf(prog, "setdefault t add()\n", io.StringIO())


def test_add_with_a_validity_key_and_spaces_in_the_action():
    prog = LoadedProgram.from_file(PROG.parent / "misc_features.p4")
    text = ("add vk hdr.ab.a.isValid():1 touch( )\n"
            "packet 0 02 80 00 00 00\n"
            "expect 1 02 80 00 99 DF AA $\n")
    res = run_stf(prog, text, io.StringIO())
    assert res.ok
    assert [e.match for e in prog.table("vk").entries()] == [{"hdr.ab.a.$valid$": Exact(1)}]  # p4c's key name


def test_cli_prints_stats_and_dumps_the_generated_code(tmp_path, capsys):
    stf = tmp_path / "t.stf"
    stf.write_text(ROUTE + f"packet 0 {PKT}\nexpect 1 {OUT}$\npacket 0 00\n")
    dump = tmp_path / "gen.py"
    assert main([str(PROG), str(stf), "--stats", "--dump-python", str(dump)]) == 0
    out = capsys.readouterr().out
    assert "packets_in: 2" in out and "parser_error_PacketTooShort: 1" in out
    assert "def " in dump.read_text()


@pytest.mark.parametrize("line", ["register_write only_a_name\n", "mc_node_associate 1\n", "packet\n"])
def test_malformed_lines_are_stf_errors_with_the_line_number(line):
    with pytest.raises(StfError) as info:
        run(ROUTE + line)
    assert info.value.lineno == 2


def test_direct_counter_read_by_index_is_a_clear_error():
    prog = LoadedProgram.from_file(Path(__file__).parent / "programs" / "stateful.p4")
    with pytest.raises(StfError, match="direct counter"):
        run_stf(prog, "counter_read dctr 0\n", io.StringIO())


def test_action_named_by_its_local_name_even_when_another_ends_the_same():
    prog = LoadedProgram.from_file(Path(__file__).parent / "programs" / "action_suffixes.p4")
    res = run_stf(prog, "add t hdr.h.k:5 forward(port:3)\npacket 0 05 00\nexpect 3 05 01 $\n", io.StringIO())
    assert res.ok, res.failures


def test_check_counter_without_condition_and_counters_left_unchecked_as_by_p4c():
    """p4c's grammar allows `check_counter c(i)` with no condition; its BMv2 driver ignores
    check_counter altogether, which check_counters=False reproduces (mismatches become notes)."""
    prog = LoadedProgram.from_file(Path(__file__).parent / "programs" / "stateful.p4")
    text = "add fwd hdr.ctl.op:2 set_port(port:2)\npacket 0 02 03 00000000 00 00\n"
    assert run_stf(prog, text + "check_counter ctr(3)\n", io.StringIO()).ok
    wrong = text + "check_counter ctr(3) packets == 7\n"
    assert not run_stf(LoadedProgram.from_file(prog.checked.filename), wrong, io.StringIO()).ok
    res = run_stf(LoadedProgram.from_file(prog.checked.filename), wrong, io.StringIO(), check_counters=False)
    assert res.ok and res.notes == ["line 3: counter I.ctr[3] packets is 1, expected 7"]


@pytest.mark.parametrize("key", ["hdr.ab.a.isValid()", "hdr.ab.a.$valid", "hdr.ab.a.valid", "hdr.ab.a"])
def test_validity_key_spellings_of_stf_files(key):
    """As p4c's bmv2stf.py: a validity key may be named hdr.$valid, hdr.valid or just hdr."""
    prog = LoadedProgram.from_file(PROG.parent / "misc_features.p4")
    res = run_stf(prog, f"add vk {key}:1 touch()\npacket 0 02 80 00 00 00\nexpect 1 02 80 00 99 DF AA $\n",
                  io.StringIO())
    assert res.ok, res.failures
