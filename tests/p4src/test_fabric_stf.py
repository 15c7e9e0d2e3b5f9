"""fabric.p4 on our target through its STF tests (p4src/tests/*.stf): routing and drop
reasons, PacketIn/PacketOut, classes, ECN marking, round-robin and best-of-two spraying, DLB
flowlets, PFC pause/resume frames, tx byte counting of transmitted frames, INT
source/transit/sink byte layouts and reports (report,
INT within the egress port's MTU (source skips, transit sets the M bit, both counted),
to-host and to-host-and-report sinks; collector on a port or the CPU port), also with source
and sink on one switch (single-hop INT), and the load-balancing mode chosen per class and per
destination (lb_mode)."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest

from p4rt.entries import ActionCall, Exact, GroupRef, TableEntry
from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.frontend import compile_file
from p4switch.stf import run_stf_file
from ptf_tests.fabric.fabric_packets import roce, udp

pytestmark = pytest.mark.slow  # fabric.p4's STF tests, one compile each

REPO = Path(__file__).resolve().parents[2]
FABRIC = REPO / "p4src" / "fabric.p4"
STF_DIR = REPO / "p4src" / "tests"
STF_FILES = sorted(STF_DIR.glob("*.stf"))


@pytest.fixture(scope="module")
def checked():
    return compile_file(str(FABRIC))


def test_every_feature_has_an_stf_test() -> None:
    names = {p.name for p in STF_FILES}
    assert {"fabric_routing.stf", "fabric_classify.stf", "fabric_ecn.stf", "fabric_spray_rr.stf", "fabric_spray_best2.stf",
            "fabric_dlb.stf", "fabric_pfc.stf", "fabric_tx_bytes.stf",
            "fabric_int_transit.stf", "fabric_int_mtu.stf", "fabric_int_sink.stf", "fabric_int_sink_both.stf",
            "fabric_int_single_hop.stf", "fabric_lb_class.stf"} <= names


def test_stf_files_are_what_the_generator_writes() -> None:
    """The STF files are generated from scapy frames (make_stf.py); an edit by hand would
    drift from the documents they are meant to check."""
    spec = importlib.util.spec_from_file_location("fabric_make_stf", STF_DIR / "make_stf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, make in module.TESTS.items():
        assert (STF_DIR / name).read_text() == make(), f"{name} is stale: run python p4src/tests/make_stf.py"


def test_ternary_entries_carry_the_priority_bmv2_needs(checked) -> None:
    """p4c's BMv2 STF driver turns ``add`` into ``table_add``, which BMv2 refuses for a table
    with ternary/range keys unless a priority follows the table name."""
    tables = LoadedProgram.from_checked(checked).tables
    checked_lines = 0
    for stf in STF_FILES:
        for line in stf.read_text().splitlines():
            words = line.split()
            if words[:1] == ["add"] and tables[words[1]].needs_priority:
                assert words[2].isdigit(), f"{stf.name}: {line}"
                checked_lines += 1
    assert checked_lines >= 4


@pytest.mark.parametrize("backend", ["python", "mypyc"])  # the generated code run, or compiled (native.py)
@pytest.mark.parametrize("stf", STF_FILES, ids=[p.stem for p in STF_FILES])
def test_fabric_stf(checked, stf: Path, backend: str) -> None:
    prog = LoadedProgram.from_checked(checked, backend=backend)
    assert prog.compiled.backend == backend
    log = io.StringIO()
    result = run_stf_file(prog, stf, out=log)
    assert result.ok, f"{stf.name}:\n" + "\n".join(result.failures)
    assert result.packets_received > 0


def test_lb_mode_by_class_sprays_roce_and_keeps_priority0_on_ecmp(checked) -> None:
    """fabric_lb_class.stf cannot write an ECMP selector group (STF has no words for one), so
    there priority-0 traffic only shows that it took ECMP by being dropped for lack of a
    member. Here the same entries get the ECMP group of members 2 and 3: consecutive packets
    of one priority-0 flow then stay on one uplink, different flows use both, while the RoCE
    flow (priority 3) still alternates between the two."""
    prog = LoadedProgram.from_checked(checked)
    assert run_stf_file(prog, STF_DIR / "fabric_lb_class.stf", out=io.StringIO()).ok
    selector = prog.action_profiles["FabricIngress.routing.ecmp_selector"]
    for member, port in ((1, 2), (2, 3)):
        selector.add_member(member, ActionCall("FabricIngress.routing.set_egress_port", {"port": port}))
    selector.add_group(5, [(1, 1), (2, 1)], 2)
    prog.tables["FabricIngress.routing.ecmp"].insert(TableEntry({"meta.nh_group": Exact(5)}, GroupRef(5)))
    pipe = V1Pipeline(prog)

    def ports(frame: bytes) -> list[int]:
        return [port for port, _ in pipe.process(1, frame)]

    one_flow = [ports(udp(dst_ip="10.0.2.2", sport=5000, payload=bytes([n]))) for n in range(6)]
    assert len({tuple(p) for p in one_flow}) == 1 and one_flow[0][0] in (2, 3)
    flows = {ports(udp(dst_ip="10.0.2.2", sport=5000 + n))[0] for n in range(32)}
    assert flows == {2, 3}
    sprayed = [ports(roce(dst_ip="10.0.2.2", dscp=26, psn=n))[0] for n in range(4, 8)]
    assert sprayed == [2, 3, 2, 3]
