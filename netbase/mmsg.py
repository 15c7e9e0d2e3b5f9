"""Many frames per system call on a packet socket: ``recvmmsg(2)`` and ``sendmmsg(2)`` through ctypes.

Why: Python's socket module reads one frame per ``recvmsg`` call, and a batch read that way
ends in one more call that fails with EAGAIN (an exception raised and caught in Python). At the
rates of the switch (tens of thousands of frames per second through one core) those calls are a
visible part of the I/O path. ``recvmmsg`` with MSG_DONTWAIT fills up to ``batch`` slots in one
call and returns how many it filled, so a wake-up costs one call whatever the batch; ``sendmmsg``
hands the kernel every frame a wake-up produced for one port in one call.

Each slot keeps what ``recvmsg`` gave: the frame, the sender's ``sockaddr_ll`` (its packet type
tells our own transmissions apart) and the ancillary data (PACKET_AUXDATA, for the VLAN tag the
kernel stripped). Slots are ``max_frame`` bytes each in an anonymous mapping, so memory is only
used where frames land (a 106-byte frame touches one page of its slot).

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
import struct

MSG_DONTWAIT = 0x40
SOCKADDR_LL_SIZE = 20
SLL_PKTTYPE_OFFSET = 10  # sll_family u16, sll_protocol u16, sll_ifindex i32, sll_hatype u16, then sll_pkttype


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
    """``recv(fd, n)``: up to ``n`` (at most ``batch``) waiting frames of a packet socket as
    (frame, sll_pkttype, the control buffer's bytes) in one ``recvmmsg`` call;
    none waiting is an empty list, a failure an OSError as ``recvmsg`` would raise it."""

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

    def recv(self, fd: int, limit: int) -> list[tuple[bytes, int, bytes]]:
        n = _recvmmsg(fd, self._msgs_at, min(limit, self.batch), MSG_DONTWAIT, None)
        if n < 0:
            err = ctypes.get_errno()
            if err in (errno.EAGAIN, errno.EINTR):
                return []
            raise OSError(err, os.strerror(err))
        out = []
        frames, names, controls, msgs = self._frames, self._names_view, self._controls_view, self._msgs_view
        max_frame, control_size = self.max_frame, self.control_size
        for i in range(n):
            at = i * _MMSG_SIZE
            used, length = _CONTROLLEN_AND_LEN.unpack_from(msgs, at + _CONTROLLEN_AT)
            start, control_at = i * max_frame, i * control_size
            out.append((frames[start:start + length], names[i * SOCKADDR_LL_SIZE + SLL_PKTTYPE_OFFSET],
                        bytes(controls[control_at:control_at + used])))
            # The kernel wrote back the control length (the address length stays what a
            # sockaddr_ll needs; msg_flags is output only): ready the slot for the next call.
            if used != control_size:
                _SIZE_T.pack_into(msgs, at + _CONTROLLEN_AT, control_size)
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
