"""Per-port packet capture in the standard pcap format (nanosecond variant), written here.

``--pcap DIR`` makes the switch write ``DIR/<ifname>_in.pcap`` and ``DIR/<ifname>_out.pcap``
per port, as BMv2 names them. Timestamps are the capture's wall-clock start plus fabric time,
so with time dilation the spacing between packets reads in fabric time. tshark, Wireshark and
scapy read these files.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

PCAP_MAGIC_NS = 0xA1B23C4D
LINKTYPE_ETHERNET = 1
SNAPLEN = 262144


class PcapWriter:
    def __init__(self, path: str | Path, snaplen: int = SNAPLEN) -> None:
        self.path = Path(path)
        self.snaplen = snaplen
        self._f: BinaryIO = open(self.path, "wb")
        self._f.write(struct.pack("<IHHiIII", PCAP_MAGIC_NS, 2, 4, 0, 0, snaplen, LINKTYPE_ETHERNET))
        self._f.flush()

    def write(self, frame: bytes, ts_ns: int) -> None:
        """Append one frame; flushed at once so a capture is readable while the switch runs."""
        data = frame[: self.snaplen]
        sec, nsec = divmod(ts_ns, 1_000_000_000)
        self._f.write(struct.pack("<IIII", sec, nsec, len(data), len(frame)) + data)
        self._f.flush()

    def close(self) -> None:
        self._f.close()


def read_pcap(path: str | Path) -> list[tuple[int, bytes]]:
    """(timestamp ns, frame) records of a pcap file (microsecond or nanosecond, little or big
    endian); tests and tools read captures back with this."""
    raw = Path(path).read_bytes()
    magic_le = struct.unpack_from("<I", raw, 0)[0]
    for endian in "<>":
        magic = struct.unpack_from(endian + "I", raw, 0)[0]
        if magic in (0xA1B2C3D4, PCAP_MAGIC_NS):
            break
    else:
        raise ValueError(f"{path}: not a pcap file (magic {magic_le:#x})")
    scale = 1 if magic == PCAP_MAGIC_NS else 1000
    out = []
    off = 24
    while off + 16 <= len(raw):
        sec, frac, incl, _orig = struct.unpack_from(endian + "IIII", raw, off)
        off += 16
        out.append((sec * 1_000_000_000 + frac * scale, raw[off : off + incl]))
        off += incl
    return out
