"""Objects the generated code uses at run time: packet context, header stacks, the
exceptions that end a parser or a control, and the byte-buffer builders of hash/checksum
inputs. Kept separate from the code generator so that what runs per packet is small."""

from __future__ import annotations

import logging
import random as _random
from typing import Any, Protocol

log = logging.getLogger("p4switch.exec")

DROP_PORT = 511

# standard_metadata.instance_type values of BMv2 simple_switch
PKT_INSTANCE_TYPE_NORMAL = 0
PKT_INSTANCE_TYPE_INGRESS_CLONE = 1
PKT_INSTANCE_TYPE_EGRESS_CLONE = 2
PKT_INSTANCE_TYPE_COALESCED = 3
PKT_INSTANCE_TYPE_RECIRC = 4
PKT_INSTANCE_TYPE_REPLICATION = 5
PKT_INSTANCE_TYPE_RESUBMIT = 6


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


class Stack:
    """A header stack: ``h`` the element headers, ``nxt`` the P4 ``nextIndex``."""

    __slots__ = ("h", "nxt", "size")

    def __init__(self, elems: list, nxt: int = 0) -> None:
        self.h = elems
        self.nxt = nxt
        self.size = len(elems)

    def copy(self) -> "Stack":
        return Stack([e.copy() for e in self.h], self.nxt)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stack) and self.h == other.h

    def at(self, index: int) -> Any:
        """Element ``index`` chosen at run time; out of range gives a detached invalid header,
        so reads see an invalid header and writes have no effect (the spec leaves the value
        undefined; BMv2 would fail the packet)."""
        if 0 <= index < self.size:
            return self.h[index]
        return type(self.h[0])()

    def next_elem(self, code_oob: int) -> Any:
        if self.nxt >= self.size:
            raise ParserError(code_oob)
        return self.h[self.nxt]

    def last_elem(self, code_oob: int) -> Any:
        if self.nxt == 0:
            raise ParserError(code_oob)
        return self.h[self.nxt - 1]

    def push_front(self, count: int) -> None:
        """Shift elements up by ``count``; the first ``count`` become invalid. As BMv2 does,
        the elements shifted out come back in front, invalid (their fields unchanged): no
        header is made or copied, which cost 13,000 instructions an INT hop."""
        count = min(count, self.size)
        if count > 0:
            keep = self.size - count
            moved = self.h[keep:]
            for f in moved:
                f.v_ = False
            self.h = moved + self.h[:keep]
        self.nxt = min(self.size, self.nxt + count)

    def pop_front(self, count: int) -> None:
        """Shift elements down by ``count``; the last ``count`` become invalid (the ones
        shifted out, as for ``push_front``)."""
        count = min(count, self.size)
        if count > 0:
            moved = self.h[:count]
            for f in moved:
                f.v_ = False
            self.h = self.h[count:] + moved
        self.nxt = max(0, self.nxt - count)


def assign_into(dst: Any, src: Any) -> None:
    """``param = value`` for a struct, header, union or stack parameter passed by reference:
    the caller's object takes the (fresh) value ``src``; rebinding the name would lose it."""
    if isinstance(dst, Stack):
        dst.h, dst.nxt = src.h, src.nxt
    else:  # a generated class: its fields named, as a mypyc-compiled object has no __dict__
        dst.assign(src)


def random_in(rng: _random.Random, lo: int, hi: int) -> int:
    """v1model ``random(result, lo, hi)``: uniform in [lo, hi]; ``lo`` when the range is empty."""
    return lo if hi <= lo else rng.randint(lo, hi)


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
    rng: _random.Random
    logs: list
    objs: Any  # the compiled program's objects of this switch (``native.module_text``)
    # per packet, stored by the generated entry points (``entries.py``)
    sm: Any
    nbytes: int
    now: int

    def random(self, lo: int, hi: int) -> int:
        return random_in(self.rng, lo, hi)

    def log_msg(self, msg: str, values: tuple = ()) -> None:
        log_message(self.logs, msg, values)
