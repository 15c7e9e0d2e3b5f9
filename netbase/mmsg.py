"""Many frames per system call on a packet socket: ``recvmmsg(2)`` and ``sendmmsg(2)`` through ctypes.

Why: Python's socket module reads one frame per ``recvmsg`` call, and a batch read that way
ends in one more call that fails with EAGAIN (an exception raised and caught in Python). At the
rates of the switch (tens of thousands of frames per second through one core) those calls are a
visible part of the I/O path. ``recvmmsg`` with MSG_DONTWAIT fills up to ``batch`` slots in one
call and returns how many it filled, so a wake-up costs one call whatever the batch; ``sendmmsg``
hands the kernel every frame a wake-up produced for one port in one call.

Each slot keeps what ``recvmsg`` gave: the frame, the sender's ``sockaddr_ll`` (its packet type
tells our own transmissions apart) and the ancillary data (PACKET_AUXDATA, for the VLAN tag the
kernel stripped). The receive loop hands out each frame as the wire had it: our own
transmissions skipped, a stripped VLAN tag put back (:func:`restore_vlan_tag`); the usual frame,
untagged, is told by one look at its slot's ancillary data, with no object made but the frame.
Slots are ``max_frame`` bytes each in an anonymous mapping, so memory is only used where frames
land (a 106-byte frame touches one page of its slot).

Sending copies each frame into a slot of its own (a ``memcpy`` of a short frame costs far less
than a ctypes object per frame would) and sets its iovec's length; the kernel treats each
message as the ``send`` it replaces, so a refused frame is refused alone, with its own errno.

Linux-only (as packet sockets are).
"""

from __future__ import annotations

import ctypes
import errno
import mmap
import os
import socket
import struct

MSG_DONTWAIT = 0x40
SOCKADDR_LL_SIZE = 20
SLL_PKTTYPE_OFFSET = 10  # sll_family u16, sll_protocol u16, sll_ifindex i32, sll_hatype u16, then sll_pkttype
SOL_PACKET = 263
PACKET_OUTGOING = 4  # sockaddr_ll.sll_pkttype of a copy of a frame sent from this host
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 1 << 4
TP_STATUS_VLAN_TPID_VALID = 1 << 6
ETH_P_8021Q = 0x8100
ETH_ADDRS_LEN = 12  # destination + source MAC: where an 802.1Q tag goes

# struct tpacket_auxdata: tp_status, tp_len, tp_snaplen, tp_mac, tp_net, tp_vlan_tci, tp_vlan_tpid
_AUXDATA = struct.Struct("=IIIHHHH")
AUX_SPACE = socket.CMSG_SPACE(_AUXDATA.size)  # the control buffer one frame's auxiliary data needs
_VLAN_TAG = struct.Struct("!HH")
_CMSG = struct.Struct("@Nii")  # struct cmsghdr: cmsg_len, cmsg_level, cmsg_type
_CMSG_DATA = socket.CMSG_LEN(0)  # where a control message's data starts
_AUX_CMSG_HEAD = _CMSG.pack(socket.CMSG_LEN(_AUXDATA.size), SOL_PACKET, PACKET_AUXDATA)
# the auxiliary data's control message header and its tp_status, read at once
_AUX_HEAD_AND_STATUS = struct.Struct(f"={_CMSG_DATA}sI")


def restore_vlan_tag(frame: bytes, control: bytes) -> bytes:
    """``frame`` with the 802.1Q/802.1ad tag the kernel stripped put back at offset 12, if its
    auxiliary data (the control messages of a PACKET_AUXDATA socket, as received) says it had one."""
    pos, end = 0, len(control)
    while pos + _CMSG.size <= end:
        length, level, kind = _CMSG.unpack_from(control, pos)
        if length < _CMSG.size:
            break
        if level == SOL_PACKET and kind == PACKET_AUXDATA and length >= _CMSG_DATA + _AUXDATA.size:
            status, _, _, _, _, tci, tpid = _AUXDATA.unpack_from(control, pos + _CMSG_DATA)
            if status & TP_STATUS_VLAN_VALID:
                if not status & TP_STATUS_VLAN_TPID_VALID:
                    tpid = ETH_P_8021Q
                return frame[:ETH_ADDRS_LEN] + _VLAN_TAG.pack(tpid, tci) + frame[ETH_ADDRS_LEN:]
            return frame
        pos += socket.CMSG_SPACE(length - _CMSG_DATA)
    return frame


