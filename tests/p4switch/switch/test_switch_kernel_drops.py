"""Frames the kernel drops on a switch port's packet socket (receive buffer full while the switch
is busy) are counted, not lost silently: the port's ``rx_kernel_drops`` equals what was sent
minus what the switch could read, and ``show_ports``/``switch_stats`` show it, by reason.
Needs root (veths)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from lab.veth import VethPairs
from netbase.packet_socket import PacketSocketPort
from p4switch.switch.commands import Commands
from p4switch.switch.device import Device

pytestmark = pytest.mark.net  # veths, as root

BURST = 400
TINY_RCVBUF = 1  # the kernel rounds it up to its minimum (a few KiB): a handful of frames fit
MARK = b"kernel-drop-test"


@pytest.fixture()
def veth() -> Iterator[VethPairs]:
    with VethPairs(1, prefix="kd") as pairs:
        yield pairs


def burst_into_paused_port(veth: VethPairs) -> tuple[PacketSocketPort, int]:
    """A switch port with a tiny receive buffer, not read while BURST frames arrive; then read
    dry. Returns the port and how many of the frames it received."""
    port = PacketSocketPort(veth.switch_side[0])
    port.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, TINY_RCVBUF)
    frame = bytes.fromhex("02000000000102000000000288b5") + MARK + bytes(200)
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0) as host:
        host.bind((veth.host_side[0], 0))
        for _ in range(BURST):
            host.send(frame)
    received = 0
    while frames := port.recv_frames(64):
        assert all(MARK in data for data in frames)  # nothing else arrives on the quiet veth, so the count is exact
        received += len(frames)
    return port, received


def test_kernel_drops_on_a_switch_port_equal_the_frames_lost(veth: VethPairs) -> None:
    port, received = burst_into_paused_port(veth)
    try:
        assert 0 < received < BURST  # the buffer held some, the kernel dropped the rest
        assert port.rx_kernel_drops == BURST - received
        assert port.rx_kernel_drops == BURST - received  # reading again does not lose the total
        assert port.kernel_drops()["rx_buffer_full"] == BURST - received
    finally:
        port.close()
    assert port.rx_kernel_drops == BURST - received  # still reported after the socket is closed


def test_show_ports_and_switch_stats_show_kernel_drops(veth: VethPairs) -> None:
    port, received = burst_into_paused_port(veth)
    try:
        device = Device(device_id=1)
        device.add_port(1, port, veth.switch_side[0])
        commands = Commands(device)
        extra = next(extra for _, name, _, extra in commands.ports() if name == veth.switch_side[0])
        assert extra["rx_kernel_drops"] == str(BURST - received)  # what show_ports prints
        assert extra["rx_buffer_full"] == str(BURST - received)
        stats = commands.run("switch_stats").splitlines()
        assert f"port1.rx_kernel_drops={BURST - received}" in stats
        assert f"port1.kernel_rx_buffer_full={BURST - received}" in stats
    finally:
        port.close()
