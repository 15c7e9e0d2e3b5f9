"""The one Linux packet-socket (AF_PACKET) port: how the switch and the live NIC meet a wire.

:class:`PacketSocketPort` opens a raw socket on one interface the safe way and hands whole
Ethernet frames in and out, exactly as they were on the wire:

- Safe open order: the socket is created with protocol 0 (it receives nothing), then bound to
  the interface and ETH_P_ALL in one ``bind``. A socket created with ETH_P_ALL would receive
  the frames of *every* interface between ``socket()`` and ``bind()``; a switch would forward
  them.
- Promiscuous mode (a switch port takes frames for any MAC); our own transmissions are not
  looped back (PACKET_IGNORE_OUTGOING, and PACKET_OUTGOING copies skipped on kernels without it).
- 802.1Q tags are restored. The kernel's VLAN offload strips the tag (TCI with its PCP
  priority bits) off every received frame into the skb before packet sockets see it; BMv2 and
  a real wire keep it. With PACKET_AUXDATA each frame comes with ``struct tpacket_auxdata``,
  whose ``tp_vlan_tci``/``tp_vlan_tpid`` (valid when TP_STATUS_VLAN_VALID /
  TP_STATUS_VLAN_TPID_VALID) are put back at offset 12.
- Non-blocking batch receive (:meth:`recv_frames`: many frames per ``recvmmsg`` call), and
  send that never raises, one frame (:meth:`send`) or many per ``sendmmsg`` call (:meth:`send_frames`).
- Every frame the kernel loses is counted, by reason (:meth:`kernel_drops`):
  ``rx_buffer_full``: dropped because our receive buffer was full (``PACKET_STATISTICS``
  tp_drops); ``rx_not_delivered``: received by the interface but never handed to any packet
  socket (e.g. a frame with the VLAN EtherType 0x8100 too short to untag, 14-19 bytes, which
  the kernel frees while untagging): the interface's rx_packets minus the socket's tp_packets
  since the port opened; ``tx_too_big`` (EMSGSIZE: longer than the MTU allows),
  ``tx_no_buffer`` (ENOBUFS/EAGAIN: send buffer or device queue full), ``tx_link_down``
  (ENETDOWN/ENXIO/ENODEV), ``tx_invalid`` (EINVAL: shorter than an Ethernet header),
  ``tx_other``.

Linux-only; needs root or CAP_NET_RAW.
"""

from __future__ import annotations

import errno
import fcntl
import socket
import struct
import threading
from collections import Counter
from collections.abc import Mapping

from netbase.mmsg import AUX_SPACE, PACKET_AUXDATA, SOL_PACKET, BatchReceiver, BatchSender

ETH_P_ALL = 0x0003

PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_STATISTICS = 6
PACKET_IGNORE_OUTGOING = 23  # Linux 4.20+
SIOCGIFMTU = 0x8921

_TPACKET_STATS = struct.Struct("II")  # tp_packets (incl. drops), tp_drops

SO_SNDBUFFORCE = 32  # Linux: SO_SNDBUF/SO_RCVBUF beyond wmem_max/rmem_max (root)
SO_RCVBUFFORCE = 33
SOCKET_BUFFER = 4 << 20  # bytes of kernel buffer per direction: bursts wait, not drop
MAX_FRAME = 1 << 18  # bytes asked of each receive: more than any MTU, so no frame is cut
RECV_BATCH = 64  # frames one receive call takes at most
SEND_BATCH = 64  # frames one send call carries at most

TX_REASONS = {
    errno.EMSGSIZE: "tx_too_big",
    errno.ENOBUFS: "tx_no_buffer",
    errno.EAGAIN: "tx_no_buffer",
    errno.ENETDOWN: "tx_link_down",
    errno.ENXIO: "tx_link_down",
    errno.ENODEV: "tx_link_down",
    errno.EINVAL: "tx_invalid",
}
RX_REASONS = ("rx_buffer_full", "rx_not_delivered")
KERNEL_DROP_REASONS = RX_REASONS + tuple(dict.fromkeys(TX_REASONS.values())) + ("tx_other",)


def kernel_drop_totals(drops: Mapping[str, int]) -> dict[str, int]:
    """``rx_kernel_drops`` and ``tx_kernel_drops``: the sums of :meth:`PacketSocketPort.kernel_drops`'
    reasons by direction (what reports and the controller add up)."""
    return {"rx_kernel_drops": sum(n for r, n in drops.items() if r.startswith("rx_")),
            "tx_kernel_drops": sum(n for r, n in drops.items() if r.startswith("tx_"))}