class _IoVec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


class _MsgHdr(ctypes.Structure):
    _fields_ = [("msg_name", ctypes.c_void_p), ("msg_namelen", ctypes.c_uint32),
                ("msg_iov", ctypes.POINTER(_IoVec)), ("msg_iovlen", ctypes.c_size_t),
                ("msg_control", ctypes.c_void_p), ("msg_controllen", ctypes.c_size_t),
                ("msg_flags", ctypes.c_int)]


class _MMsgHdr(ctypes.Structure):
    _fields_ = [("msg_hdr", _MsgHdr), ("msg_len", ctypes.c_uint)]


# Fields of struct mmsghdr and struct iovec read and set per frame, through a memoryview of the
# array (cheaper in Python than a ctypes object per field access): on receive msg_controllen and
# msg_len in one read, on send iov_len.
_MMSG_SIZE = ctypes.sizeof(_MMsgHdr)
_IOV_SIZE = ctypes.sizeof(_IoVec)
_IOV_LEN_AT = _IoVec.iov_len.offset
_CONTROLLEN_AT = _MsgHdr.msg_controllen.offset
_SIZE_T = struct.Struct("@N")
_CONTROLLEN_AND_LEN = struct.Struct(f"@N{_MMsgHdr.msg_len.offset - _CONTROLLEN_AT - _SIZE_T.size}xI")

_libc = ctypes.CDLL(None, use_errno=True)
_recvmmsg = _libc.recvmmsg
_recvmmsg.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_void_p]
_recvmmsg.restype = ctypes.c_int
_sendmmsg = _libc.sendmmsg
_sendmmsg.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint, ctypes.c_int]
_sendmmsg.restype = ctypes.c_int


class _Slots:
    """``batch`` messages of one iovec each, the i-th pointing at bytes [i * max_frame, (i + 1) *
    max_frame) of an anonymous mapping (memory is used only where frames are written)."""

    def __init__(self, batch: int, max_frame: int) -> None:
        self.batch, self.max_frame = batch, max_frame
        self.frames = mmap.mmap(-1, batch * max_frame)
        self.iovs = (_IoVec * batch)()
        self.msgs = (_MMsgHdr * batch)()
        self.msgs_at = ctypes.addressof(self.msgs)  # passed as a plain address: the cheapest ctypes call
        frames = ctypes.addressof(ctypes.c_char.from_buffer(self.frames))
        for i in range(batch):
            self.iovs[i].iov_base, self.iovs[i].iov_len = frames + i * max_frame, max_frame
            self.msgs[i].msg_hdr.msg_iov, self.msgs[i].msg_hdr.msg_iovlen = ctypes.pointer(self.iovs[i]), 1

    def close(self) -> None:
        self.frames.close()


