"""What the kernel drops on an AF_PACKET socket, read so that no loss goes uncounted.

A raw packet socket whose reader falls behind loses frames inside the kernel when its receive
buffer is full; nothing else (no interface counter, no switch or NIC counter) sees them. The
kernel counts them per socket (``getsockopt(SOL_PACKET, PACKET_STATISTICS)`` gives
``struct tpacket_stats {tp_packets, tp_drops}``) and resets its counters on every read, so
:class:`KernelDrops` accumulates them. The switch's ports and the NIC's live driver both use it.
"""

from __future__ import annotations

import socket
import struct
import threading

SOL_PACKET = 263
PACKET_STATISTICS = 6
_TPACKET_STATS = struct.Struct("II")  # tp_packets, tp_drops (unsigned int each)


class KernelDrops:
    """Running total of the frames the kernel dropped on one packet socket's receive path."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._total = 0
        self._lock = threading.Lock()  # reads reset the kernel's count: two readers must not lose one

    def read(self) -> int:
        """Total drops so far (polls the kernel; the last total once the socket is closed)."""
        with self._lock:
            if self._sock.fileno() < 0:
                return self._total
            try:
                raw = self._sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, _TPACKET_STATS.size)
            except OSError:
                return self._total
            self._total += _TPACKET_STATS.unpack(raw)[1]
            return self._total
