"""A host's injected traffic for the live drills: one frame, sent out of an interface every
INTERVAL wall seconds for DURATION seconds (a host stuck in a PFC storm sends an XOFF frame;
a congestion drill's background sender a UDP frame).

    nsenter --net=/proc/<NIC pid>/ns/net python -m controller.drills.frame_sender IFACE FRAME_HEX INTERVAL DURATION

Run inside the host's network namespace (the drill starts it so and builds the frame: pfc.build,
congestion.background_frame).
"""

from __future__ import annotations

import sys
import time

from netbase.packet_socket import PacketSocketPort


def main(argv: list[str]) -> int:
    iface, frame, interval, duration = argv[0], bytes.fromhex(argv[1]), float(argv[2]), float(argv[3])
    port = PacketSocketPort(iface)
    start = time.monotonic()
    end = start + duration
    sent = 0
    try:
        while time.monotonic() < end:
            port.send(frame)
            sent += 1
            if sent == 1:
                print("sending", flush=True)  # the drill waits for this line: the fault has begun
            # paced against the start, so a late wake-up does not lower the rate
            time.sleep(max(0.0, start + sent * interval - time.monotonic()))
    finally:
        port.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
