"""802.1Q tags through the switch on real veths: the pipeline sees a tagged frame's tag (the
kernel's VLAN offload would strip it; the port restores it from PACKET_AUXDATA, as BMv2 keeps
it) and the frame leaves with the same TCI; VLAN frames the kernel frees before any socket sees
them (too short to untag) are counted on the port. Needs root (veths)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

from lab.veth import VethPairs
from netbase.packet_socket import PacketSocketPort
from p4switch.exec import LoadedProgram
from p4switch.switch.commands import Commands
from p4switch.switch.device import Device
from p4switch.switch.loop import SwitchLoop
from tests.ports import receive

pytestmark = pytest.mark.net  # veths, as root

# Forwards port 1 -> 2 only frames tagged with priority (PCP) 5: the pipeline must see the tag.
PCP5_FORWARDER = """
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header vlan_t { bit<3> pcp; bit<1> dei; bit<12> vid; bit<16> type; }
struct headers_t { ethernet_t eth; vlan_t vlan; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition select(hdr.eth.type) { 0x8100: vlan; default: accept; } }
    state vlan { pkt.extract(hdr.vlan); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.vlan.isValid() && hdr.vlan.pcp == 5 && sm.ingress_port == 1) { sm.egress_spec = 2; }
        else { mark_to_drop(sm); }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.vlan); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture()
def switch(tmp_path: Path) -> Iterator[tuple[Device, list[PacketSocketPort]]]:
    """The switch on two veths running PCP5_FORWARDER; yields it and the two host-side ports."""
    path = tmp_path / "pcp5.p4"
    path.write_text(PCP5_FORWARDER)
    with VethPairs(2, prefix="vl") as veth:
        device = Device(device_id=1)
        device.set_program(LoadedProgram.from_file(path))
        ports = {n: PacketSocketPort(veth.switch_side[n - 1]) for n in (1, 2)}
        hosts = [PacketSocketPort(name) for name in veth.host_side]
        for n, p in ports.items():
            device.add_port(n, p, p.ifname)
        loop = SwitchLoop(device, ports)
        thread = threading.Thread(target=loop.run, daemon=True)
        thread.start()
        try:
            yield device, hosts
        finally:
            loop.stop()
            thread.join(timeout=5)
            for p in [*ports.values(), *hosts]:
                p.close()
            device.close()


def wait_until(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_tagged_frame_with_pcp_5_leaves_tagged_with_the_same_tci(switch) -> None:
    device, hosts = switch
    frame = bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / Dot1Q(prio=5, vlan=42, type=0x0800)
                  / Raw(b"tagged RoCE class" + bytes(40)))
    untagged = bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x0800) / Raw(bytes(50)))
    assert hosts[0].send(untagged)  # dropped by the program: it has no tag
    assert hosts[0].send(frame)
    out = receive(hosts[1], 1)
    assert out == [frame]
    assert Ether(out[0])[Dot1Q].prio == 5 and Ether(out[0])[Dot1Q].vlan == 42
    assert wait_until(lambda: device.port_tx[2] == 1)  # counted once the send returned, maybe just after arrival


def test_vlan_frames_too_short_to_untag_are_counted_on_the_port(switch) -> None:
    """The fuzzer's 14-19-byte frames with the VLAN EtherType: freed by the kernel while it
    untags them, before any socket; the port reports each one (no frame unaccounted)."""
    device, hosts = switch
    head = bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x8100))
    short = [head + bytes(n) for n in range(6)]
    for f in short:
        assert hosts[0].send(f)
    commands = Commands(device)
    assert wait_until(lambda: f"port1.kernel_rx_not_delivered={len(short)}" in commands.run("switch_stats").splitlines())
    row = next(line for line in commands.run("show_ports").splitlines() if line.split("|")[0].strip() == "1")
    assert f"rx_kernel_drops={len(short)}" in row and f"rx_not_delivered={len(short)}" in row
    assert device.port_rx[1] == 0
