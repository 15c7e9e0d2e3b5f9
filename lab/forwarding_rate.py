"""Packets/s a switch target sustains on a program: the real process between two veths.

Closed loop: a sender keeps at most ``window`` frames in flight so that nothing is lost in
kernel buffers, and counts what comes out of the other port. Wall time, so the figure is what
the switch sustains on this machine *now* (load included): the benchmark reports it, and the
demo picks its time dilation from it. Works for either target (the program is pushed over
P4Runtime, as a controller does).
"""

from __future__ import annotations

import select
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lab.targets import Compiled, free_tcp_port, push_pipeline, start_switch, switch_command
from lab.veth import VethPairs
from netbase.packet_socket import PacketSocketPort

Route = tuple[str, dict, str, dict]  # table, match, action, params (p4rt_client names)


@dataclass
class Rate:
    pps: float
    sent: int
    received: int
    seconds: float
    switch_cpu_s: float  # CPU time of the switch process (all threads) while the frames flowed

    @property
    def cpu_us_per_frame(self) -> float:
        """The switch's CPU per delivered frame: unlike packets/s, it barely moves with the
        machine's load or with how the scheduler places the sender beside the switch."""
        return self.switch_cpu_s * 1e6 / self.received if self.received else 0.0


def forwarding_rate(target: str, compiled: Compiled, routes: list[Route], frame: bytes, *,
                    seconds: float = 1.0, max_frames: int = 20000, window: int = 64,
                    prefix: str = "fr", cpu_port: int | None = None, backend: str | None = None,
                    batched: bool = False) -> Rate:
    """Closed-loop packets/s of ``target`` running ``compiled`` and switching ``frame`` from
    port 1 to port 2 (``routes`` make it go there), for about ``seconds`` or ``max_frames``
    (``backend``: as for ``switch_command``). The sender sends a frame per system call, as
    the live fabric's NIC processes do (what the demo's calibration wants to know), or with
    ``batched`` refills the window with one ``sendmmsg``: then a sender that costs as much CPU
    per frame as the switch no longer bounds the loop (the benchmark's side-by-side runs)."""
    with tempfile.TemporaryDirectory() as work, VethPairs(2, prefix=prefix) as veths:
        grpc_addr, thrift = f"127.0.0.1:{free_tcp_port()}", free_tcp_port()
        cmd = switch_command(target, {1: veths.switch_side[0], 2: veths.switch_side[1]}, 1, grpc_addr, thrift,
                             cpu_port=cpu_port, log_console=False, backend=backend)
        proc = start_switch(cmd, grpc_addr, thrift, Path(work) / "switch.log")
        tx = rx = None
        try:
            proc.wait_ready()
            client = push_pipeline(grpc_addr, 1, compiled)
            try:
                for table, match, action, params in routes:
                    client.insert(client.table_entry(table, match, action, params))
            finally:
                client.close()
            tx, rx = PacketSocketPort(veths.host_side[0]), PacketSocketPort(veths.host_side[1])
            sent = received = written_off = 0
            cpu_before = proc.cpu_seconds()
            start = time.perf_counter()
            stop_at = start + seconds
            while received + written_off < max_frames and time.perf_counter() < stop_at:
                room = min(window - (sent - received - written_off), max_frames - sent)
                if room > 0 and batched:
                    sent += tx.send_frames([frame] * room)
                else:
                    for _ in range(room):
                        sent += tx.send(frame)
                if select.select([rx], [], [], 0.5)[0]:
                    while frames := rx.recv_frames(256):
                        received += len(frames)
                else:  # nothing for 0.5 s: what is in flight was lost; do not stall the window
                    written_off = sent - received
            elapsed = time.perf_counter() - start
            switch_cpu = proc.cpu_seconds() - cpu_before
        finally:
            for p in (tx, rx):
                if p is not None:
                    p.close()
            proc.stop()
    return Rate(received / elapsed if elapsed > 0 else 0.0, sent, received, elapsed, switch_cpu)