def interface_rx_packets(ifname: str) -> int | None:
    """Frames the interface received, from this network namespace's /proc/net/dev (sysfs shows
    the namespace it was mounted in, which is not ours inside a Mininet host)."""
    try:
        with open("/proc/self/net/dev") as f:
            for line in f:
                name, sep, fields = line.partition(":")
                if sep and name.strip() == ifname:
                    return int(fields.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


class PacketSocketPort:
    """A raw packet socket on interface ``ifname``; see the module docstring."""

    def __init__(self, ifname: str) -> None:
        self.ifname = ifname
        try:
            ifindex = socket.if_nametoindex(ifname)
        except OSError as e:
            raise ValueError(f"interface {ifname!r} does not exist") from e
        try:
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)  # receives nothing yet
        except PermissionError as e:
            raise ValueError(f"cannot open a raw socket for {ifname}: {e.strerror} (needs root or CAP_NET_RAW)") from None
        try:
            self.sock.bind((ifname, ETH_P_ALL))
            self.sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP,
                                 struct.pack("iHH8s", ifindex, PACKET_MR_PROMISC, 0, b""))
            self.sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
            try:
                self.sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            except OSError:
                pass  # an older kernel: recv_frames skips the PACKET_OUTGOING copies instead
            for forced, plain in ((SO_RCVBUFFORCE, socket.SO_RCVBUF), (SO_SNDBUFFORCE, socket.SO_SNDBUF)):
                try:
                    self.sock.setsockopt(socket.SOL_SOCKET, forced, SOCKET_BUFFER)
                except PermissionError:
                    self.sock.setsockopt(socket.SOL_SOCKET, plain, SOCKET_BUFFER)
            self.sock.setblocking(False)
            self.ip_mtu: int = struct.unpack_from(
                "16si", fcntl.ioctl(self.sock, SIOCGIFMTU, struct.pack("16si", ifname.encode(), 0)))[1]
        except OSError as e:
            self.sock.close()
            raise ValueError(f"cannot open interface {ifname!r}: {e}") from e
        self._rx = BatchReceiver(RECV_BATCH, MAX_FRAME, AUX_SPACE)
        self._tx = BatchSender(SEND_BATCH, MAX_FRAME)
        self.rx_errors = 0  # receive failures (interface down or gone): counted, the owner goes on
        self._tx_drops: Counter[str] = Counter()
        self._stats_lock = threading.Lock()  # reading the statistics resets them in the kernel
        self._tp_packets = self._tp_drops = self._not_delivered = 0
        self._rx_packets_at_open: int | None = None
        # Baseline: what the socket saw before this point is left out of both sides of the
        # rx_not_delivered difference (its drops are kept: they are losses all the same). A
        # frame arriving between the two reads is counted by both: the difference errs low.
        self._read_socket_stats()
        self._tp_packets = 0
        self._rx_packets_at_open = interface_rx_packets(ifname)

    def fileno(self) -> int:
        return self.sock.fileno()

    def recv_frames(self, limit: int) -> list[bytes]:
        """Up to ``limit`` waiting frames (none: an empty list), with their VLAN tags; up to
        RECV_BATCH of them per system call (``netbase.mmsg``)."""
        frames: list[bytes] = []
        fd = self.sock.fileno()
        while len(frames) < limit:
            want = limit - len(frames)
            try:
                got = self._rx.recv(fd, want)
            except OSError:  # interface went down or away: count it, the owner goes on
                self.rx_errors += 1
                break
            frames += got
            if len(got) < min(want, RECV_BATCH):  # drained (or an old kernel's own copies left out: one more call)
                break
        return frames

    def send(self, frame: bytes) -> bool:
        """False when the kernel refuses the frame (counted by reason, see :meth:`kernel_drops`):
        one frame is lost, never the caller."""
        try:
            self.sock.send(frame)
        except OSError as e:
            self._tx_drops[TX_REASONS.get(e.errno or 0, "tx_other")] += 1
            return False
        return True

    def send_frames(self, frames: list[bytes]) -> int:
        """Send ``frames`` in order, up to SEND_BATCH per system call (``netbase.mmsg``); how
        many left. Each refused frame is lost alone and counted by reason, as :meth:`send` does.
        One caller at a time (the frames are copied into the port's one set of send slots; the
        switch sends from its I/O loop only, under the device's lock)."""
        refused = self._tx.send(self.sock.fileno(), frames)
        for err in refused:
            self._tx_drops[TX_REASONS.get(err, "tx_other")] += 1
        return len(frames) - len(refused)

    def _read_socket_stats(self) -> None:
        """Fold the kernel's per-socket counts (reset by every read) into our totals, and work
        out ``rx_not_delivered``: the interface's received frames since the port opened minus
        those that reached the socket (delivered or dropped there)."""
        with self._stats_lock:
            if self.sock.fileno() < 0:
                return
            # The interface first: a frame arriving between the two reads is then counted by the
            # socket only, so the difference errs low, never reporting a loss that was none.
            # Frames still in the kernel's backlog are counted by the interface already: while
            # traffic flows the figure can be a few too high; once the port is quiet it is exact.
            base = self._rx_packets_at_open
            rx_packets = interface_rx_packets(self.ifname) if base is not None else None
            try:
                raw = self.sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, _TPACKET_STATS.size)
            except OSError:
                return
            packets, drops = _TPACKET_STATS.unpack(raw)
            self._tp_packets += packets
            self._tp_drops += drops
            if base is not None and rx_packets is not None:
                self._not_delivered = max(0, rx_packets - base - self._tp_packets)

    def kernel_drops(self) -> dict[str, int]:
        """Frames the kernel lost on this port so far, by reason (every reason, zeros included);
        the last totals once the port is closed."""
        self._read_socket_stats()
        counts = {"rx_buffer_full": self._tp_drops, "rx_not_delivered": self._not_delivered}
        counts.update({r: self._tx_drops[r] for r in KERNEL_DROP_REASONS if r.startswith("tx_")})
        return counts

    @property
    def rx_kernel_drops(self) -> int:
        """Received frames the kernel lost before we could read them (all rx reasons)."""
        return kernel_drop_totals(self.kernel_drops())["rx_kernel_drops"]

    @property
    def tx_kernel_drops(self) -> int:
        """Frames the kernel refused to send (all tx reasons)."""
        return kernel_drop_totals(self.kernel_drops())["tx_kernel_drops"]

    def close(self) -> None:
        self._read_socket_stats()
        self.sock.close()
        self._rx.close()
        self._tx.close()
