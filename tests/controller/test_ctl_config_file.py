"""Configuration as code on the virtual-time fabric: the diff names what changes per switch
and NIC, a canary apply touches only the canary set (read back from the switches), rollback
restores byte-identical reads, and a bad file or a failed write leaves the fabric as it was."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from controller import config_file as cf
from controller.cli import main
from controller.controller import FabricController
from controller.profiles import settings_for
from controller.settings import SettingsError
from controller.state import FabricState, SwitchInfo
from fabricsim.fabric import P4Fabric
from p4rt.errors import P4RuntimeError
from topo.builder import leaf_spine

CONFIG = """
profile: baseline
overrides:
  ecn: {kmin_bytes: 10000}
switches:
  leaf1: {pfc: {xoff_bytes: 60000}}
nics:
  h1_1: {nic: {cc: hpcc, reliability: sr}}
"""


@pytest.fixture
def fabric(fabric_pipeline):
    topo = leaf_spine(2, 2, 2)
    fab = P4Fabric(topo)
    ctl = FabricController(topo, fabric_pipeline, settings_for("baseline"), nics=fab.nics, profile="baseline",
                           connection=fab.connection)
    ctl.start()
    yield topo, fab, ctl
    ctl.close()


def _reads(ctl) -> dict[str, bytes]:
    """Every switch's table entries, action profile members and groups and clone sessions as
    the switch returns them over P4Runtime, serialised."""
    out = {}
    for sw, conn in ctl.conns.items():
        wildcards = [p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()),
                     p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()),
                     p4runtime_pb2.Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup())]
        sessions = p4runtime_pb2.Entity()
        sessions.packet_replication_engine_entry.clone_session_entry.session_id = 0
        read = [e.SerializeToString(deterministic=True) for e in conn.read([*wildcards, sessions])]
        defaults = [e.SerializeToString(deterministic=True) for t in ctl.installed[sw].defaults
                    for e in ctl.read_table(sw, t, default=True)]
        out[sw] = b"".join(sorted(read)) + b"".join(defaults)
    return out


def _nic_cc(fab) -> dict[str, str]:
    return {h: nic.settings.cc for h, nic in fab.nics.items()}


def test_diff_names_changed_entries_and_nic_settings(fabric) -> None:
    topo, _, ctl = fabric
    cfg = cf.parse_config(CONFIG, topo)
    current = cf.uniform(topo, settings_for("baseline"))
    text = "\n".join(cf.describe_diff(ctl, current, cf.target(current, cfg, None)))
    assert "leaf1:" in text and "~ " in text
    assert "h1_1: 2 NIC setting(s) changed" in text
    assert "cc: 'dcqcn' -> 'hpcc'" in text
    assert "h2_2: unchanged" in text


def test_canary_changes_only_the_canary_set_and_rollback_is_exact(fabric, tmp_path) -> None:
    topo, fab, ctl = fabric
    cfg = cf.parse_config(CONFIG, topo)
    current = cf.uniform(topo, settings_for("baseline"))
    before = _reads(ctl)
    nics_before = _nic_cc(fab)
    cf.save_previous(tmp_path, current)
    new = cf.target(current, cfg, {"leaf1", "h1_1"})
    assert cf.apply_settings(ctl, current, new) > 0
    after = _reads(ctl)
    assert after["leaf1"] != before["leaf1"]
    assert all(after[sw] == before[sw] for sw in after if sw != "leaf1")
    assert _nic_cc(fab) == {**nics_before, "h1_1": "hpcc"}
    # promote, then roll back to the saved state
    cf.apply_settings(ctl, new, cf.target(current, cfg, None))
    assert all(_reads(ctl)[sw] != before[sw] for sw in ("leaf1", "leaf2"))
    cf.apply_settings(ctl, cf.target(current, cfg, None), cf.load_previous(tmp_path)[0])
    assert _reads(ctl) == before
    assert _nic_cc(fab) == nics_before


@pytest.mark.parametrize("text, key", [
    ("profile: baseline\noverrides: {pfc: {xoff_bytes: -1}}\n", "pfc.xoff_bytes"),
    ("profile: nope\n", "unknown profile"),
    ("profile: baseline\nswitches: {leaf9: {}}\n", "switches.leaf9"),
    ("profile: baseline\nnics: {h1_1: {nic: {cc: bogus}}}\n", "nics.h1_1"),
    ("profile: baseline\nextra: 1\n", "'extra'"),
])
def test_a_bad_file_is_refused_naming_the_key_and_changes_nothing(fabric, text, key) -> None:
    topo, _, ctl = fabric
    before = _reads(ctl)
    with pytest.raises(SettingsError, match=key):
        cf.parse_config(text, topo)
    assert _reads(ctl) == before


def test_a_write_failing_mid_apply_leaves_the_previous_state(fabric) -> None:
    topo, fab, ctl = fabric
    cfg = cf.parse_config(CONFIG, topo)
    current = cf.uniform(topo, settings_for("baseline"))
    before = _reads(ctl)
    nics_before = _nic_cc(fab)
    victim = list(ctl.conns)[-1]  # every other switch is written before it fails
    real_write = ctl.conns[victim].write

    def failing(updates):  # once: half the batch goes in, then the switch refuses
        ctl.conns[victim].write = real_write
        real_write(updates[: len(updates) // 2])
        raise P4RuntimeError(grpc.StatusCode.UNKNOWN, "Write failed")

    ctl.conns[victim].write = failing
    with pytest.raises(P4RuntimeError):
        cf.apply_settings(ctl, current, cf.target(current, cfg, None))
    assert _reads(ctl) == before
    assert _nic_cc(fab) == nics_before


def test_fabricctl_sim_canary_compare_and_rollback(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fabric.yaml").write_text(CONFIG)
    rc = main(["apply", "fabric.yaml", "--sim", "--topology", "leafspine:2x2x2", "--canary", "leaf1,h1_1",
               "--compare", "all-reduce", "--size", "65536", "--rollback"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "leaf1: 8 change(s)" in out and "leaf2: unchanged" in out
    assert "applied to leaf1,h1_1: 8 switch updates written" in out
    assert "canary (h1_1,h1_2) against the rest" in out  # h1_2 is below the canary leaf
    assert "rolled back: 8 switch updates written" in out


def test_fabricctl_bad_file_exits_2_naming_the_key(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("profile: baseline\nswitches:\n  leaf1: {pfc: {xon_bytes: 90000}}\n")
    assert main(["diff", str(bad), "--sim"]) == 2
    assert "switches.leaf1: pfc.xon_bytes" in capsys.readouterr().err


@pytest.mark.net  # switch processes
def test_fabricctl_live_canary_promote_rollback(fabric_pipeline, switches, tmp_path, capsys) -> None:
    topo = leaf_spine(2, 2, 1)
    switches(topo)
    ctl = FabricController(topo, fabric_pipeline, settings_for("baseline"), profile="baseline")
    ctl.start()
    try:
        state = tmp_path / "state.json"
        FabricState(topo.to_dict(), "ours", str(fabric_pipeline.p4info_path), str(fabric_pipeline.config_path),
                    {s.name: SwitchInfo(f"127.0.0.1:{s.grpc_port}", s.device_id) for s in topo.switches},
                    {}, profile="baseline").save(state)
        (tmp_path / "fabric.yaml").write_text(CONFIG)
        cli = ["--state", str(state), "apply", str(tmp_path / "fabric.yaml")]
        before = _reads(ctl)
        assert main(["--state", str(state), "diff", str(tmp_path / "fabric.yaml"), "--canary", "leaf1"]) == 0
        assert "leaf1: 6 change(s)" in capsys.readouterr().out  # 1 host per leaf: 3 ports
        assert main([*cli, "--canary", "leaf1"]) == 0
        canary = _reads(ctl)
        assert canary["leaf1"] != before["leaf1"] and all(canary[s] == before[s] for s in canary if s != "leaf1")
        assert main([*cli, "--promote"]) == 0
        assert all(v != before[k] for k, v in _reads(ctl).items() if k.startswith("leaf"))
        assert main([*cli, "--rollback"]) == 0
        assert _reads(ctl) == before
        assert FabricState.load(state).profile == "baseline"
    finally:
        ctl.close()
