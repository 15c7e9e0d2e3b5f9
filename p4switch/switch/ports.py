"""Switch ports on real interfaces through Linux AF_PACKET raw sockets.

Each ``-i N@ifname`` becomes a :class:`RawPort`: a non-blocking packet socket bound to the
interface for every EtherType, in promiscuous mode, that skips the kernel's PACKET_OUTGOING
copies of frames we transmitted ourselves (otherwise the switch would receive everything it
sends). Send errors (oversized, too short, full buffers) are counted, never raised; frames the
kernel drops because the receive buffer is full are read back as ``rx_kernel_drops``.
"""

from __future__ import annotations

import socket
import struct

from netbase.packet_socket import KernelDrops

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_OUTGOING = 4
RECV_BUFFER = 262144
SOCKET_BUFFER = 4 << 20  # bytes of kernel buffer per direction: bursts wait, not drop
SO_SNDBUFFORCE = 32  # Linux: like SO_SNDBUF/SO_RCVBUF but above rmem_max/wmem_max (root)
SO_RCVBUFFORCE = 33


MAX_PORT = 510  # v1model ports are 9 bits and 511 is the drop port


def parse_interface(spec: str) -> tuple[int, str]:
    """``N@ifname`` -> (N, ifname), as simple_switch's ``-i`` takes it."""
    num, sep, name = spec.partition("@")
    if not sep or not name or not num.isdigit():
        raise ValueError(f"bad interface {spec!r}: expected PORT@IFNAME, e.g. 1@veth1")
    if int(num) > MAX_PORT:
        raise ValueError(f"bad interface {spec!r}: port numbers go from 0 to {MAX_PORT}")
    return int(num), name


class RawPort:
    def __init__(self, port: int, ifname: str) -> None:
        self.port = port
        self.ifname = ifname
        try:
            ifindex = socket.if_nametoindex(ifname)
        except OSError as e:
            raise ValueError(f"interface {ifname!r} does not exist") from e
        # Protocol 0 at creation receives nothing until bind names the interface, so no frame
        # of another interface slips in between.
        try:
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        except PermissionError as e:
            raise ValueError(f"cannot open a raw socket for {ifname}: {e.strerror} (needs root or CAP_NET_RAW)") from None
        self.sock.bind((ifname, ETH_P_ALL))
        self.sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, struct.pack("iHH8s", ifindex, PACKET_MR_PROMISC, 0, b""))
        for forced, plain in ((SO_RCVBUFFORCE, socket.SO_RCVBUF), (SO_SNDBUFFORCE, socket.SO_SNDBUF)):
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, forced, SOCKET_BUFFER)
            except PermissionError:
                self.sock.setsockopt(socket.SOL_SOCKET, plain, SOCKET_BUFFER)
        self.sock.setblocking(False)
        self.rx_errors = 0  # receive failures (interface down or gone); sends are counted by the Device
        self._kernel_drops = KernelDrops(self.sock)

    @property
    def rx_kernel_drops(self) -> int:
        """Frames lost in the kernel before we could read them (receive buffer full)."""
        return self._kernel_drops.read()

    def fileno(self) -> int:
        return self.sock.fileno()

    def recv(self) -> bytes | None:
        """Next received frame, or None when none is waiting."""
        while True:
            try:
                data, addr = self.sock.recvfrom(RECV_BUFFER)
            except (BlockingIOError, InterruptedError):
                return None
            except OSError:  # interface went down or away: count it, the switch goes on
                self.rx_errors += 1
                return None
            if addr[2] == PACKET_OUTGOING:
                continue
            return data

    def send(self, frame: bytes) -> bool:
        """False when the kernel refuses the frame (oversized, too short, buffers full,
        interface down): the caller counts it; one frame is lost, never the switch."""
        try:
            self.sock.send(frame)
        except OSError:
            return False
        return True

    def close(self) -> None:
        self.sock.close()
