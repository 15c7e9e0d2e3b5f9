"""Digest batching for the StreamChannel: DigestEntry configuration, lists, acks.

A digest is only sent once the controller configured it with a DigestEntry. Data is batched
into a DigestList of up to ``max_list_size`` items (0 = 1) or until ``max_timeout_ns`` has
passed since the first item waited; while a list is not acknowledged (and ``ack_timeout_ns``
has not passed), the same data is not sent again, which is how a learning switch avoids
flooding the controller with one MAC address. Lists are numbered from 1 and timestamped with
the switch's clock; with no primary connected they are dropped (nobody could ack them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from p4.v1 import p4data_pb2, p4runtime_pb2


@dataclass
class _Outstanding:
    digest_id: int
    keys: set[bytes]
    sent_ns: int


@dataclass
class _Pending:
    items: list[p4data_pb2.P4Data] = field(default_factory=list)
    first_ns: int = 0


class DigestBatcher:
    """Digest configuration and batching for one device (thread-safe: the data plane adds,
    the stream acks, a timer flushes)."""

    def __init__(self, send: Callable[[p4runtime_pb2.DigestList], None], now_ns: Callable[[], int],
                 on_waiting: Callable[[], None] | None = None) -> None:
        """``on_waiting`` is called when a list starts waiting for its ``max_timeout_ns``: the
        server's timer sleeps long while nothing waits and is woken by it."""
        self.send = send
        self.now_ns = now_ns
        self.on_waiting = on_waiting
        self.lock = threading.Lock()
        self.configs: dict[int, p4runtime_pb2.DigestEntry.Config] = {}
        self.pending: dict[int, _Pending] = {}
        self.outstanding: dict[int, _Outstanding] = {}
        self.next_list_id = 1
        self.dropped = 0

    def configure(self, digest_id: int, config: p4runtime_pb2.DigestEntry.Config) -> None:
        with self.lock:
            self.configs[digest_id] = config

    def remove(self, digest_id: int) -> None:
        with self.lock:
            self.configs.pop(digest_id, None)
            self.pending.pop(digest_id, None)

    def clear(self) -> None:
        with self.lock:
            self.configs.clear()
            self.pending.clear()
            self.outstanding.clear()

    def _in_flight(self, digest_id: int, key: bytes, now: int) -> bool:
        """Is this data waiting in a list not yet acknowledged, or in the pending list?
        Lists whose own digest's ack timeout passed (0: at once) are forgotten on the way."""
        for list_id, out in list(self.outstanding.items()):
            config = self.configs.get(out.digest_id)
            if config is None or now - out.sent_ns >= config.ack_timeout_ns:
                del self.outstanding[list_id]
                continue
            if out.digest_id == digest_id and key in out.keys:
                return True
        pending = self.pending.get(digest_id)
        return pending is not None and any(i.SerializeToString() == key for i in pending.items)

    def add(self, digest_id: int, data: p4data_pb2.P4Data) -> None:
        """One digest from the data plane (dropped when not configured)."""
        lists = []
        with self.lock:
            if digest_id not in self.configs:
                self.dropped += 1
                return
            now = self.now_ns()
            if self._in_flight(digest_id, data.SerializeToString(), now):
                return
            pending = self.pending.setdefault(digest_id, _Pending(first_ns=now))
            if not pending.items:
                pending.first_ns = now
            pending.items.append(data)
            if len(pending.items) >= max(1, self.configs[digest_id].max_list_size):
                lists.append(self._take(digest_id, now))
            waiting = len(pending.items) == 1 and not lists
        for lst in lists:
            self.send(lst)
        if waiting and self.on_waiting is not None:
            self.on_waiting()

    def flush_due(self) -> bool:
        """Send lists whose ``max_timeout_ns`` has expired (called by the server's timer);
        True while other lists still wait for theirs."""
        lists = []
        with self.lock:
            now = self.now_ns()
            for digest_id, pending in list(self.pending.items()):
                if pending.items and now - pending.first_ns >= self.configs[digest_id].max_timeout_ns:
                    lists.append(self._take(digest_id, now))
            waiting = any(p.items for p in self.pending.values())
        for lst in lists:
            self.send(lst)
        return waiting

    def _take(self, digest_id: int, now: int) -> p4runtime_pb2.DigestList:
        pending = self.pending.pop(digest_id)
        list_id = self.next_list_id
        self.next_list_id += 1
        self.outstanding[list_id] = _Outstanding(digest_id, {i.SerializeToString() for i in pending.items}, now)
        return p4runtime_pb2.DigestList(digest_id=digest_id, list_id=list_id, data=pending.items, timestamp=now)

    def ack(self, digest_id: int, list_id: int) -> bool:
        """A DigestListAck; False if no such list is waiting."""
        with self.lock:
            out = self.outstanding.get(list_id)
            if out is None or out.digest_id != digest_id:
                return False
            del self.outstanding[list_id]
            return True
