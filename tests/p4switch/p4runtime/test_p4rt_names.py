"""P4Info names and the executor's names agree, so a controller can program any table.

Key elements with an explicit cast or a slice and action parameters renamed by ``@name``
are spelled one way in P4Info; the switch used to key its tables by another spelling and
refused every entry with INVALID_ARGUMENT.
"""

from pathlib import Path

from p4.v1 import p4runtime_pb2
from scapy.layers.l2 import Ether

from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info
from p4switch.p4info.device_config import encode

PROGRAM = Path(__file__).parent / "programs" / "p4rt_names.p4"


def _config() -> p4runtime_pb2.ForwardingPipelineConfig:
    checked = compile_file(str(PROGRAM))
    return p4runtime_pb2.ForwardingPipelineConfig(p4info=generate_p4info(checked),
                                                  p4_device_config=encode(PROGRAM.name, checked.source_text))


def test_entry_keyed_by_p4info_names_forwards(switch, rt):
    config = _config()
    table = config.p4info.tables[0]
    assert [f.name for f in table.match_fields] == ["(bit<8>)hdr.eth.type", "hdr.eth.dst[7:0]"]
    forward = next(a for a in config.p4info.actions if a.preamble.name == "NIngress.forward")
    assert [p.name for p in forward.params] == ["out_port"]

    client = rt.Client(switch.address, election_id=5)
    try:
        assert client.arbitrate().arbitration.status.code == 0
        client.set_pipeline(config)
        entry = p4runtime_pb2.TableEntry(table_id=table.preamble.id)
        entry.match.add(field_id=table.match_fields[0].id).exact.value = b"\x00"  # low byte of 0x0800
        entry.match.add(field_id=table.match_fields[1].id).exact.value = b"\x0a"
        entry.action.action.action_id = forward.preamble.id
        entry.action.action.params.add(param_id=forward.params[0].id, value=b"\x03")
        client.write(rt.update(p4runtime_pb2.Update.INSERT, table_entry=entry))

        frame = bytes(Ether(dst="00:00:00:00:00:0a", src="00:00:00:00:00:01", type=0x0800) / (b"x" * 46))
        switch.device.receive(1, frame)
        assert switch.ports[3].get() == frame
        read = client.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=table.preamble.id)))
        assert read[0].table_entry.action.action.params[0].value == b"\x03"
    finally:
        client.close()
