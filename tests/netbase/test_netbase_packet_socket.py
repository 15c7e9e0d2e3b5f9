"""The one packet-socket port (netbase/packet_socket.py) on real veths: frames arrive exactly as
they were on the wire (802.1Q/802.1ad tags with their priority bits restored, as BMv2 and a wire
keep them), our own transmissions are not received back, and every frame the kernel loses is
counted by reason (a VLAN frame too short to untag, frames the kernel refuses to send). Needs
root (veths)."""

from __future__ import annotations

import select
import time
from collections.abc import Iterator

import pytest
from scapy.arch.linux import L2Socket
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether
from scapy.packet import Raw

from lab.veth import VethPairs
from netbase.packet_socket import PacketSocketPort
from tests.ports import receive

pytestmark = pytest.mark.net  # veths, as root

SRC, DST = "02:00:00:00:00:0a", "02:00:00:00:00:0b"


@pytest.fixture()
def ports() -> Iterator[tuple[PacketSocketPort, PacketSocketPort, VethPairs]]:
    """Both ends of one veth pair, each a PacketSocketPort."""
    with VethPairs(1, prefix="ps") as veth:
        a, b = PacketSocketPort(veth.host_side[0]), PacketSocketPort(veth.switch_side[0])
        try:
            yield a, b, veth
        finally:
            a.close()
            b.close()


def tagged(pcp: int, vid: int, payload: bytes) -> bytes:
    return bytes(Ether(src=SRC, dst=DST) / Dot1Q(prio=pcp, vlan=vid, type=0x88B5) / Raw(payload))


def test_a_tagged_frame_arrives_with_its_tag_and_priority(ports) -> None:
    a, b, _ = ports
    frames = [tagged(5, 100, b"pcp five" + bytes(40)),
              tagged(0, 0, b"priority tag, vid 0" + bytes(40)),  # the tag is kept even when all zero
              bytes(Ether(src=SRC, dst=DST) / Dot1AD(prio=3, vlan=7) / Dot1Q(prio=6, vlan=8, type=0x88B5) / Raw(bytes(40))),
              bytes(Ether(src=SRC, dst=DST, type=0x88B5) / Raw(b"untagged" + bytes(50)))]
    for f in frames:
        assert a.send(f)
    got = receive(b, len(frames))
    assert got == frames
    assert Ether(got[0])[Dot1Q].prio == 5


def test_a_frame_sent_leaves_with_its_tag_as_an_independent_capture_sees_it(ports) -> None:
    """Checked against scapy's own packet socket (which also restores tags from PACKET_AUXDATA)."""
    a, _, veth = ports
    frame = tagged(5, 42, b"seen by scapy" + bytes(40))
    capture = L2Socket(iface=veth.switch_side[0], promisc=True)
    try:
        assert a.send(frame)
        deadline = time.monotonic() + 5
        seen = None
        while seen != frame and (left := deadline - time.monotonic()) > 0:
            if select.select([capture], [], [], left)[0]:
                seen = capture.recv_raw()[1]
        assert seen == frame
    finally:
        capture.close()


def test_own_transmissions_are_not_received(ports) -> None:
    a, b, _ = ports
    assert a.send(tagged(1, 1, b"out"))
    assert b.send(tagged(2, 2, b"back"))
    assert receive(a, 1) == [tagged(2, 2, b"back")]  # a copy of "out" would have come first


def test_vlan_frames_too_short_to_untag_are_counted_and_the_rest_arrive(ports) -> None:
    """The kernel frees a frame with EtherType 0x8100 shorter than 20 bytes while untagging it,
    before any packet socket sees it: counted as rx_not_delivered, never silently lost."""
    a, b, _ = ports
    head = bytes(Ether(src=SRC, dst=DST, type=0x8100))
    short = [head + bytes(range(n)) for n in range(6)]  # 14..19 bytes
    long = [head + bytes([0xA0, 0x05, 0x88, 0xB5]) + bytes(range(n)) for n in (2, 3, 46)]  # 20, 21, 64 bytes
    for f in short + long:
        assert a.send(f)
    assert receive(b, len(long)) == long
    deadline = time.monotonic() + 5
    while b.kernel_drops()["rx_not_delivered"] < len(short) and time.monotonic() < deadline:
        time.sleep(0.01)
    drops = b.kernel_drops()
    assert drops["rx_not_delivered"] == len(short)
    assert b.rx_kernel_drops == len(short)


def test_frames_the_kernel_refuses_to_send_are_counted_by_reason(ports) -> None:
    a, b, _ = ports
    assert not a.send(bytes(Ether(src=SRC, dst=DST, type=0x88B5) / Raw(bytes(a.ip_mtu + 1))))  # > MTU
    assert not a.send(bytes(6))  # shorter than an Ethernet header
    assert a.send(bytes(Ether(src=SRC, dst=DST, type=0x88B5) / Raw(bytes(a.ip_mtu))))  # exactly the MTU
    assert a.send(tagged(5, 1, bytes(a.ip_mtu - 4)))  # MTU-sized payload plus its tag may leave too
    drops = a.kernel_drops()
    assert (drops["tx_too_big"], drops["tx_invalid"], a.tx_kernel_drops) == (1, 1, 2)
    assert len(receive(b, 2)) == 2


def test_a_missing_interface_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="does not exist"):
        PacketSocketPort("nosuchif0")


def test_a_burst_arrives_whole_and_in_order_across_receive_batches(ports) -> None:
    """More frames than one receive call takes (RECV_BATCH), of every size up to the MTU, all
    arrive intact and in order, with no frame of one batch mixed into another's slot."""
    a, b, _ = ports
    frames = [bytes(Ether(src=SRC, dst=DST, type=0x88B5) / Raw(bytes([i % 256]) * (46 + (i * 97) % 1455)))
              for i in range(150)]
    for f in frames:
        assert a.send(f)
    time.sleep(0.2)  # all of them waiting, so recv_frames takes them in full batches
    got = receive(b, len(frames))
    assert got == frames


def test_frames_sent_in_batches_arrive_whole_and_in_order(ports) -> None:
    """send_frames: more frames than one send call carries (SEND_BATCH), of every size up to the
    MTU, leave intact and in order, tags included, as one send per frame would have sent them."""
    a, b, _ = ports
    frames = [bytes(Ether(src=SRC, dst=DST, type=0x88B5) / Raw(bytes([i % 256]) * (46 + (i * 97) % 1455)))
              for i in range(150)] + [tagged(6, 9, b"tagged, last" + bytes(40))]
    assert a.send_frames(frames) == len(frames)
    assert receive(b, len(frames) + 1, timeout=2) == frames  # nothing more either
    assert a.tx_kernel_drops == 0


def test_a_frame_refused_in_a_batch_is_lost_alone_and_counted(ports) -> None:
    """The kernel stops a batch at a frame it refuses: that frame is counted by reason and the
    frames behind it still leave, in order (here at both ends of a batch and twice in a row)."""
    a, b, _ = ports
    good = [bytes(Ether(src=SRC, dst=DST, type=0x88B5) / Raw(bytes([i]) * 50)) for i in range(5)]
    too_big = bytes(Ether(src=SRC, dst=DST, type=0x88B5) / Raw(bytes(a.ip_mtu + 1)))
    batch = [bytes(6), good[0], good[1], too_big, bytes(7), good[2], good[3], good[4], too_big]
    assert a.send_frames(batch) == len(good)
    assert receive(b, len(good) + 1, timeout=2) == good
    drops = a.kernel_drops()
    assert (drops["tx_invalid"], drops["tx_too_big"], a.tx_kernel_drops) == (2, 2, 4)
