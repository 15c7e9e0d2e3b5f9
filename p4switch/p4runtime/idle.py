"""Table idle-timeout notifications (P4Runtime spec, "Table Idle Timeout Notification").

The data plane stamps each hit of an entry of a ``support_timeout`` table with the fabric
time; :func:`idle_notification` is the periodic scan (the server's tick): every entry not hit
for at least its ``idle_timeout_ns`` goes into one ``IdleTimeoutNotification`` for the
primary, with its key (table id, match, priority), ``metadata`` and ``idle_timeout_ns``. The
entry's timer then restarts, so a still idle entry is reported again one TTL later, and an
entry that is hit in between is reported only once it has idled a whole TTL again. With no
primary the notification is dropped (the spec does not ask for reliable delivery).
"""

from __future__ import annotations

from typing import Any

from p4.v1 import p4runtime_pb2

from p4rt import codec as X
from p4rt.schema import Schema


def idle_notification(program: Any, schema: Schema, now_ns: int) -> p4runtime_pb2.IdleTimeoutNotification | None:
    """The entries that expired by ``now_ns`` (switch clock) in one message, or None when
    none did (the spec forbids empty notifications). The caller holds the device lock."""
    msg = p4runtime_pb2.IdleTimeoutNotification()
    for ts in schema.idle_tables:
        table = program.tables.get(ts.name)
        if table is None:
            continue
        for entry in table.idle_expired(now_ns // 1000):
            out = msg.table_entry.add()
            out.MergeFromString(X.entry_bytes(schema, ts, entry))
            out.ClearField("action")  # the key, metadata and TTL identify it; nothing else is asked for
    if not msg.table_entry:
        return None
    msg.timestamp = now_ns
    return msg
