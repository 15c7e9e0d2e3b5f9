"""Primary/backup arbitration of StreamChannel clients, as a pure state machine.

Rules implemented (default role only), as BMv2's P4Runtime server applies them, so that a
controller behaves the same on both targets:

* each stream announces an election id; two live streams may not share one
  (INVALID_ARGUMENT, the stream is closed);
* the connected client with the highest election id is the primary; when it goes away, the
  next highest becomes primary (an operator's tool with a higher id can take over for a while
  and hand control back when it exits);
* every arbitration answer carries the primary's election id and a status: OK for the
  primary, ALREADY_EXISTS for a backup;
* when the primary changes, every client is told; otherwise only the one that asked.

(P4Runtime 1.3+ also allows a stricter server that keeps the highest id ever seen and leaves
the role without primary after it disconnects; BMv2 does not, and neither do we.)

The server owns the streams; this class only decides who is told what.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import grpc

from p4rt.errors import P4RuntimeError


@dataclass(frozen=True)
class Notice:
    """Send an arbitration response with ``code`` to stream ``key``."""

    key: Hashable
    code: grpc.StatusCode


class Arbiter:
    """Election ids of the streams that arbitrated (default role), keyed by stream."""

    def __init__(self) -> None:
        self.clients: dict[Hashable, int] = {}  # changed only by update and remove
        self._primary: Hashable | None = None  # kept by them: asked for on every packet-in

    @property
    def highest(self) -> int | None:
        """The primary's election id (what every arbitration answer carries)."""
        return max(self.clients.values(), default=None)

    def primary(self) -> Hashable | None:
        """The stream of the primary client, None while no client has arbitrated."""
        return self._primary

    def _elect(self) -> None:
        highest = self.highest
        self._primary = next((key for key, election_id in self.clients.items() if election_id == highest), None)

    def is_primary(self, election_id: int) -> bool:
        """Does a request carrying ``election_id`` come from the current primary?"""
        return self.primary() is not None and election_id == self.highest

    def _code_for(self, key: Hashable) -> grpc.StatusCode:
        return grpc.StatusCode.OK if key == self.primary() else grpc.StatusCode.ALREADY_EXISTS

    def update(self, key: Hashable, election_id: int) -> list[Notice]:
        """A stream sent a MasterArbitrationUpdate. Raises P4RuntimeError to close it."""
        for other, other_id in self.clients.items():
            if other != key and other_id == election_id:
                raise P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT,
                                     f"election id {election_id} is already used by another client")
        before = self.primary()
        self.clients[key] = election_id
        self._elect()
        if self.primary() != before:
            return [Notice(k, self._code_for(k)) for k in self.clients]
        return [Notice(key, self._code_for(key))]

    def remove(self, key: Hashable) -> list[Notice]:
        """A stream closed; if it was the primary, tell the others who is primary now."""
        was_primary = self.primary() == key
        self.clients.pop(key, None)
        self._elect()
        if was_primary:
            return [Notice(k, self._code_for(k)) for k in self.clients]
        return []
