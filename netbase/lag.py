"""Scheduling lag: how late a live component ran against the dilated clock.

A live switch or NIC sleeps until its next fabric-time timer (a departure, a pacing slot, a
retransmission timeout). When the operating system wakes it late, or it is still busy with
earlier work, that timer fires late, and everything it does happens later in fabric time than
the modelled fabric says: queues look deeper, RTTs longer, completions later. Virtual-time
mode has no such error; live mode can only measure it and say so.

:class:`SchedulingLag` counts, per timer that came due, how late (fabric ns) the component
acted on it, in power-of-two buckets so that a reader can take the difference of two
snapshots (one run's lag out of a long-lived switch's totals) and still get percentiles.
Its text form (``sched_lag.*`` keys) is what the switch's ``switch_stats`` and the NIC's
counters carry.
"""

from __future__ import annotations

from collections.abc import Mapping

BUCKETS = 48  # bucket k holds lateness in [2^(k-1), 2^k) ns; bucket 0 holds "on time" (< 1 ns)
PREFIX = "sched_lag."


def _bucket(late_ns: int) -> int:
    return min(BUCKETS - 1, max(0, late_ns).bit_length())


class SchedulingLag:
    """Histogram of how late timers were acted on, in fabric nanoseconds."""

    def __init__(self, counts: list[int] | None = None, max_ns: int = 0) -> None:
        self.counts = list(counts) if counts is not None else [0] * BUCKETS
        self.max_ns = max_ns

    def record(self, due_ns: int, now_ns: int) -> None:
        """A timer due at ``due_ns`` is acted on at ``now_ns`` (only call once it is due)."""
        late = max(0, now_ns - due_ns)
        self.counts[_bucket(late)] += 1
        if late > self.max_ns:
            self.max_ns = late

    @property
    def timers(self) -> int:
        return sum(self.counts)

    def quantile_ns(self, q: float) -> int:
        """Upper bound of the bucket holding the q-quantile (0 when nothing was recorded)."""
        total = self.timers
        if total == 0:
            return 0
        need = q * total
        seen = 0
        for k, n in enumerate(self.counts):
            seen += n
            if seen >= need and n:
                return min((1 << k) - 1, self.max_ns)
        return self.max_ns

    def since(self, earlier: SchedulingLag) -> SchedulingLag:
        """The lag recorded after ``earlier`` was taken. Its maximum is bounded by the highest
        bucket that grew (the exact maximum may belong to before ``earlier``)."""
        counts = [a - b for a, b in zip(self.counts, earlier.counts)]
        top = max((k for k, n in enumerate(counts) if n), default=0)
        return SchedulingLag(counts, min(self.max_ns, (1 << top) - 1))

    def as_fields(self) -> dict[str, int]:
        """Flat ``sched_lag.*`` fields: timers, p50/p99/max in ns, and the raw buckets."""
        out = {f"{PREFIX}timers": self.timers, f"{PREFIX}p50_ns": self.quantile_ns(0.5),
               f"{PREFIX}p99_ns": self.quantile_ns(0.99), f"{PREFIX}max_ns": self.max_ns}
        out.update({f"{PREFIX}b{k}": n for k, n in enumerate(self.counts) if n})
        return out

    @classmethod
    def from_fields(cls, fields: Mapping[str, object]) -> SchedulingLag:
        """Back from :meth:`as_fields` (values may be strings, as in ``switch_stats`` text)."""
        counts = [0] * BUCKETS
        for k in range(BUCKETS):
            counts[k] = int(fields.get(f"{PREFIX}b{k}", 0) or 0)
        return cls(counts, int(fields.get(f"{PREFIX}max_ns", 0) or 0))
