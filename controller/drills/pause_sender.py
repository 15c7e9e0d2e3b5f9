"""A host stuck in a PFC storm, for the live pfc-storm drill: sends an 802.1Qbb XOFF (maximum
quanta) for one priority out of an interface every INTERVAL wall seconds for DURATION seconds.

    nsenter --net=/proc/<NIC pid>/ns/net python -m controller.drills.pause_sender IFACE MAC PRIO INTERVAL DURATION

Run inside the host's network namespace (the drill starts it so); the frame is netbase's.
"""

from __future__ import annotations

import sys
import time

from netbase import pfc
from netbase.packet_socket import PacketSocketPort


def main(argv: list[str]) -> int:
    iface, mac, prio, interval, duration = argv[0], argv[1], int(argv[2]), float(argv[3]), float(argv[4])
    frame = pfc.build(bytes.fromhex(mac.replace(":", "")), {prio: 0xFFFF})
    port = PacketSocketPort(iface)
    end = time.monotonic() + duration
    try:
        while time.monotonic() < end:
            port.send(frame)
            time.sleep(interval)  # the storm's pace
    finally:
        port.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
