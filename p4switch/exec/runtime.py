"""Objects the generated code uses at run time: packet context, header stacks, the
exceptions that end a parser or a control, and the byte-buffer builders of hash/checksum
inputs. Kept separate from the code generator so that what runs per packet is small."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final, Protocol

from p4switch.exec.externs import random_in

log = logging.getLogger("p4switch.exec")

# Final: compiled modules that import these use their values, not a look-up in this module
DROP_PORT: Final = 511

# standard_metadata.instance_type values of BMv2 simple_switch
PKT_INSTANCE_TYPE_NORMAL: Final = 0
PKT_INSTANCE_TYPE_INGRESS_CLONE: Final = 1
PKT_INSTANCE_TYPE_EGRESS_CLONE: Final = 2
PKT_INSTANCE_TYPE_COALESCED: Final = 3
PKT_INSTANCE_TYPE_RECIRC: Final = 4
PKT_INSTANCE_TYPE_REPLICATION: Final = 5
PKT_INSTANCE_TYPE_RESUBMIT: Final = 6


class ParserError(Exception):
    """Ends parsing with ``code`` (an error member index); ``off`` is the byte offset after
    the last header extracted, where the payload starts (filled in by the parser)."""

    def __init__(self, code: int, off: int | None = None) -> None:
        self.code = code
        self.off = off


class ExitControl(Exception):
    """P4 ``exit``: ends the current pipeline control."""


class AssertionFailed(Exception):
    """v1model ``assert``/``assume`` with a false condition (BMv2 aborts; we drop the packet)."""


def log_message(logs: list, msg: str, values: tuple = ()) -> None:
    """v1model ``log_msg``: each ``{}`` of ``msg`` takes the next value; the text goes to the
    pipeline's bounded ``logs`` and to the log."""
    text = msg
    for v in values:
        text = text.replace("{}", str(v), 1)
    logs.append(text)
    if len(logs) > 1000:
        del logs[:500]
    log.info("log_msg: %s", text)


class PassContext(Protocol):
    """What the pipeline reads of a pass's context: a ``Context`` (Python backend) or the
    compiled module's native ``Ctx``, which are not related classes."""

    payload: bytes
    clone_session: int
    clone_fl: int | None
    resubmit_fl: int | None
    recirc_fl: int | None
    digests: tuple
    truncate: int


class Context:
    """Per-packet state of one pass through a pipeline control that is not a P4 variable:
    extern side effects collected for the end-of-pipeline logic. Fields that are rarely set
    default at class level (digests is a tuple, extended by ``+=``). The mypyc backend has
    a native class of the same fields instead (``native.CONTEXT_CLASS``)."""

    payload = b""
    clone_type: Any = None
    clone_session = 0
    clone_fl: int | None = None
    resubmit_fl: int | None = None
    recirc_fl: int | None = None
    digests: tuple = ()
    truncate = 0

    # per pipeline: V1Pipeline makes a subclass that binds these (no per-packet stores)
    randbits: Callable[[int], int]  # the switch's generator's ``getrandbits``
    logs: list
    objs: Any  # the compiled program's objects of this switch (``native.module_text``)
    # per packet, stored by the generated entry points (``entries.py``)
    sm: Any
    nbytes: int
    now: int

    def random(self, lo: int, hi: int) -> int:
        return random_in(self.randbits, lo, hi)

    def log_msg(self, msg: str, values: tuple = ()) -> None:
        log_message(self.logs, msg, values)
