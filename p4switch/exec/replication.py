"""The packet replication engine (PRE): multicast groups and clone (mirroring) sessions,
configured by the control plane and used at the end of ingress/egress."""

from __future__ import annotations

from p4rt.entries import CloneSession, InvalidEntryError, NotFoundError, Replica

MAX_PORT = (1 << 9) - 1

# What the pipeline reads of a clone session for each copy it makes: (class of service,
# truncation length, the replicas' (port, instance)), in tuples the compiled pipeline unpacks
# as C values; a session's own attributes and its replicas' were a look-up by name each, eleven
# a clone (an INT report per data packet at its sink).
ClonePlan = tuple[int, int, tuple[tuple[int, int], ...]]


def _check_replicas(what: str, replicas: list[Replica]) -> None:
    seen = set()
    for r in replicas:
        if not 0 <= r.port <= MAX_PORT:
            raise InvalidEntryError(f"{what}: port {r.port} out of range")
        if not 0 <= r.instance < (1 << 16):
            raise InvalidEntryError(f"{what}: replica instance {r.instance} out of range")
        if (r.port, r.instance) in seen:
            raise InvalidEntryError(f"{what}: duplicate replica (port {r.port}, instance {r.instance})")
        seen.add((r.port, r.instance))


class PacketReplicationEngine:
    def __init__(self) -> None:
        self.mc_groups: dict[int, list[Replica]] = {}
        # the controller's opaque bytes per group (P4Runtime ``metadata``), given back on read
        self.mc_metadata: dict[int, bytes] = {}
        self.clone_sessions: dict[int, CloneSession] = {}
        self.clone_plans: dict[int, ClonePlan] = {}  # the same sessions as the pipeline reads them

    def set_mc_group(self, group_id: int, replicas: list[Replica], metadata: bytes = b"") -> None:
        """Create or replace multicast group ``group_id`` (1..65535)."""
        if not 1 <= group_id < (1 << 16):
            raise InvalidEntryError(f"multicast group id {group_id} out of range 1..65535")
        _check_replicas(f"multicast group {group_id}", replicas)
        self.mc_groups[group_id] = list(replicas)
        self.mc_metadata[group_id] = metadata

    def delete_mc_group(self, group_id: int) -> None:
        if group_id not in self.mc_groups:
            raise NotFoundError(f"no multicast group {group_id}")
        del self.mc_groups[group_id]
        del self.mc_metadata[group_id]

    def set_clone_session(self, session: CloneSession) -> None:
        if not 1 <= session.session_id < (1 << 32):
            raise InvalidEntryError(f"clone session id {session.session_id} out of range")
        if not 0 <= session.cos <= 7:
            raise InvalidEntryError(f"clone session {session.session_id}: class of service {session.cos} out of range 0..7")
        if session.truncate < 0:
            raise InvalidEntryError(f"clone session {session.session_id}: negative truncation length")
        _check_replicas(f"clone session {session.session_id}", session.replicas)
        self.clone_sessions[session.session_id] = CloneSession(
            session.session_id, list(session.replicas), session.cos, session.truncate)
        self.clone_plans[session.session_id] = (session.cos, session.truncate,
                                                tuple((r.port, r.instance) for r in session.replicas))

    def delete_clone_session(self, session_id: int) -> None:
        if session_id not in self.clone_sessions:
            raise NotFoundError(f"no clone session {session_id}")
        del self.clone_sessions[session_id]
        del self.clone_plans[session_id]
