"""The live NIC's statistics (what the management API's ``stats`` returns) count the frames
the kernel dropped on its raw socket, so a loss there is visible: sent minus read. Needs root."""

from __future__ import annotations

import socket

import pytest

from lab.veth import VethPairs
from netbase.packet_socket import PacketSocketPort
from nicmodel.live import LiveNic

pytestmark = pytest.mark.net  # veths, as root

BURST = 400


def test_live_nic_stats_report_kernel_socket_drops() -> None:
    with VethPairs(1, prefix="nk") as veth:
        port = PacketSocketPort(veth.switch_side[0])
        nic = LiveNic(port, "10.81.0.1", "02:81:00:00:00:01", guard_udp=False)  # not started: nobody reads
        try:
            port.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)  # the kernel's minimum: a few frames
            frame = bytes.fromhex("02810000000102810000000288b5") + bytes(200)
            with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0) as host:
                host.bind((veth.host_side[0], 0))
                for _ in range(BURST):
                    host.send(frame)
            received = 0
            while frames := port.recv_frames(64):
                received += len(frames)
            assert 0 < received < BURST
            stats = nic.stats()
            assert stats["nic_counters"]["10.81.0.1"]["rx_kernel_drops"] == BURST - received
            assert stats["summary"]["counters"]["rx_kernel_drops"] == BURST - received
            assert stats["nic_counters"]["10.81.0.1"]["kernel_rx_buffer_full"] == BURST - received
        finally:
            nic.close()
