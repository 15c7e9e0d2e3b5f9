"""What the controller's INT collector keeps of the reports fabric.p4's sinks send it.

Compiled with the data path (``netbase.hotpath.DATA_PATH``): in a simulation every data packet
that reaches a sink is reported, a packet-in each, straight to ``ReportLog.take``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from librt.vecs import append, vec
from mypy_extensions import i64

from nicmodel.int_md import (
    HOP_EGRESS_PORT,
    HOP_EGRESS_TS,
    HOP_LATENCY,
    HOP_QUEUE,
    HOP_SWITCH_ID,
    MD_LEN,
    be16,
    be32,
    ds_flags,
    report_stack,
    tick_ns,
    time_scale_field,
)

_FIELDS: Final = 6  # a record's integers


class ReportLog:
    """What a collector keeps of the INT reports it takes: for each hop record (source-side
    first) the switch id, egress port, egress timestamp, queue occupancy and hop latency as the
    report carries them, with its INT-MD header's units; the reports of each switch and the
    malformed ones counted. ``take(switch, packet_in)`` is a packet-in handler (the payload is
    the report frame, p4src/README.md "INT report format"); ``records`` names the fields when
    read. Kept as integers in one flat vector, ``_FIELDS`` a record: the fabric's sinks report
    every data packet, and a record as a tuple of a name, two floats and ints was ~150 bytes of
    objects the cyclic collector tracks, hundreds of thousands in a simulated run (a k=4 fat
    tree's run spent 13 % of its time on its reports that way). Not thread-safe: a simulation
    calls ``take`` from its one thread; the live collector (``Telemetry``) under its lock."""

    def __init__(self, names: dict[int, str], switches: Iterable[str] = ()) -> None:
        self.names = names  # switch id -> name; an id it lacks is "dev<id>"
        self.reports: dict[str, int] = {name: 0 for name in switches}
        self.malformed = 0
        self._fields: vec[i64] = vec[i64]()

    def __len__(self) -> int:
        return len(self._fields) // _FIELDS

    def take(self, switch: str, packet: Any) -> None:
        """Keep the hop records of the report in ``packet.payload`` that ``switch`` sent (a
        ``p4rt.packets.PacketIn`` in process, a protobuf PacketIn over gRPC); a payload that is
        not a report (``int_md.report_hops`` raises ValueError) counts as malformed."""
        frame: bytes = packet.payload
        try:
            md, hop_ml, after = report_stack(frame)
        except ValueError:
            self.malformed += 1
            return
        units = ds_flags(frame, md) << 16 | time_scale_field(frame, md)
        size, first = 4 * hop_ml, md + MD_LEN
        fields = self._fields
        off = after
        while off > first:  # the stack is newest first: walked from the end
            off -= size
            fields = append(fields, be32(frame, off + HOP_SWITCH_ID))
            fields = append(fields, be16(frame, off + HOP_EGRESS_PORT))
            fields = append(fields, be32(frame, off + HOP_EGRESS_TS))
            fields = append(fields, be32(frame, off + HOP_QUEUE) & 0xFFFFFF)  # occupancy (below the queue id)
            fields = append(fields, be32(frame, off + HOP_LATENCY))
            fields = append(fields, units)
        self._fields = fields
        self.reports[switch] = self.reports.get(switch, 0) + 1

    def records(self, start: int = 0) -> list[tuple[str, int, float, int, float]]:
        """The records from the ``start``-th on: (switch name, egress port, egress time,
        queue occupancy, hop latency), the times in fabric microseconds, the occupancy in the
        unit the INT-MD header's ds_flags name."""
        fields = self._fields
        names = self.names
        out = []
        for i in range(start * _FIELDS, len(fields), _FIELDS):
            sw = fields[i]
            units = fields[i + 5]
            us = tick_ns(units >> 16, units & 0xFFFF) / 1000
            name = names.get(sw)
            out.append((f"dev{sw}" if name is None else name, int(fields[i + 1]), int(fields[i + 2]) * us,
                        int(fields[i + 3]), int(fields[i + 4]) * us))
        return out
