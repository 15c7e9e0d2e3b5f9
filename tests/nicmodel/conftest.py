"""A tiny in-test wire between two NICs, with chosen loss, reordering and duplication.

The rich simulated fabric lives in fabricsim/; here every frame's fate
is decided by a ``policy(direction, index, frame) -> list of extra delays`` (empty list =
drop, two entries = duplicate), so tests state exactly which packet is lost or late.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from types import SimpleNamespace

import pytest

from nicmodel import Nic, QpConfig, Reliability, roce

MAC_A = bytes.fromhex("020000000001")
MAC_B = bytes.fromhex("020000000002")
IP_A = bytes([10, 0, 0, 1])
IP_B = bytes([10, 0, 0, 2])

Policy = Callable[[str, int, bytes], list[int]]


def deliver_all(direction: str, index: int, frame: bytes) -> list[int]:
    return [0]


class Wire:
    """Two NICs back to back with a fixed one-way delay; ``run`` drives both until idle."""

    def __init__(self, a: Nic, b: Nic, delay_ns: int = 1_000, policy: Policy = deliver_all,
                 rewrite: Callable[[str, bytes], bytes] | None = None):
        self.a, self.b = a, b
        self.rewrite = rewrite  # what a switch does to a frame in flight (ECN marks, INT)
        self.delay_ns = delay_ns
        self.policy = policy
        self.now = 0
        self.sent: dict[str, list[bytes]] = {"ab": [], "ba": []}
        self.sent_ns: dict[str, list[int]] = {"ab": [], "ba": []}
        self.delivered: dict[str, list[bytes]] = {"ab": [], "ba": []}
        self._q: list[tuple[int, int, str, bytes]] = []
        self._n = 0

    def inject(self, direction: str, frame: bytes, at_ns: int | None = None) -> None:
        """Put a frame of our own making on the wire."""
        t = self.now if at_ns is None else at_ns
        heapq.heappush(self._q, (t, self._n, direction, frame))
        self._n += 1

    def _transmit(self) -> None:
        for nic, d in ((self.a, "ab"), (self.b, "ba")):
            while (f := nic.poll_transmit(self.now)) is not None:
                idx = len(self.sent[d])
                self.sent[d].append(f)
                self.sent_ns[d].append(self.now)
                if self.rewrite is not None:
                    f = self.rewrite(d, f)
                for extra in self.policy(d, idx, f):
                    self.inject(d, f, self.now + self.delay_ns + extra)

    def run(self, until_ns: int = 10**12, max_events: int = 1_000_000) -> int:
        for _ in range(max_events):
            self._transmit()
            times = [t for t in (self.a.next_wakeup(self.now), self.b.next_wakeup(self.now))
                     if t is not None]
            if self._q:
                times.append(self._q[0][0])
            if not times:
                return self.now
            nxt = max(self.now, min(times))
            if nxt > until_ns:
                self.now = until_ns
                return self.now
            self.now = nxt
            while self._q and self._q[0][0] <= self.now:
                _t, _n, d, f = heapq.heappop(self._q)
                self.delivered[d].append(f)
                (self.b if d == "ab" else self.a).receive(f, self.now)
        raise AssertionError("wire did not go idle")


def data_psns(frames: list[bytes]) -> list[int]:
    """PSNs of the data packets among ``frames``, in order."""
    out = []
    for f in frames:
        p = roce.parse(f)
        if p.opcode in roce.OP_DATA:
            out.append(p.psn)
    return out


def make_pair(reliability: Reliability = Reliability.GO_BACK_N, *, psn_a: int = 0,
              psn_b: int = 0, line_rate_bps: float = 100e9, cc_a=None, **cfg):
    """Two connected NICs with one QP each; ``cfg`` goes into both QpConfigs."""
    a = Nic(MAC_A, IP_A, line_rate_bps)
    b = Nic(MAC_B, IP_B, line_rate_bps)
    qa = a.create_qp(QpConfig(reliability=reliability, initial_psn=psn_a, **cfg), cc=cc_a)
    qb = b.create_qp(QpConfig(reliability=reliability, initial_psn=psn_b, **cfg))
    qa.connect(b.mac, b.ip, qb.qpn, psn_b)
    qb.connect(a.mac, a.ip, qa.qpn, psn_a)
    return a, b, qa, qb


@pytest.fixture
def net() -> SimpleNamespace:
    """The helpers above, for test modules (conftest cannot be imported by name)."""
    return SimpleNamespace(Wire=Wire, make_pair=make_pair, data_psns=data_psns,
                           deliver_all=deliver_all, MAC_A=MAC_A, MAC_B=MAC_B, IP_A=IP_A,
                           IP_B=IP_B)
