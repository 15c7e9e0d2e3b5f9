"""Many frames per system call on a packet socket: ``recvmmsg(2)`` through ctypes.

Why: Python's socket module reads one frame per ``recvmsg`` call, and a batch read that way
ends in one more call that fails with EAGAIN (an exception raised and caught in Python). At the
rates of the switch (tens of thousands of frames per second through one core) those calls are a
visible part of the I/O path. ``recvmmsg`` with MSG_DONTWAIT fills up to ``batch`` slots in one
call and returns how many it filled, so a wake-up costs one call whatever the batch.

Each slot keeps what ``recvmsg`` gave: the frame, the sender's ``sockaddr_ll`` (its packet type
tells our own transmissions apart) and the ancillary data (PACKET_AUXDATA, for the VLAN tag the
kernel stripped). Slots are ``max_frame`` bytes each in an anonymous mapping, so memory is only
used where frames land (a 106-byte frame touches one page of its slot).

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


# Fields of struct mmsghdr read and reset per frame, through a memoryview of the array (cheaper
# in Python than a ctypes object per field access): msg_controllen and msg_len in one read.
_MMSG_SIZE = ctypes.sizeof(_MMsgHdr)
_CONTROLLEN_AT = _MsgHdr.msg_controllen.offset
_CONTROLLEN = struct.Struct("@N")
_CONTROLLEN_AND_LEN = struct.Struct(f"@N{_MMsgHdr.msg_len.offset - _CONTROLLEN_AT - _CONTROLLEN.size}xI")

_libc = ctypes.CDLL(None, use_errno=True)
_recvmmsg = _libc.recvmmsg
_recvmmsg.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_void_p]
_recvmmsg.restype = ctypes.c_int


class BatchReceiver:
    """``recv(fd, n)``: up to ``n`` (at most ``batch``) waiting frames of a packet socket as
    (frame, sll_pkttype, the control buffer's bytes) in one ``recvmmsg`` call;
    none waiting is an empty list, a failure an OSError as ``recvmsg`` would raise it."""

    def __init__(self, batch: int, max_frame: int, control_size: int) -> None:
        self.batch, self.max_frame, self.control_size = batch, max_frame, control_size
        self._frames = mmap.mmap(-1, batch * max_frame)
        self._names = ctypes.create_string_buffer(batch * SOCKADDR_LL_SIZE)
        self._controls = ctypes.create_string_buffer(batch * control_size)
        self._names_view = memoryview(self._names).cast("B")
        self._controls_view = memoryview(self._controls).cast("B")
        self._iovs = (_IoVec * batch)()
        self._msgs = (_MMsgHdr * batch)()
        self._msgs_view = memoryview(self._msgs).cast("B")
        self._msgs_at = ctypes.addressof(self._msgs)  # passed as a plain address: the cheapest ctypes call
        frames = ctypes.addressof(ctypes.c_char.from_buffer(self._frames))
        names, controls = ctypes.addressof(self._names), ctypes.addressof(self._controls)
        for i in range(batch):
            self._iovs[i].iov_base, self._iovs[i].iov_len = frames + i * max_frame, max_frame
            hdr = self._msgs[i].msg_hdr
            hdr.msg_name, hdr.msg_namelen = names + i * SOCKADDR_LL_SIZE, SOCKADDR_LL_SIZE
            hdr.msg_iov, hdr.msg_iovlen = ctypes.pointer(self._iovs[i]), 1
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
                _CONTROLLEN.pack_into(msgs, at + _CONTROLLEN_AT, control_size)
        return out

    def close(self) -> None:
        for view in (self._names_view, self._controls_view, self._msgs_view):
            view.release()
        self._frames.close()
