"""BMv2 ``simple_switch`` fed frame by frame through its nanomsg packet-in port: no root, no
veths, every port at once, so it runs wherever BMv2 is installed (the differential tester
and tests that compare our target with the reference).

``simple_switch --packet-in ipc://PATH`` takes a message ``{int type, int port, int len}``
(native byte order, type 3 = packet in) followed by the frame, and answers every frame it
transmits as type 4 (packet out) with the egress port. There is no message for a drop, so
:meth:`Bmv2PacketSwitch.send` waits ``settle`` seconds for the first frame and as long again
after each one; a packet that takes longer on a loaded machine would be counted with the next
one, which is why a divergence found this way is confirmed with a long ``settle`` before it is
reported. Table entries and the rest of the control plane go over BMv2's Thrift runtime port.
"""

from __future__ import annotations

import struct
from pathlib import Path

from lab.targets import TargetUnavailable, free_tcp_port, start_switch, tool
from netbase.nanomsg import NanomsgError, PairSocket
from p4rt.bmv2_runtime import Bmv2Runtime

MSG_PACKET_IN, MSG_PACKET_OUT = 3, 4
_HDR = struct.Struct("=iii")


def simple_switch() -> str:
    try:
        return tool("simple_switch")
    except TargetUnavailable:
        raise TargetUnavailable("simple_switch (BMv2) is not installed") from None


class Bmv2PacketSwitch:
    """One ``simple_switch`` process running ``json_path``; files (log, socket) in ``workdir``."""

    def __init__(self, json_path: str | Path, workdir: str | Path, settle: float = 0.05,
                 log_level: str = "off") -> None:
        work = Path(workdir)
        work.mkdir(parents=True, exist_ok=True)
        self.settle = settle
        thrift_port = free_tcp_port()
        address = f"ipc://{work.resolve() / 'packet-in.ipc'}"
        # its own notifications socket too: the default (/tmp/bmv2-0-notifications.ipc) is one
        # per machine, and a second simple_switch would fail to bind it
        notifications = f"ipc://{work.resolve() / 'notifications.ipc'}"
        cmd = [simple_switch(), "--packet-in", address, "--notifications-addr", notifications,
               "--thrift-port", str(thrift_port), "--log-level", log_level, "--log-console", str(json_path)]
        self.process = start_switch(cmd, f"127.0.0.1:{thrift_port}", thrift_port, work / "simple_switch.log")
        try:
            self.process.wait_ready(30)
            self.runtime = Bmv2Runtime(thrift_port)
            self.socket = PairSocket(address)
        except BaseException:
            self.process.stop()
            raise

    def send(self, port: int, frame: bytes, settle: float | None = None) -> list[tuple[int, bytes]]:
        """Sends one frame in on ``port``; the frames the switch sent out for it, in order."""
        wait = self.settle if settle is None else settle
        try:
            self.socket.send(_HDR.pack(MSG_PACKET_IN, port, len(frame)) + frame)
        except NanomsgError as e:  # BMv2 crashed on an earlier frame, or stopped reading
            code = self.process.proc.poll()
            state = f"exited with {code}" if code is not None else "still running"
            raise TargetUnavailable(f"simple_switch takes no more packets ({e}; it is {state}); "
                                    f"its log ends:\n{self.log_tail()}") from e
        out = []
        while (msg := self.socket.recv(wait)) is not None:
            kind, out_port, length = _HDR.unpack_from(msg)
            if kind == MSG_PACKET_OUT:
                out.append((out_port, msg[_HDR.size:_HDR.size + length]))
        return out

    def log_tail(self) -> str:
        return self.process.log_tail()

    def close(self) -> None:
        try:
            self.socket.close()
            self.runtime.close()
        finally:
            self.process.stop()

    def __enter__(self) -> Bmv2PacketSwitch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
