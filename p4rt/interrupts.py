"""Ctrl-C held back while the main thread is inside a gRPC call, raised right after it.

gRPC Python's ``Channel.close()`` waits until every call the channel began has ended. A
KeyboardInterrupt raised inside a blocking call (the signal handler runs at any bytecode of
gRPC's own Python code, also between a call's start and the wait for its end) can leave the
call registered for good, and the ``close()`` that follows, the CLI's ``with attached(...)``
on its way out, then waits forever: ``fabricctl telemetry`` sampling every millisecond hung in
1 of 13 interrupts. Each call has a deadline, so holding the interrupt back until the call is
over delays Ctrl-C by at most one call, and the session closes cleanly.

A signal is held only while its handler is Python's ``signal.default_int_handler`` (SIGINT's
by default; ``make run`` gives SIGTERM the same, so that it tears down as Ctrl-C does): a
program that installed a handler of its own keeps it. Other threads never receive signals, so
their calls need nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

HELD = (signal.SIGINT, signal.SIGTERM)
_depth = 0  # nesting of held() in the main thread
_pending: int | None = None  # the signal that came while held


def _on_signal(signum: int, frame: FrameType | None) -> None:
    global _pending
    if _depth:
        _pending = signum
    else:
        signal.default_int_handler(signum, frame)


@contextmanager
def held() -> Iterator[None]:
    """Run the body with Ctrl-C deferred to its end (in the main thread; elsewhere as is)."""
    global _depth, _pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    for signum in HELD:
        if signal.getsignal(signum) is signal.default_int_handler:
            signal.signal(signum, _on_signal)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _pending is not None:
            signum, _pending = _pending, None
            signal.default_int_handler(signum, None)
