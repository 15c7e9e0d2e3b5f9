"""Ctrl-C held back while the main thread is inside a gRPC call, raised right after it.

gRPC Python's ``Channel.close()`` waits until every call the channel began has ended. A
KeyboardInterrupt raised inside a blocking call (the signal handler runs at any bytecode of
gRPC's own Python code, also between a call's start and the wait for its end) can leave the
call registered for good, and the ``close()`` that follows, the CLI's ``with attached(...)``
on its way out, then waits forever: ``fabricctl telemetry`` sampling every millisecond hung in
1 of 13 interrupts. Each call has a deadline, so holding the interrupt back until the call is
over delays Ctrl-C by at most one call, and the session closes cleanly.

Only Python's default SIGINT handler is replaced: a program that installed its own keeps it
(and its own way of ending). Other threads never receive signals, so their calls need nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_depth = 0  # nesting of held() in the main thread
_pending = False  # a SIGINT came while held


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    global _pending
    if _depth:
        _pending = True
    else:
        signal.default_int_handler(signum, frame)


@contextmanager
def held() -> Iterator[None]:
    """Run the body with Ctrl-C deferred to its end (in the main thread; elsewhere as is)."""
    global _depth, _pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _pending:
            _pending = False
            raise KeyboardInterrupt
