"""Header stacks of the generated code (``hdr.s``): the element headers in a list, the P4
``nextIndex``. A module of its own so that it is compiled with the pipeline (``netbase.hotpath``'s
``DATA_PATH``): fabric.p4 pushes an INT hop at every switch, which interpreted cost 6,200
instructions a call (a frame, two ``min``, two slices), and its parser extracts each hop
into ``next``. The mypyc backend also compiles the class's source into each program's module
(``native.STACK_CLASS``), where the generated code types stacks as it."""

from __future__ import annotations

from typing import Any

from p4switch.exec.runtime import ParserError


class Stack:
    """A header stack: ``h`` the element headers, ``nxt`` the P4 ``nextIndex``."""

    def __init__(self, elems: list[Any], nxt: int = 0) -> None:
        self.h = elems
        self.nxt = nxt
        self.size = len(elems)

    def copy(self) -> "Stack":
        return Stack([e.copy() for e in self.h], self.nxt)

    def assign(self, x: Any) -> None:
        """``param = value`` for a stack parameter passed by reference (as the generated
        classes' ``assign``): this object takes the (fresh) value ``x``."""
        self.h, self.nxt = x.h, x.nxt

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
        h = self.h
        for _ in range(count):  # in place: an INT hop's push of one made three lists
            f = h.pop()
            f.v_ = False
            h.insert(0, f)
        self.nxt = min(self.size, self.nxt + count)

    def pop_front(self, count: int) -> None:
        """Shift elements down by ``count``; the last ``count`` become invalid (the ones
        shifted out, as for ``push_front``)."""
        count = min(count, self.size)
        h = self.h
        for _ in range(count):
            f = h.pop(0)
            f.v_ = False
            h.append(f)
        self.nxt = max(0, self.nxt - count)
