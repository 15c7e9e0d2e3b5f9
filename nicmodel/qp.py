"""One RC queue pair: the verbs handle an application holds (like an ``ibv_qp``), joining a
requester (sending half, nicmodel/requester.py) and a responder (receiving half,
nicmodel/responder.py) that share the QP's number, settings, state and counters.

The halves are sans-IO state machines that know no NIC: the ``Nic`` feeds them packets and
the time through this class and applies the ``Actions`` they return (completions to queue,
a control frame to schedule, a fatal error that moves the QP to ERROR). The only call from
a queue pair into its NIC is the doorbell of a verbs post (``Nic.touch``, and a flushed
completion when posting to a QP in ERROR), as ``ibv_post_send`` rings the adapter.

Reliability modes (``QpConfig.reliability``) and loss detection
(``QpConfig.loss_detection``) are described in the halves and in
nicmodel/loss_detection.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from nicmodel import roce
from nicmodel.actions import Actions
from nicmodel.cc.base import CongestionControl
from nicmodel.counters import QpCounters
from nicmodel.requester import Requester
from nicmodel.responder import Responder
from nicmodel.verbs import (
    Completion,
    MemoryRegion,
    QpConfig,
    QpState,
    Reliability,
    VerbsError,
    WcOpcode,
    WcStatus,
    parse_ip,
    parse_mac,
)

if TYPE_CHECKING:
    from nicmodel.nic import Nic

# Compiled, a read of ``QpState.RTS`` is a look-up of the enum class in the module's globals and
# of the member on it (~880 instructions, several a packet); a module's Final is a C static.
_RTS: Final = QpState.RTS


class QueuePair:
    """An RC queue pair. Create it with :meth:`Nic.create_qp`, then :meth:`connect`, then
    post work requests; the NIC's driver interface moves the packets."""

    def __init__(self, nic: Nic, qpn: int, config: QpConfig, cc: CongestionControl) -> None:
        config.validate()
        self.nic = nic
        self.qpn = qpn
        self.config = config
        self.state = QpState.RESET
        self.counters = QpCounters()
        self.mtu = config.mtu
        self.sr = config.reliability is Reliability.SELECTIVE_REPEAT
        self.priority = config.priority
        self.udp_sport = config.udp_sport or (0xC000 | ((qpn * 2654435761) >> 7 & 0x3FFF))
        self.dest_mac = b""
        self.dest_ip = b""
        self.dest_qpn = 0
        self.requester = Requester(qpn, config, cc, nic.line_rate_bps, self.counters)
        self.responder = Responder(qpn, config, self.counters, nic.memory_regions,
                                   nic.cnp_interval_ns, nic.cnp_priority, nic.roce_extensions)
        # scheduler bookkeeping, owned by the Nic: the time and tag of this QP's live entry
        # in the Nic's data and timer heaps, and whether it sits in the control queue
        self.sched_data: tuple[int, int] | None = None
        self.sched_timer: tuple[int, int] | None = None
        self.in_ctrl = False

    # ------------------------------------------------------------------ verbs

    def connect(self, dest_mac: bytes | str, dest_ip: bytes | str, dest_qpn: int, dest_psn: int) -> None:
        """Bring the QP to RTS towards the remote QP ``dest_qpn`` whose first PSN is
        ``dest_psn`` (what ibv_modify_qp to RTR/RTS sets). Addresses as ``Nic`` takes them:
        bytes, or ``"02:00:00:00:00:01"`` / ``"10.0.0.1"``."""
        dest_mac, dest_ip = parse_mac(dest_mac), parse_ip(dest_ip)
        if not 0 <= dest_qpn < 1 << 24 or not 0 <= dest_psn < 1 << 24:
            raise VerbsError("destination QPN and PSN must fit 24 bits")
        if self.state is not QpState.RESET:
            raise VerbsError(f"QP {self.qpn} is already {self.state.value}")
        self.dest_mac = dest_mac
        self.dest_ip = dest_ip
        self.dest_qpn = self.requester.dest_qpn = self.responder.dest_qpn = dest_qpn
        self.responder.epsn = dest_psn
        self._build_templates()
        self.state = QpState.RTS

    def set_entropy(self, udp_sport: int) -> None:
        """Change the UDP source port (flow entropy the fabric hashes on) from now on."""
        if not 0 < udp_sport < 65536:
            raise VerbsError(f"UDP source port {udp_sport}")
        self.udp_sport = udp_sport
        if self.dest_mac:
            self._build_templates()

    def _build_templates(self) -> None:
        nic, c = self.nic, self.config
        ecn = roce.ECN_ECT0 if c.ecn else roce.ECN_NOT_ECT
        self.requester.template = roce.FrameTemplate(nic.mac, self.dest_mac, nic.ip, self.dest_ip,
                                                     self.udp_sport, c.dscp, ecn)
        self.responder.ctrl_template = roce.FrameTemplate(
            nic.mac, self.dest_mac, nic.ip, self.dest_ip, self.udp_sport, c.dscp, roce.ECN_NOT_ECT)
        self.responder.cnp_template = roce.FrameTemplate(
            nic.mac, self.dest_mac, nic.ip, self.dest_ip, self.udp_sport, nic.cnp_dscp,
            roce.ECN_NOT_ECT)

    def post_write(self, wr_id: int, mr: MemoryRegion, offset: int, length: int,
                   remote_addr: int, rkey: int, imm: int | None = None) -> None:
        """RDMA WRITE ``length`` bytes from ``mr[offset:]`` to the remote ``remote_addr``
        under ``rkey``; with ``imm`` it is WRITE-with-immediate (consumes a remote receive
        WQE and completes there as RECV_RDMA_WITH_IMM)."""
        self._post(wr_id, True, mr, offset, length, remote_addr, rkey, imm)

    def post_send(self, wr_id: int, mr: MemoryRegion, offset: int, length: int,
                  imm: int | None = None) -> None:
        """SEND ``length`` bytes from ``mr[offset:]``; the remote consumes a receive WQE."""
        self._post(wr_id, False, mr, offset, length, 0, 0, imm)

    def post_recv(self, wr_id: int, mr: MemoryRegion, offset: int, length: int) -> None:
        """Post a receive WQE: the next incoming SEND lands in ``mr[offset:offset+length]``."""
        self._check_range(mr, offset, length)
        if self.state is QpState.ERROR:
            self.nic.complete(Completion(wr_id, self.qpn, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV,
                                         0, self.nic.now_ns))
            return
        self.responder.recv_wqes.append((wr_id, mr, offset, length))

    def _post(self, wr_id: int, is_write: bool, mr: MemoryRegion, offset: int, length: int,
              remote_addr: int, rkey: int, imm: int | None) -> None:
        self._check_range(mr, offset, length)
        if imm is not None and not 0 <= imm < 1 << 32:
            raise VerbsError("immediate data must fit 32 bits")
        if is_write and not (0 <= remote_addr < 1 << 64 and 0 <= rkey < 1 << 32):
            raise VerbsError("remote address must fit 64 bits and rkey 32 bits")
        if length >= 1 << 31:
            raise VerbsError("message length must be below 2 GiB")
        if self.state is QpState.RESET:
            raise VerbsError(f"QP {self.qpn} is not connected")
        if self.state is QpState.ERROR:
            op = WcOpcode.RDMA_WRITE if is_write else WcOpcode.SEND
            self.nic.complete(Completion(wr_id, self.qpn, WcStatus.WR_FLUSH_ERR, op, 0,
                                         self.nic.now_ns))
            return
        self.requester.post(wr_id, is_write, mr, offset, length, remote_addr, rkey, imm)
        self.nic.touch(self)

    @staticmethod
    def _check_range(mr: MemoryRegion, offset: int, length: int) -> None:
        if not isinstance(mr, MemoryRegion):
            raise VerbsError("work requests name a registered MemoryRegion")
        if offset < 0 or length < 0 or offset + length > mr.length:
            raise VerbsError(f"[{offset}, {offset + length}) is outside the {mr.length}-byte region")

    @property
    def cc(self) -> CongestionControl:
        """The requester's congestion control (replaceable, e.g. by a recording test)."""
        return self.requester.cc

    @cc.setter
    def cc(self, cc: CongestionControl) -> None:
        self.requester.cc = cc

    @property
    def outstanding_wrs(self) -> int:
        """Posted send work requests not yet completed."""
        return self.requester.outstanding_wrs

    @property
    def inflight_bytes(self) -> int:
        """Bytes sent and neither acknowledged nor judged lost."""
        return self.requester.inflight_bytes

    @property
    def inflight_cap(self) -> float:
        """The requester's cap on bytes in flight (below any congestion window)."""
        return self.requester.inflight_cap

    def reorder_window_ns(self) -> int:
        """RACK's current reorder window: how late a hole may be, behind a packet sent after
        it, before it counts as lost (0 for detectors without a time rule)."""
        return self.requester.reorder_window_ns()

    # ------------------------------------------------------------------ driven by the Nic

    def ready(self) -> bool:
        """Connected (RTS): sends and receives."""
        return self.state is _RTS

    def has_data(self) -> bool:
        """Something to (re)send, ignoring pacing, window and pause."""
        return self.ready() and self.requester.has_data()

    def send_ready_at(self, now_ns: int) -> int | None:
        """Earliest time the next data packet may leave (pacing, RNR wait), or None when the
        QP has nothing to send or its window is closed (an ACK will reopen it)."""
        if not self.ready():
            return None
        return self.requester.send_ready_at()

    def next_data_frame(self, now_ns: int) -> bytes | None:
        """Build the next data packet (the caller checked pacing, pause and window)."""
        return self.requester.next_data_frame(now_ns)

    def on_data(self, p: roce.Packet, now_ns: int) -> Actions:
        """A SEND or RDMA WRITE packet addressed to this QP's responder."""
        return self.responder.on_data(p, now_ns)

    def on_ack(self, p: roce.Packet, now_ns: int) -> Actions:
        """An ACK, NAK or RNR NAK addressed to this QP's requester."""
        return self._settle(self.requester.on_ack(p, now_ns), now_ns)

    def on_cnp(self, now_ns: int) -> None:
        """A CNP for this QP (reaction point of DCQCN)."""
        self.requester.on_cnp(now_ns)

    def has_control(self) -> bool:
        return self.responder.has_control()

    def control_priority(self) -> int:
        """PFC priority of the control packet :meth:`next_control_frame` would build."""
        return self.responder.control_priority(self.priority)

    def next_control_frame(self) -> bytes:
        """Build one pending control packet: CNP first, then NAK or ACK."""
        return self.responder.next_control_frame()

    def next_timer(self) -> int | None:
        """Earliest of the retransmission, loss-detection and congestion-control timers."""
        return self.requester.next_timer()

    def run_timers(self, now_ns: int) -> Actions:
        return self._settle(self.requester.run_timers(now_ns), now_ns)

    def _settle(self, out: Actions, now_ns: int) -> Actions:
        """A fatal requester error takes the whole QP to ERROR (IBA 10.3.1): its posted
        receive WQEs complete flushed after the send WQEs."""
        if out.fatal:
            out.completions.extend(self.responder.flush(now_ns))
            self.state = QpState.ERROR
        return out
