"""fabricctl against running switches (our target, no ports): output, exit codes, and that a
rejected command leaves the switches exactly as they were."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from controller.cli import main
from controller.controller import FabricController
from controller.profiles import settings_for
from controller.state import FabricState, SwitchInfo
from topo.builder import leaf_spine

pytestmark = pytest.mark.net  # switch processes


@pytest.fixture(scope="module")
def controlled(fabric_pipeline, switches):
    """2 spines x 2 leaves x 1 host with baseline installed by a fabric controller (per module)."""
    topo = leaf_spine(2, 2, 1)
    switches(topo)
    ctl = FabricController(topo, fabric_pipeline, settings_for("baseline"), profile="baseline")
    ctl.start()
    yield topo, ctl
    ctl.close()


@pytest.fixture
def fabric(controlled, fabric_pipeline, tmp_path):
    """The module's fabric at baseline, with a fresh state file; put back to baseline after the test."""
    topo, ctl = controlled
    st = FabricState(topo.to_dict(), "ours", str(fabric_pipeline.p4info_path), str(fabric_pipeline.config_path),
                     {s.name: SwitchInfo(f"127.0.0.1:{s.grpc_port}", s.device_id) for s in topo.switches},
                     {}, profile="baseline", out_dir=str(tmp_path / "out"))
    path = tmp_path / "state.json"
    st.save(path)
    yield topo, ctl, path
    after = FabricState.load(path)
    ctl.adopt(settings_for(after.profile, after.overrides))  # what the CLI left on the switches
    ctl.apply(settings_for("baseline"), "baseline")


def _dump(ctl: FabricController) -> dict[str, list[bytes]]:
    """Every table entry of every switch, serialized, as the switches report them."""
    out = {}
    for name in ctl.conns:
        out[name] = sorted(pb.SerializeToString(deterministic=True)
                           for t in ctl.p4.names("tables") for pb in ctl.read_table(name, t))
    return out


def test_status(fabric, capsys):
    topo, _, state = fabric
    assert main(["--state", str(state), "status"]) == 0
    out = capsys.readouterr().out
    assert "profile baseline" in out
    for s in topo.switches:
        line = next(line for line in out.splitlines() if line.startswith(s.name + " "))
        assert " up " in line and line.rstrip().endswith("fabric.p4  in sync")
    assert "leaf1:2" in out and "spine1:1" in out  # links
    # the state file claims ai-fabric, the switches hold baseline: status shows the drift
    st = FabricState.load(state)
    st.profile = "ai-fabric"
    st.save(state)
    assert main(["--state", str(state), "status"]) == 0
    out = capsys.readouterr().out
    assert "DIFFERS (" in next(line for line in out.splitlines() if line.startswith("leaf1 "))
    st.profile = "baseline"
    st.save(state)


def test_tables_counters_registers(fabric, capsys):
    _, _, state = fabric
    assert main(["--state", str(state), "tables", "leaf1", "--name", "FabricIngress.routing.routing_v4"]) == 0
    out = capsys.readouterr().out
    assert "FabricIngress.routing.routing_v4: 2 entries" in out
    assert "route_to_port(port=1)" in out and "10.2.0.0/16" in out
    assert main(["--state", str(state), "tables", "leaf1"]) == 0
    out = capsys.readouterr().out
    assert "group 1: 2: FabricIngress.routing.set_egress_port(port=2), 3: FabricIngress.routing.set_egress_port(port=3)" in out
    assert main(["--state", str(state), "counters", "leaf1", "--name", "FabricEgress.ecn.ecn_marks"]) == 0
    assert "FabricEgress.ecn.ecn_marks: 0 non-zero cells" in capsys.readouterr().out
    assert main(["--state", str(state), "registers", "spine1", "--name", "port_tx_bytes", "--all"]) == 0
    assert "port_tx_bytes: 512 cells" in capsys.readouterr().out


def test_bad_reads_exit_2(fabric, capsys):
    _, _, state = fabric
    assert main(["--state", str(state), "tables", "leaf7"]) == 2
    assert "no switch named 'leaf7'" in capsys.readouterr().err
    assert main(["--state", str(state), "counters", "leaf1", "--name", "nope"]) == 2
    assert "has no counter 'nope'" in capsys.readouterr().err


def test_set_and_profile_change_switches_and_bad_ones_do_not(fabric, capsys):
    _, ctl, state = fabric
    before = _dump(ctl)
    assert main(["--state", str(state), "set", "ecn", "kmin_bytes=10000", "pmax=2"]) == 2
    assert main(["--state", str(state), "set", "dlb", "timeout_us=0"]) == 2
    assert main(["--state", str(state), "profile", "nope"]) == 2
    capsys.readouterr()
    assert _dump(ctl) == before
    assert FabricState.load(state).overrides == {}

    assert main(["--state", str(state), "set", "ecn", "kmin_bytes=11000"]) == 0
    assert "switch updates written" in capsys.readouterr().out
    assert FabricState.load(state).overrides == {"ecn": {"kmin_bytes": 11000}}
    ecn = [pb for pb in ctl.read_table("spine1", ctl.p4.resolve("tables", "ecn_thresholds"))]
    kmins = {ctl.p4.table_entry_from_pb(pb)[2].params["kmin_pkts"] for pb in ecn}
    assert kmins == {11}  # 11000 bytes in 1098-byte frames

    assert main(["--state", str(state), "set", "dlb", "timeout_us=300"]) == 0
    lb = [ctl.p4.table_entry_from_pb(pb)[2].params for pb in ctl.read_table("leaf1", ctl.p4.resolve("tables", "lb_mode"))]
    assert lb == [{"mode": 1, "hash_qp": 1, "flowlet_timeout_us": 300}]

    assert main(["--state", str(state), "profile", "ai-fabric"]) == 0
    st = FabricState.load(state)
    assert (st.profile, st.overrides) == ("ai-fabric", {})
    lb = [ctl.p4.table_entry_from_pb(pb)[2].params for pb in ctl.read_table("leaf1", ctl.p4.resolve("tables", "lb_mode"))]
    assert lb[0]["mode"] == 4
    capsys.readouterr()


def test_shell_is_p4runtime_shell(fabric):
    """`fabricctl shell` opens the real p4runtime-shell on the switch: it reads the spine's routes."""
    _, ctl, state = fabric
    script = "te = TableEntry('FabricIngress.routing.routing_v4')\nprint('ENTRIES', len(list(te.read())))\nexit\n"
    r = subprocess.run([sys.executable, "-m", "controller.cli", "--state", str(state), "shell", "spine1"],
                       input=script, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "ENTRIES 2" in r.stdout  # one /16 per leaf
    assert ctl.conns["spine1"].wait_primary(10)  # the controller is primary again after the shell


def test_telemetry_samples_every_switch(fabric, capsys):
    topo, _, state = fabric
    assert main(["--state", str(state), "telemetry", "--count", "1", "--interval", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "--- sample 1:" in out
    for s in topo.switches:
        for port in topo.ports_of(s.name):
            assert f"{s.name}:{port} " in out
    assert main(["--state", str(state), "telemetry", "--count", "1", "--interval", "0.1", "--json"]) == 0

    sample = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert {p["port"] for p in sample["ports"]} == {f"{s.name}:{p}" for s in topo.switches for p in topo.ports_of(s.name)}
