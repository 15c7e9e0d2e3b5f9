"""Live driver: the sans-IO NIC on a real interface, with a real (time-dilated) clock.

One loop per NIC: receive with a timeout equal to the NIC's next wake-up, feed frames in,
transmit while the NIC allows, let the workload post and consume completions. Fabric time
is wall-clock elapsed time divided by the time-dilation factor D (see DESIGN.md, "Time"),
so a 100 Gb/s NIC at D = 1000 sends at most 100 Mb/s of wall time while every timer and
rate inside runs at fabric scale.

``LiveNic`` is also the management API's service (nicmodel/mgmt.py): every method takes the
NIC lock, so requests from the management threads never race the loop.

A UDP socket is bound on ports 4791 and 4792 for the NIC's IP so that the host kernel,
which sees the same RoCEv2 packets as our raw socket, does not answer them with ICMP port
unreachable; those sockets are never read (a small receive buffer that silently overflows).
"""

from __future__ import annotations

import select
import socket
import threading
from typing import Any, Protocol

from netbase.clock import DilatedClock
from netbase.lag import SchedulingLag
from netbase.packet_socket import kernel_drop_totals
from nicmodel.mgmt import MgmtError
from nicmodel.nic import Nic, parse_ip, parse_mac
from nicmodel.roce import BTH_LEN, ICRC_LEN, IMM_LEN, IPV4_HLEN, RETH_LEN, UDP_HLEN
from nicmodel.settings import NicSettings
from nicmodel.stats import RunStats
from nicmodel.workloads import Endpoint, WorkloadSpec, nic_counters

IP_FREEBIND = 15
GUARD_PORTS = (4791, 4792)
MAX_IDLE_S = 0.05  # longest sleep, so stop() and new work are noticed promptly
RX_BATCH = 256


# A controller starts the hosts' workloads one after another; a WRITE reaching a peer whose
# queue pairs are not set up yet would be dropped there and resent only after a timeout
# (a whole message late, and counted as retransmissions). So, unless the spec says
# otherwise (``start_delay_ns``), a live NIC waits this much wall time before its first message.
LIVE_START_GRACE_S = 0.25

# IPv4 + UDP + BTH + RETH + ImmDt + ICRC around a full payload: the largest IP packet the NIC
# sends (a WRITE-only-with-immediate carries both RETH and ImmDt).
ROCE_IP_OVERHEAD = IPV4_HLEN + UDP_HLEN + BTH_LEN + RETH_LEN + IMM_LEN + ICRC_LEN


class FramePort(Protocol):
    """What the loop needs from a port: a selectable fd, non-blocking receive, send, and
    the interface's IP MTU (None: no limit). On a real interface this is
    :class:`netbase.packet_socket.PacketSocketPort`, which also counts the frames the kernel
    loses (``kernel_drops``)."""

    ip_mtu: int | None

    def fileno(self) -> int: ...
    def recv_frames(self, limit: int) -> list[bytes]: ...
    def send(self, frame: bytes) -> bool: ...
    def close(self) -> None: ...


class DatagramPort:
    """A port over a connected datagram socket (one frame per datagram): a wire between two
    live NICs in one process, for tests without interfaces."""

    ip_mtu: int | None = None

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sock.setblocking(False)

    def fileno(self) -> int:
        return self.sock.fileno()

    def recv_frames(self, limit: int) -> list[bytes]:
        frames = []
        for _ in range(limit):
            try:
                frames.append(self.sock.recv(65535))
            except (BlockingIOError, InterruptedError):
                break
        return frames

    def send(self, frame: bytes) -> bool:
        try:
            self.sock.send(frame)
        except OSError:
            return False  # peer gone or buffer full: a lost frame, as on a wire
        return True

    def close(self) -> None:
        self.sock.close()


def bind_guard_sockets(ip: str) -> list[socket.socket]:
    """UDP sockets on the RoCEv2 and INT ports of ``ip`` so the kernel stays quiet."""
    socks = []
    for port in GUARD_PORTS:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_IP, IP_FREEBIND, 1)  # the address need not be configured yet
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            s.bind((ip, port))
        except OSError as exc:
            s.close()
            for other in socks:
                other.close()
            raise ValueError(f"cannot bind UDP {ip}:{port} (another NIC on this IP?): {exc}") from exc
        socks.append(s)
    return socks


