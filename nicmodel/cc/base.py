"""The interface between the transport core and a congestion-control algorithm.

The transport (one sender per queue pair) tells the algorithm what happened; the algorithm
answers with a pacing rate and, for window-based schemes, a window. All times are integer
nanoseconds of fabric time, all rates bits per second, sizes bytes. Algorithms are sans-IO
like the core: no clocks, no sockets; periodic work is asked for through ``next_timer``.
"""

from __future__ import annotations

from mypy_extensions import mypyc_attr


class HopInt:
    """One switch hop of echoed INT metadata (see p4src/include/INT_LAYOUT.md). A class with
    slots, as ``AckInfo``: every echoed ACK makes several, and compiled, a named tuple was made
    by a call of its class through the interpreter (~1,000 instructions with ``tuple.__new__``)
    and read by index with a boxed item each field; this one is a C call and slot reads (a
    frozen dataclass's ``__init__``, an ``object.__setattr__`` per field, cost 19,500).

    The field names say the BMv2 units; the INT-MD header's ds_flags and time_scale may say
    otherwise. ``ts_unit_ns`` is one tick of the hop latency and timestamps in fabric
    nanoseconds: 1000 for microseconds, 1 for nanoseconds, 1000 / D for BMv2's wall-clock
    microseconds in a fabric dilated D times. ``qdepth_in_bytes`` True: ``qdepth_pkts``
    counts bytes. ``link_rate_mbps`` is the port's rate in Mb/s of fabric time."""

    __slots__ = ("switch_id", "ingress_port", "egress_port", "hop_latency_us", "queue_id", "qdepth_pkts",
                 "ingress_ts_us", "egress_ts_us", "tx_bytes", "link_rate_mbps", "ts_unit_ns", "qdepth_in_bytes")

    def __init__(self, switch_id: int, ingress_port: int, egress_port: int, hop_latency_us: int, queue_id: int,
                 qdepth_pkts: int, ingress_ts_us: int, egress_ts_us: int, tx_bytes: int, link_rate_mbps: int,
                 ts_unit_ns: float = 1000, qdepth_in_bytes: bool = False) -> None:
        self.switch_id = switch_id
        self.ingress_port = ingress_port
        self.egress_port = egress_port
        self.hop_latency_us = hop_latency_us
        self.queue_id = queue_id
        self.qdepth_pkts = qdepth_pkts
        self.ingress_ts_us = ingress_ts_us
        self.egress_ts_us = egress_ts_us
        self.tx_bytes = tx_bytes
        self.link_rate_mbps = link_rate_mbps
        self.ts_unit_ns = ts_unit_ns
        self.qdepth_in_bytes = qdepth_in_bytes

    def _values(self) -> tuple:
        return (self.switch_id, self.ingress_port, self.egress_port, self.hop_latency_us, self.queue_id,
                self.qdepth_pkts, self.ingress_ts_us, self.egress_ts_us, self.tx_bytes, self.link_rate_mbps,
                self.ts_unit_ns, self.qdepth_in_bytes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HopInt) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return (f"HopInt(switch_id={self.switch_id}, ingress_port={self.ingress_port}, egress_port={self.egress_port}, "
                f"hop_latency_us={self.hop_latency_us}, queue_id={self.queue_id}, qdepth_pkts={self.qdepth_pkts}, "
                f"ingress_ts_us={self.ingress_ts_us}, egress_ts_us={self.egress_ts_us}, tx_bytes={self.tx_bytes}, "
                f"link_rate_mbps={self.link_rate_mbps}, ts_unit_ns={self.ts_unit_ns}, "
                f"qdepth_in_bytes={self.qdepth_in_bytes})")


class AckInfo:
    """What one ACK tells the sender. A class, not a named tuple as ``HopInt``: compiled, a
    named tuple is made by a Python call of its class (~4,400 instructions), this one by a C
    call, once an ACK."""

    def __init__(self, now_ns: int, acked_bytes: int, rtt_ns: int | None, ecn_echo: bool,
                 hops: tuple[HopInt, ...], acked_psn: int, next_psn: int) -> None:
        self.now_ns = now_ns
        self.acked_bytes = acked_bytes  # newly acknowledged bytes (cumulative progress, plus SACKed bytes)
        self.rtt_ns = rtt_ns  # sample from the acked packet's send time, if known
        self.ecn_echo = ecn_echo  # receiver saw CE on the acked data (used by RTT/ECN hybrids)
        self.hops = hops  # echoed INT, source-side hop first; empty without INT
        self.acked_psn = acked_psn  # highest PSN acknowledged (HPCC's per-RTT reference needs it)
        self.next_psn = next_psn  # next PSN the sender will use (snd_nxt) when the ACK arrived

    def __repr__(self) -> str:
        return (f"AckInfo(now_ns={self.now_ns}, acked_bytes={self.acked_bytes}, rtt_ns={self.rtt_ns}, "
                f"ecn_echo={self.ecn_echo}, hops={self.hops}, acked_psn={self.acked_psn}, next_psn={self.next_psn})")


# The algorithms run compiled (``netbase.hotpath.DATA_PATH``); a user's variant, or a test's recording one,
# subclasses them in Python, which a compiled class allows only when it says so.
@mypyc_attr(allow_interpreted_subclasses=True)
class CongestionControl:
    """Per-queue-pair algorithm: ``rate_bps`` paces packets; ``window_bytes`` (None for
    rate-only schemes) caps bytes in flight. Its handlers of the transport's events do
    nothing: an algorithm subclasses it and overrides only the events it reacts to, so each
    one reads as what it does (DCQCN: CNPs and bytes sent; HPCC and TIMELY: ACKs) rather than
    as a list of empty methods. A base class, not a protocol: compiled, the queue pair's calls
    and reads (several a packet) go through its vtable, where a protocol's are Python calls."""

    name: str
    rate_bps: float
    window_bytes: float | None = None

    def on_packet_sent(self, now_ns: int, nbytes: int, psn: int) -> None:
        return None

    def on_ack(self, ack: AckInfo) -> None:
        return None

    def on_cnp(self, now_ns: int) -> None:
        return None

    def on_timeout(self, now_ns: int) -> None:
        return None

    def on_timer(self, now_ns: int) -> None:
        return None

    def next_timer(self) -> int | None:
        """Absolute time of the next ``on_timer`` call the algorithm wants, or None."""
        return None


@mypyc_attr(allow_interpreted_subclasses=True)
class LineRate(CongestionControl):
    """No congestion control: always send at line rate (the comparison baseline)."""

    name = "none"

    def __init__(self, line_rate_bps: float) -> None:
        self.rate_bps = line_rate_bps


def clamp(value: float, low: float, high: float) -> float:
    """``value`` limited to [low, high]: every algorithm keeps its rate (or window) between
    a configured floor and what the line can carry."""
    return low if value < low else high if value > high else value


def ewma(average: float, sample: float, weight: float) -> float:
    """Exponentially weighted moving average: the new sample counts ``weight`` (0..1).
    DCQCN's alpha (g), TIMELY's RTT difference (alpha) and HPCC's utilisation (tau/T) are
    all this filter with different weights."""
    return (1 - weight) * average + weight * sample
