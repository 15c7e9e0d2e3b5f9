"""Answers of the data plane's pure look-ups remembered per question: the hash of a field list
per field values, a table's matching entry per key.

Why: the packets of one flow ask the same questions again and again (an ECMP group's 5-tuple
hash, an ACL's ternary match), and each answer computed in Python costs thousands of
instructions where a dictionary probe costs a few hundred. The answers depend only on the
question (and a table's entries, whose memo is emptied when they change), so remembering them
changes no output. A memo holds at most ``ENTRIES`` answers and then starts again, so memory
stays bounded per object; a key not seen since then costs the probe and the insertion on top
(about 2,200 instructions a table look-up).
"""

from __future__ import annotations

from typing import Any

ENTRIES = 4096


def remember(memo: dict, key: Any, value: Any) -> Any:
    """Store ``value`` as ``memo``'s answer for ``key`` and return it."""
    if len(memo) >= ENTRIES:
        memo.clear()
    memo[key] = value
    return value