class BatchReceiver:
    """``recv(fd, n)``: up to ``n`` (at most ``batch``) waiting frames of a packet socket with
    PACKET_AUXDATA on, in one ``recvmmsg`` call, as the wire had them (PACKET_OUTGOING copies
    left out, a stripped VLAN tag put back); none waiting is an empty list, a failure an OSError
    as ``recvmsg`` would raise it."""

    def __init__(self, batch: int, max_frame: int, control_size: int) -> None:
        self.batch, self.max_frame, self.control_size = batch, max_frame, control_size
        self._slots = _Slots(batch, max_frame)
        self._frames = self._slots.frames
        self._names = ctypes.create_string_buffer(batch * SOCKADDR_LL_SIZE)
        self._controls = ctypes.create_string_buffer(batch * control_size)
        self._names_view = memoryview(self._names).cast("B")
        self._controls_view = memoryview(self._controls).cast("B")
        self._msgs_view = memoryview(self._slots.msgs).cast("B")
        self._msgs_at = self._slots.msgs_at
        names, controls = ctypes.addressof(self._names), ctypes.addressof(self._controls)
        for i in range(batch):
            hdr = self._slots.msgs[i].msg_hdr
            hdr.msg_name, hdr.msg_namelen = names + i * SOCKADDR_LL_SIZE, SOCKADDR_LL_SIZE
            hdr.msg_control, hdr.msg_controllen = controls + i * control_size, control_size

    def recv(self, fd: int, limit: int) -> list[bytes]:
        n = _recvmmsg(fd, self._msgs_at, min(limit, self.batch), MSG_DONTWAIT, None)
        if n < 0:
            err = ctypes.get_errno()
            if err in (errno.EAGAIN, errno.EINTR):
                return []
            raise OSError(err, os.strerror(err))
        out = []
        frames, names, controls, msgs = self._frames, self._names_view, self._controls_view, self._msgs_view
        max_frame, control_size = self.max_frame, self.control_size
        plain_head, plain_size = _AUX_CMSG_HEAD, _AUX_HEAD_AND_STATUS.size
        for i in range(n):
            at = i * _MMSG_SIZE
            used, length = _CONTROLLEN_AND_LEN.unpack_from(msgs, at + _CONTROLLEN_AT)
            # The kernel wrote back the control length (the address length stays what a
            # sockaddr_ll needs; msg_flags is output only): ready the slot for the next call.
            if used != control_size:
                _SIZE_T.pack_into(msgs, at + _CONTROLLEN_AT, control_size)
            if names[i * SOCKADDR_LL_SIZE + SLL_PKTTYPE_OFFSET] == PACKET_OUTGOING:
                continue  # a kernel without PACKET_IGNORE_OUTGOING looped our own frame back
            start, control_at = i * max_frame, i * control_size
            frame = frames[start:start + length]
            # Nearly every frame: the auxiliary data alone, no tag, told at a glance.
            if used >= plain_size:
                head, status = _AUX_HEAD_AND_STATUS.unpack_from(controls, control_at)
                if head == plain_head and not status & TP_STATUS_VLAN_VALID:
                    out.append(frame)
                    continue
            out.append(restore_vlan_tag(frame, bytes(controls[control_at:control_at + used])))
        return out

    def close(self) -> None:
        for view in (self._names_view, self._controls_view, self._msgs_view):
            view.release()
        self._slots.close()


class BatchSender:
    """``send(fd, frames)``: every frame out of a packet socket (bound to its interface, so no
    address per message) in ``sendmmsg`` calls of up to ``batch`` frames, in order; returns the
    errno of each frame the kernel refused (none: an empty list). A refused frame stops a call
    (the kernel reports its error on its own), so the next call starts after it: one frame is
    lost per error, never the frames behind it. A frame longer than ``max_frame`` is refused with
    EMSGSIZE without a call (the kernel refuses anything over the largest MTU, 64 KiB, as well)."""

    def __init__(self, batch: int, max_frame: int) -> None:
        self.batch, self.max_frame = batch, max_frame
        self._slots = _Slots(batch, max_frame)
        self._iovs_view = memoryview(self._slots.iovs).cast("B")

    def send(self, fd: int, frames: list[bytes]) -> list[int]:
        errors: list[int] = []
        buf, iovs, max_frame, batch = self._slots.frames, self._iovs_view, self.max_frame, self.batch
        n = 0
        for frame in frames:
            size = len(frame)
            if size > max_frame:
                errors.append(errno.EMSGSIZE)
                continue
            at = n * max_frame
            buf[at:at + size] = frame
            _SIZE_T.pack_into(iovs, n * _IOV_SIZE + _IOV_LEN_AT, size)
            n += 1
            if n == batch:
                self._send_slots(fd, n, errors)
                n = 0
        if n:
            self._send_slots(fd, n, errors)
        return errors

    def _send_slots(self, fd: int, n: int, errors: list[int]) -> None:
        """Send slots 0..n-1, skipping (and reporting) each one the kernel refuses."""
        msgs_at, start = self._slots.msgs_at, 0
        while start < n:
            sent = _sendmmsg(fd, msgs_at + start * _MMSG_SIZE, n - start, MSG_DONTWAIT)
            if sent > 0:
                start += sent
                continue
            err = ctypes.get_errno() if sent < 0 else errno.EAGAIN
            if err == errno.EINTR:
                continue
            errors.append(err)
            start += 1

    def close(self) -> None:
        self._iovs_view.release()
        self._slots.close()
