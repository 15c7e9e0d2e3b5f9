"""p4runtime-shell, a client nobody here wrote, drives our switch end to end."""

import p4runtime_sh.shell as sh
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from p4switch.p4info import p4info_to_text

pytestmark = pytest.mark.slow  # p4runtime-shell sessions


@pytest.fixture
def shell(switch, switch_program, tmp_path):
    p4info_path = tmp_path / "p4rt_switch.p4info.txtpb"
    p4info_path.write_text(p4info_to_text(switch_program.p4info))
    bin_path = tmp_path / "p4rt_switch.json"
    bin_path.write_bytes(switch_program.device_config)
    sh.setup(device_id=1, grpc_addr=switch.address, election_id=(0, 1),
             config=sh.FwdPipeConfig(str(p4info_path), str(bin_path)), verbose=False)
    try:
        yield sh
    finally:
        sh.teardown()


def test_shell_reads_p4info_and_manages_entries(shell, switch):
    assert sh.client.api_version() == "1.4.1"
    assert sh.client.get_p4info().tables[0].preamble.name == "MyIngress.routes"

    te = sh.TableEntry("MyIngress.routes")(action="MyIngress.forward")
    te.match["hdr.ipv4.dstAddr"] = "10.0.2.0/24"
    te.action["dstAddr"] = "00:00:00:00:02:02"
    te.action["port"] = "2"
    te.insert()

    entries = list(sh.TableEntry("MyIngress.routes").read())
    assert len(entries) == 1
    got = entries[0]
    assert got.match["hdr.ipv4.dstAddr"].lpm.value == bytes([10, 0, 2, 0])
    assert got.match["hdr.ipv4.dstAddr"].lpm.prefix_len == 24
    assert got.action["port"].value == b"\x02"

    # the entry forwards traffic
    frame = bytes(Ether(dst="00:00:00:00:00:01") / IP(dst="10.0.2.7") / UDP() / b"data")
    switch.device.receive(1, frame)
    out = Ether(switch.ports[2].get())
    assert out.dst == "00:00:00:00:02:02" and out[IP].dst == "10.0.2.7"

    te.delete()
    assert list(sh.TableEntry("MyIngress.routes").read()) == []


def test_shell_packet_out_and_packet_in(shell, switch):
    payload = bytes(Ether(dst="00:00:00:00:00:09", type=0x88B5) / b"from the controller")
    sh.PacketOut(payload=payload, egress_port="3", _pad="0").send()
    assert switch.ports[3].get() == payload

    acl = sh.TableEntry("MyIngress.acl")(action="MyIngress.to_cpu")
    acl.match["hdr.ethernet.etherType"] = "0x88cc&&&0xffff"
    acl.priority = 10
    acl.insert()
    packet_in = sh.PacketIn()
    lldp = bytes(Ether(dst="01:80:c2:00:00:0e", type=0x88CC) / b"lldp-ish")
    switch.device.receive(4, lldp)
    msgs = list(packet_in.sniff(timeout=2))
    assert len(msgs) == 1
    pin = msgs[0].packet
    assert pin.payload == lldp
    assert {m.metadata_id: m.value for m in pin.metadata} == {1: b"\x04", 2: b"\x00"}


def test_shell_counters_multicast_and_clone_sessions(shell, switch):
    l2 = sh.TableEntry("MyIngress.l2")(action="MyIngress.flood")
    l2.match["hdr.ethernet.dstAddr"] = "ff:ff:ff:ff:ff:ff"
    l2.action["group"] = "9"
    l2.insert()
    sh.MulticastGroupEntry(9).add(1, 1).add(3, 1).insert()
    sh.CloneSessionEntry(4).add(2, 0).insert()
    frame = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", type=0x88B5) / b"broadcast")
    switch.device.receive(2, frame)
    assert switch.ports[1].get() == frame and switch.ports[3].get() == frame

    groups = list(sh.MulticastGroupEntry(9).read())
    assert [(r.egress_port, r.instance) for r in groups[0].replicas] == [(1, 1), (3, 1)]
    sessions = list(sh.CloneSessionEntry(4).read())
    assert [r.egress_port for r in sessions[0].replicas] == [2]

    counter = sh.CounterEntry("MyIngress.port_packets")
    counter.index = 2
    read = list(counter.read())
    assert read[0].packet_count == 1
    assert len(list(sh.CounterEntry("MyIngress.port_packets").read())) == 512