class LiveNic:
    """A NIC model running on a port in a background thread, managed through its methods
    (the management API's service)."""

    def __init__(self, port: FramePort, ip: str, mac: str, *, line_rate_bps: float = 100e9,
                 time_dilation: float = 1.0, gateway_mac: str | None = None,
                 settings: NicSettings | None = None, guard_udp: bool = True,
                 nic_options: dict[str, Any] | None = None) -> None:
        parse_ip(ip)
        parse_mac(mac)
        self.port = port
        self.ip, self.mac = ip, mac
        self.line_rate_bps = float(line_rate_bps)
        self.gateway_mac = parse_mac(gateway_mac) if gateway_mac else None
        self.clock = DilatedClock(time_dilation)
        self.settings = settings or NicSettings()
        self._check_settings(self.settings)
        self.nic_options = dict(nic_options or {})
        self.lock = threading.RLock()
        self._guards = bind_guard_sockets(ip) if guard_udp else []
        self._new_nic()
        self._stop = threading.Event()
        self._wake_r, self._wake_w = socket.socketpair()  # lets requests interrupt the sleep
        self._wake_r.setblocking(False)
        self._thread: threading.Thread | None = None
        self.loop_errors: list[str] = []

    def _check_settings(self, settings: NicSettings) -> None:
        settings.validate(self.line_rate_bps)
        mtu = self.port.ip_mtu
        if mtu is not None and settings.mtu + ROCE_IP_OVERHEAD > mtu:
            raise ValueError(f"RoCE MTU {settings.mtu} needs an interface MTU of at least "
                             f"{settings.mtu + ROCE_IP_OVERHEAD}; the interface has {mtu}")

    def _new_nic(self) -> None:
        """A fresh NIC: workloads rely on identical set-up on every host (see workloads)."""
        self.nic = Nic(self.mac, self.ip, self.line_rate_bps, **self.nic_options)
        self.endpoint: Endpoint | None = None
        self.run_stats = RunStats(self.line_rate_bps, self.settings.base_rtt_ns, self.settings.mtu)
        self._started_ns = self.clock.now_ns()
        self.sched_lag = SchedulingLag()  # how late the loop acted on due timers, this run
        self._kernel_drops_at_start = self._port_kernel_drops()

    def _port_kernel_drops(self) -> dict[str, int]:
        """Frames the kernel lost on the port so far, by reason (packet-socket ports only)."""
        kernel_drops = getattr(self.port, "kernel_drops", None)
        return kernel_drops() if kernel_drops is not None else {}

    # -- the loop -----------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("already running")
        self._thread = threading.Thread(target=self._loop, name=f"rnic-{self.ip}", daemon=True)
        self._thread.start()

    def _poke(self) -> None:
        """Wake the loop now (new work was posted from a management thread)."""
        try:
            self._wake_w.send(b"\0")
        except OSError:
            pass  # already a byte pending (buffer full) or closed: the loop wakes anyway

    def stop(self) -> None:
        self._stop.set()
        self._poke()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def close(self) -> None:
        self.stop()
        self.port.close()
        for s in self._guards:
            s.close()
        self._guards = []
        self._wake_r.close()
        self._wake_w.close()

    def step(self) -> int | None:
        """One pass: receive what is there, act, transmit what is allowed. Returns the
        fabric time of the next wake-up (None: only a frame or a request can create work)."""
        with self.lock:
            nic, ep = self.nic, self.endpoint
            now = self.clock.now_ns()
            for frame in self.port.recv_frames(RX_BATCH):
                nic.receive(frame, now)
            if ep is not None:
                ep.poll(now)
            while (frame := nic.poll_transmit(now)) is not None:
                self.port.send(frame)
            if ep is not None:
                ep.poll(now)
            wake = nic.next_wakeup(now)
            if ep is not None and (e := ep.next_wakeup()) is not None:
                wake = e if wake is None else min(wake, e)
            return wake

    def _loop(self) -> None:
        fds = [self.port.fileno(), self._wake_r.fileno()]
        due: int | None = None  # the fabric time of the timer the loop last slept for
        while not self._stop.is_set():
            if due is not None and (now := self.clock.now_ns()) >= due:
                self.sched_lag.record(due, now)
                due = None
            try:
                wake = self.step()
            except Exception as exc:  # a bug must not silently kill the NIC: record, go on
                self.loop_errors = (self.loop_errors + [f"{type(exc).__name__}: {exc}"])[-20:]
                wake = None
            if wake is None:
                timeout = MAX_IDLE_S
            else:
                due = wake
                timeout = min(MAX_IDLE_S, max(0.0, self.clock.wall_seconds(wake - self.clock.now_ns())))
            if timeout > 0:
                ready, _, _ = select.select(fds, [], [], timeout)
                if self._wake_r.fileno() in ready:
                    try:
                        self._wake_r.recv(4096)
                    except BlockingIOError:
                        pass

    # -- management API (nicmodel.mgmt.NicService) --------------------------------------
    def status(self) -> dict[str, Any]:
        with self.lock:
            now = self.clock.now_ns()
            return {
                "ip": self.ip, "mac": self.mac, "line_rate_bps": self.line_rate_bps,
                "time_dilation": self.clock.dilation, "now_ns": now, "config": self.settings.as_dict(),
                "qps": sorted(qp.qpn for qp in self.nic.qps),
                "workload": self.endpoint.status() if self.endpoint else None,
                "counters": nic_counters(self.nic, now), "loop_errors": list(self.loop_errors),
            }

    def configure(self, **params: Any) -> dict[str, Any]:
        """Change settings for the next workload; all-or-nothing (validated first)."""
        with self.lock:
            fields = set(NicSettings.__dataclass_fields__)
            unknown = sorted(set(params) - fields)
            if unknown:
                raise ValueError(f"unknown setting(s) {unknown}; valid: {sorted(fields)}")
            merged = {**self.settings.as_dict(), **params}
            settings = NicSettings(**merged)
            self._check_settings(settings)
            self.settings = settings
            return {"config": settings.as_dict()}

    def start_workload(self, spec: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            if self.endpoint is not None and not self.endpoint.done:
                raise MgmtError("bad_state", "a workload is running; wait for it or call reset")
            if isinstance(spec, dict) and "start_delay_ns" not in spec:
                spec = {**spec, "start_delay_ns": int(LIVE_START_GRACE_S * 1e9 / self.clock.dilation)}
            ws = WorkloadSpec.from_dict(spec)
            if ws.peer(ws.rank).ip != self.ip:
                raise ValueError(f"rank {ws.rank} is {ws.peer(ws.rank).ip}, but this NIC is {self.ip}")
            self._new_nic()
            self.endpoint = Endpoint(self.nic, ws, self.settings, self.run_stats, host=self.ip,
                                     gateway_mac=self.gateway_mac)
            self.endpoint.start(self.clock.now_ns())
            self._poke()
            return {"started": True, "rank": ws.rank, "kind": ws.kind}

    def workload_status(self) -> dict[str, Any]:
        with self.lock:
            if self.endpoint is None:
                return {"kind": None, "progress": 0.0, "done": False, "errors": []}
            return self.endpoint.status()

    def stats(self) -> dict[str, Any]:
        with self.lock:
            now = self.clock.now_ns()
            start = self._kernel_drops_at_start
            kernel = {r: n - start.get(r, 0) for r, n in self._port_kernel_drops().items()}  # this run's
            self.run_stats.nic_counters[self.ip] = {
                **nic_counters(self.nic, now),
                **kernel_drop_totals(kernel),
                **{f"kernel_{r}": n for r, n in kernel.items()},
                **self.sched_lag.as_fields(),
            }
            self.run_stats.elapsed_ns = now - self._started_ns
            return self.run_stats.to_dict()

    def reset(self) -> dict[str, Any]:
        with self.lock:
            self._new_nic()
            return {"reset": True}

    def workload_result(self) -> bytes | None:
        """The receive region's bytes (for tests and the CLI's data checks)."""
        with self.lock:
            if self.endpoint is None or self.endpoint.recv_mr.buf is None:
                return None
            return bytes(self.endpoint.recv_mr.buf)
