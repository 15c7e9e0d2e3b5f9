"""A program without tables or actions (multicast and registers only) is still a pipeline a
controller can push and program; its P4Info has no tables, but it is not empty."""

from pathlib import Path

from p4.v1 import p4runtime_pb2

from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info
from p4switch.p4info.device_config import encode

PROGRAM = Path(__file__).parent.parent / "exec" / "programs" / "replication.p4"


def test_push_tableless_program_and_program_multicast(switch, rt):
    checked = compile_file(str(PROGRAM))
    p4info = generate_p4info(checked)
    assert not p4info.tables and not p4info.actions
    client = rt.Client(switch.address, election_id=3)
    try:
        assert client.arbitrate().arbitration.status.code == 0
        client.set_pipeline(p4runtime_pb2.ForwardingPipelineConfig(
            p4info=p4info, p4_device_config=encode(PROGRAM.name, checked.source_text)))
        group = p4runtime_pb2.PacketReplicationEngineEntry()
        group.multicast_group_entry.multicast_group_id = 7
        group.multicast_group_entry.replicas.add(egress_port=2, instance=10)
        group.multicast_group_entry.replicas.add(egress_port=3, instance=20)
        client.write(rt.update(p4runtime_pb2.Update.INSERT, packet_replication_engine_entry=group))
        # ethernet, then ctl: op=2 (multicast), itype, rid, m, port; egress writes rid and port
        frame = bytes.fromhex("000000000001" "000000000002" "1234" "02" "00" "0000" "00" "00" "AB")
        switch.device.receive(1, frame)
        assert switch.ports[2].get()[14:] == bytes.fromhex("02" "00" "000A" "00" "02" "AB")
        assert switch.ports[3].get()[14:] == bytes.fromhex("02" "00" "0014" "00" "03" "AB")
    finally:
        client.close()
