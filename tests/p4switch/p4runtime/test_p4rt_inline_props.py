"""Externs constructed in place as table properties (``@name("ap") implementation =
action_profile(32w128);``): P4Info describes them under the property's @name as p4c does,
and a controller can program them over P4Runtime."""

from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2

from p4switch.exec import LoadedProgram
from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info, ids
from p4switch.p4info.collect import P4InfoError
from p4switch.p4info.device_config import encode

PROGRAM = Path(__file__).parent.parent / "exec" / "programs" / "inline_props.p4"


@pytest.fixture(scope="module")
def checked():
    return compile_file(str(PROGRAM))


def test_p4info_names_and_links_inline_instances(checked):
    info = generate_p4info(checked)
    tables = {t.preamble.name: t for t in info.tables}
    profiles = {p.preamble.name: p for p in info.action_profiles}
    assert set(profiles) == {"ap", "global_sel"}  # the @name as written (p4c 1.2.4's action_profile-bmv2)
    ap, sel = profiles["ap"], profiles["global_sel"]
    assert ap.preamble.id == ids.hashed_id(ids.ACTION_PROFILE, "ap")
    assert (ap.with_selector, ap.size, list(ap.table_ids)) == (False, 128, [tables["MyIngress.prof_fwd"].preamble.id])
    assert (sel.with_selector, sel.size, list(sel.table_ids)) == (True, 128, [tables["MyIngress.sel_fwd"].preamble.id])
    assert tables["MyIngress.prof_fwd"].implementation_id == ap.preamble.id
    assert tables["MyIngress.sel_fwd"].implementation_id == sel.preamble.id
    [counter], [meter] = info.direct_counters, info.direct_meters
    counted = tables["MyIngress.counted"]
    assert (counter.preamble.name, counter.direct_table_id) == ("hits", counted.preamble.id)
    assert (meter.preamble.name, meter.direct_table_id) == ("policer", counted.preamble.id)
    assert counter.spec.unit == counter.spec.PACKETS and meter.spec.unit == meter.spec.PACKETS
    assert set(counted.direct_resource_ids) == {counter.preamble.id, meter.preamble.id}


def test_unnamed_inline_property_is_refused_like_p4c(tmp_path):
    text = PROGRAM.read_text().replace('@name("ap") implementation', "implementation")
    path = tmp_path / "unnamed.p4"
    path.write_text(text)
    checked = compile_file(str(path))
    with pytest.raises(P4InfoError, match="Table 'MyIngress.prof_fwd' has an anonymous table property "
                                          "'implementation' with no name annotation"):
        generate_p4info(checked)
    assert "MyIngress.prof_fwd_implementation" in LoadedProgram.from_checked(checked).action_profiles


def test_member_of_inline_profile_forwards(switch, checked, rt):
    config = p4runtime_pb2.ForwardingPipelineConfig(p4info=generate_p4info(checked),
                                                    p4_device_config=encode("inline_props.p4", checked.source_text))
    client = rt.Client(switch.address, election_id=10)
    try:
        assert client.arbitrate().arbitration.status.code == 0
        client.set_pipeline(config)
        member = p4runtime_pb2.ActionProfileMember(action_profile_id=ids.hashed_id(ids.ACTION_PROFILE, "ap"),
                                                   member_id=7)
        member.action.action_id = ids.hashed_id(ids.ACTION, "MyIngress.set_port")
        member.action.params.add(param_id=1, value=bytes([3]))
        client.write(rt.update(p4runtime_pb2.Update.INSERT, action_profile_member=member))
        entry = p4runtime_pb2.TableEntry(table_id=ids.hashed_id(ids.TABLE, "MyIngress.prof_fwd"))
        entry.match.add(field_id=1).exact.value = (1).to_bytes(6, "big")
        entry.action.action_profile_member_id = 7
        client.write(rt.update(p4runtime_pb2.Update.INSERT, table_entry=entry))
        frame = bytes.fromhex("000000000001" "0000000000bb" "1234") + b"inline profile"
        switch.device.receive(1, frame)
        assert switch.ports[3].get() == frame
    finally:
        client.close()
