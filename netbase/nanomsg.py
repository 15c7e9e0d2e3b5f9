"""A nanomsg PAIR socket through the C library (``libnanomsg``), for BMv2's packet-in port.

``simple_switch --packet-in ipc://PATH`` serves all of the switch's ports on one nanomsg PAIR
socket instead of interfaces, so a test can hand BMv2 a frame on any port and read what it
sends, without root or veths. The library is what BMv2 itself links (Debian
``libnanomsg5``); it is loaded with ctypes on first use, so importing this module needs
nothing, and a machine without it gets :class:`NanomsgUnavailable` naming the library.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno

AF_SP = 1
NN_PAIR = 16  # NN_PROTO_PAIR * 16
NN_SOL_SOCKET = 0
NN_SNDTIMEO = 4
NN_RCVTIMEO = 5
MAX_MESSAGE = 1 << 17  # a jumbo frame plus header fits


class NanomsgUnavailable(RuntimeError):
    """libnanomsg is not installed."""


class NanomsgError(OSError):
    """A nanomsg call failed (errno and nn_strerror's text)."""


_lib: ctypes.CDLL | None = None


def _library() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        name = ctypes.util.find_library("nanomsg") or "libnanomsg.so.5"
        try:
            lib = ctypes.CDLL(name, use_errno=True)
        except OSError:
            raise NanomsgUnavailable("libnanomsg (the nanomsg C library BMv2 links) is not installed") from None
        lib.nn_socket.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.nn_connect.argtypes = [ctypes.c_int, ctypes.c_char_p]
        lib.nn_bind.argtypes = [ctypes.c_int, ctypes.c_char_p]
        lib.nn_send.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        lib.nn_recv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        lib.nn_setsockopt.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
        lib.nn_close.argtypes = [ctypes.c_int]
        lib.nn_errno.restype = ctypes.c_int
        lib.nn_strerror.argtypes = [ctypes.c_int]
        lib.nn_strerror.restype = ctypes.c_char_p
        _lib = lib
    return _lib


class PairSocket:
    """One PAIR socket connected (or bound) to ``address`` (``ipc://...``, ``tcp://...``)."""

    def __init__(self, address: str, bind: bool = False) -> None:
        self._lib = _library()
        self._fd = self._check(self._lib.nn_socket(AF_SP, NN_PAIR), "nn_socket")
        (self._lib.nn_bind if bind else self._lib.nn_connect)(self._fd, address.encode())
        self._buf = ctypes.create_string_buffer(MAX_MESSAGE)

    def _check(self, rc: int, what: str) -> int:
        if rc < 0:
            code = self._lib.nn_errno()
            raise NanomsgError(code, f"{what}: {self._lib.nn_strerror(code).decode()}")
        return rc

    def _timeout(self, option: int, seconds: float) -> None:
        ms = ctypes.c_int(int(seconds * 1000))
        self._check(self._lib.nn_setsockopt(self._fd, NN_SOL_SOCKET, option, ctypes.byref(ms), ctypes.sizeof(ms)),
                    "nn_setsockopt")

    def send(self, data: bytes, timeout: float = 5.0) -> None:
        self._timeout(NN_SNDTIMEO, timeout)
        self._check(self._lib.nn_send(self._fd, data, len(data), 0), "nn_send")

    def recv(self, timeout: float) -> bytes | None:
        """The next message, or None when none arrives within ``timeout`` seconds."""
        self._timeout(NN_RCVTIMEO, timeout)
        n = self._lib.nn_recv(self._fd, self._buf, MAX_MESSAGE, 0)
        if n < 0:
            code = self._lib.nn_errno()
            if code in (errno.ETIMEDOUT, errno.EAGAIN):
                return None
            raise NanomsgError(code, f"nn_recv: {self._lib.nn_strerror(code).decode()}")
        return self._buf.raw[:n]

    def close(self) -> None:
        if self._fd >= 0:
            self._lib.nn_close(self._fd)
            self._fd = -1

    def __enter__(self) -> PairSocket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
