"""The live NIC on its packet-socket port (the one netbase port the switch uses too): a tagged
frame reaches the NIC core with its 802.1Q tag and priority intact, and frames the kernel
refuses to send are in the NIC's statistics, by reason. Needs root (veths)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

from lab.veth import VethPairs
from netbase.packet_socket import PacketSocketPort
from nicmodel.live import LiveNic

pytestmark = pytest.mark.net  # veths, as root

IP, MAC = "10.82.0.1", "02:82:00:00:00:01"


class _Spy:
    """The NIC, with the frames its ``receive`` is given recorded (a compiled ``Nic``'s
    methods cannot be replaced on the instance)."""

    def __init__(self, nic: Any, seen: list[bytes]) -> None:
        self._nic, self._seen = nic, seen

    def __getattr__(self, name: str) -> Any:
        return getattr(self._nic, name)

    def receive(self, frame: bytes, now: int) -> Any:
        self._seen.append(frame)
        return self._nic.receive(frame, now)


def test_live_nic_receives_a_tagged_frame_intact() -> None:
    with VethPairs(1, prefix="nv") as veth:
        port = PacketSocketPort(veth.switch_side[0])
        host = PacketSocketPort(veth.host_side[0])
        nic = LiveNic(port, IP, MAC, guard_udp=False)
        seen: list[bytes] = []
        nic.nic = _Spy(nic.nic, seen)  # type: ignore[assignment]
        try:
            frame = bytes(Ether(src="02:82:00:00:00:02", dst=MAC) / Dot1Q(prio=5, vlan=7, type=0x0800)
                          / Raw(b"tagged" + bytes(60)))
            assert host.send(frame)
            deadline = time.monotonic() + 5
            while not seen and time.monotonic() < deadline:
                nic.step()
                time.sleep(0.005)
            assert seen == [frame]
        finally:
            nic.close()
            host.close()


def test_live_nic_stats_count_frames_the_kernel_refused_to_send() -> None:
    with VethPairs(1, prefix="nt") as veth:
        port = PacketSocketPort(veth.switch_side[0])
        nic = LiveNic(port, IP, MAC, guard_udp=False)
        try:
            assert not port.send(bytes(Ether(dst="02:82:00:00:00:02", src=MAC, type=0x0800) / Raw(bytes(port.ip_mtu + 1))))
            counters = nic.stats()["nic_counters"][IP]
            assert (counters["tx_kernel_drops"], counters["kernel_tx_too_big"]) == (1, 1)
        finally:
            nic.close()
