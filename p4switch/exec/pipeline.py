"""The v1model pipeline around the generated code: parser -> verify checksum -> ingress ->
(traffic manager, outside) -> egress -> compute checksum -> deparser, with BMv2
simple_switch's end-of-ingress and end-of-egress logic (docs/simple_switch.md):

end of ingress: I2E clone and digest, then resubmit, else multicast (mcast_grp != 0), else
drop (egress_spec == 511), else unicast to egress_spec.
end of egress: E2E clone, then drop (egress_spec == 511), else recirculate, else transmit.

An I2E clone is the packet as it was when this ingress pass began, parsed again; an E2E clone
carries the headers as they are at the end of egress and restarts at egress without parser
or deparser. Preserved field lists (@field_list) carry user metadata into clones, resubmitted
and recirculated packets; every other metadata field starts at zero. For clones that holds
after the I2E re-parse too: simple_switch resets all metadata (user metadata the parser set,
ingress_port, timestamps, parser_error) once the parser has run, then copies the preserved
fields; only instance_type and packet_length survive, and egress sets its own fields.

Nothing here raises on a bad packet: parser errors are recorded in parser_error (the packet
continues, as in BMv2) and any failure inside the program drops the packet and is counted.
"""

from __future__ import annotations

import collections
import logging
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from librt.vecs import vec
from mypy_extensions import i64, mypyc_attr

from p4switch.exec.program import LoadedProgram
from p4switch.exec.replication import ClonePlan
from p4switch.exec.runtime import (
    DROP_PORT,
    PKT_INSTANCE_TYPE_EGRESS_CLONE,
    PKT_INSTANCE_TYPE_INGRESS_CLONE,
    PKT_INSTANCE_TYPE_NORMAL,
    PKT_INSTANCE_TYPE_RECIRC,
    PKT_INSTANCE_TYPE_REPLICATION,
    PKT_INSTANCE_TYPE_RESUBMIT,
    AssertionFailed,
    Context,
    PassContext,
)

log = logging.getLogger("p4switch.exec")


# what a clone, resubmit or recirculation carries of the user metadata: the field list's
# setter (``Compiled.field_lists``) and its values; (None, ()) for no field list
Preserved = tuple[Callable[[Any, tuple], None] | None, tuple]
_NOTHING_PRESERVED: Preserved = (None, ())
# what ``E_ingress`` returns (entries.py): hdr, meta, sm, ctx, then the egress spec (-1: more
# than a unicast or a drop, and a clone), priority, instance type and payload of the packet's
# EgressJob, and the clone session asked for (0: none)
Parsed = tuple[Any, Any, Any, Any, int, int, int, bytes, int]


@dataclass
class DigestMessage:
    name: str
    fields: list[tuple[str, int, int]]  # (field name, width, value)


class QueueMeta:
    """What egress reads of the queue a packet left. The traffic manager's ``Departure`` is
    one (a subclass), passed as it is: typed so, compiled, egress reads the four fields from
    their slots (through a protocol each read was a generic attribute look-up, ~260
    instructions)."""

    def __init__(self, enq_timestamp: int = 0, enq_qdepth: int = 0, deq_timedelta: int = 0,
                 deq_qdepth: int = 0) -> None:
        self.enq_timestamp = enq_timestamp
        self.enq_qdepth = enq_qdepth
        self.deq_timedelta = deq_timedelta
        self.deq_qdepth = deq_qdepth


class EgressJob:
    """A packet between ingress and egress (what the traffic manager queues)."""

    __slots__ = ("egress_port", "priority", "packet_length", "instance_type", "egress_rid",
                 "truncate", "hdr", "meta", "sm", "payload")

    def __init__(self, egress_port: int, priority: int, packet_length: int, instance_type: int,
                 egress_rid: int, hdr: Any, meta: Any, sm: Any, payload: bytes, truncate: int = 0) -> None:
        self.egress_port = egress_port
        self.priority = priority
        self.packet_length = packet_length
        self.instance_type = instance_type
        self.egress_rid = egress_rid
        self.truncate = truncate
        # the packet's state after ingress, as fields (a tuple of them was an object more a packet)
        self.hdr = hdr
        self.meta = meta
        self.sm = sm
        self.payload = payload

    def __repr__(self) -> str:
        return (f"EgressJob(port={self.egress_port}, prio={self.priority}, len={self.packet_length}, "
                f"type={self.instance_type}, rid={self.egress_rid})")


class IngressResult:
    """What one packet's ingress produced: jobs for the traffic manager and digests."""

    __slots__ = ("to_egress", "digests")

    def __init__(self) -> None:
        self.to_egress: list[EgressJob] = []
        self.digests: list[DigestMessage] = []

    def clear(self) -> None:
        self.to_egress.clear()
        self.digests.clear()


class EgressResult:
    """What one egress pass produced: frames to send, E2E clones for the traffic manager,
    frames to recirculate (``(port, RecirculatedFrame)``)."""

    __slots__ = ("transmit", "to_egress", "recirculate")

    def __init__(self) -> None:
        self.transmit: list[tuple[int, bytes]] = []
        self.to_egress: list[EgressJob] = []
        self.recirculate: list[tuple[int, bytes]] = []

    def clear(self) -> None:
        self.transmit.clear()
        self.to_egress.clear()
        self.recirculate.clear()


@mypyc_attr(native_class=False)  # compiled (``netbase.hotpath``), a subclass of bytes must stay a Python class
class RecirculatedFrame(bytes):
    """A frame sent back to ingress by ``recirculate``: bytes that also carry the preserved
    user metadata, so that feeding it to ``V1Pipeline.ingress`` starts a RECIRC pass."""

    preserved: Preserved
    instance_type: int


class V1Pipeline:
    """The per-packet half of the target: ``ingress`` and ``egress`` are the two pipeline
    halves around the traffic manager (which the switch owns), ``process`` runs both with
    empty queues. Control-plane state lives in ``prog``; the caller serializes access."""

    def __init__(self, prog: LoadedProgram, cpu_port: int | None = None, seed: int = 0,
                 max_passes: int = 16) -> None:
        self.prog = prog
        self.cpu_port = cpu_port
        self.max_passes = max_passes
        self.rng = random.Random(seed)
        self.logs: list[str] = []
        # every event by name, 0 when it never happened: a ``defaultdict``, a C type (a
        # ``Counter``'s item update goes through its Python class's slot, ~1,000 instructions,
        # a clone's count one of them)
        self._stats: collections.defaultdict[str, int] = collections.defaultdict(int)
        # the counters every packet (or every INT report's clone) moves are plain ints, folded
        # into ``stats`` on read
        self._packets_in = 0
        self._packets_out = 0
        self._cloned = 0
        e = prog.entries  # the generated per-packet work of each half (entries.py)
        self._begin, self._egress_pass, self._deparse = e["E_ingress"], e["E_egress"], e["E_deparse"]
        # typed: compiled, its pair is unpacked as a C tuple (an untyped one went through an iterator)
        self._clone_state: Callable[[Preserved, int, int], tuple[Any, Any]] = e["E_clone_state"]
        c = prog.compiled
        self._count_parser_error = self._parser_error  # bound once, passed with every packet
        self._fl = prog.field_lists
        self._clone_plans: dict[int, ClonePlan] = prog.pre.clone_plans  # changed in place by the control plane
        self._Ctx: Callable[[], Any]
        if c.context_cls is None:
            self._Ctx = type("PipelineContext", (Context,),
                             {"randbits": self.rng.getrandbits, "logs": self.logs, "objs": c.objects})
        else:  # a template whose ``fresh`` makes each pass's (native.CONTEXT_CLASS)
            self._Ctx = c.context_cls(c.objects, self.rng.getrandbits, self.logs).fresh
        # the context of the passes ``ingress`` and ``egress`` run, which each pass clears
        # (E_ingress, E_egress): made once, not a call into the program's module and an object a
        # pass. A clone's parse and a resubmitted pass, which run while it is still read, and
        # ``process`` take fresh ones.
        self._ctx = self._Ctx()
        self._egress_ints: vec[i64] = vec[i64]([0] * 9)

    def _egress_args(self, port: int, rid: int, itype: int, enq_ts: int, enq_qdepth: int, deq_timedelta: int,
                     deq_qdepth: int, now: int, truncate: int) -> vec[i64]:
        """An egress pass's integers as ``E_egress`` takes them (``entries.py``): written into
        one native array kept for it, read by the pass before anything else can run."""
        a = self._egress_ints
        a[0] = port
        a[1] = rid
        a[2] = itype
        a[3] = enq_ts
        a[4] = enq_qdepth
        a[5] = deq_timedelta
        a[6] = deq_qdepth
        a[7] = now
        a[8] = truncate
        return a

    @property
    def stats(self) -> collections.defaultdict[str, int]:
        """Packets in/out and every drop by reason (see README)."""
        s = self._stats
        if self._packets_in:
            s["packets_in"] += self._packets_in
            self._packets_in = 0
        if self._packets_out:
            s["packets_out"] += self._packets_out
            self._packets_out = 0
        if self._cloned:
            s["cloned"] += self._cloned
            self._cloned = 0
        return s

    # ---- helpers ---------------------------------------------------------------------------
    def _fault(self, where: str) -> None:
        """Count a failure inside the program; log the first ones and then every 1000th, so
        that a program that fails on every packet cannot flood the log."""
        self._stats["dropped_internal_error"] += 1
        n = self._stats["dropped_internal_error"]
        if n <= 10 or n % 1000 == 0:
            log.exception("%s failed (%d so far); packet dropped", where, n)

    def _failed(self, where: str) -> None:
        """Count the exception being handled, which dropped the packet: a failed ``assert``
        of the program, or any other failure inside it (``_fault``)."""
        e = sys.exc_info()[1]
        if isinstance(e, AssertionFailed):
            self._stats["dropped_assert"] += 1
            log.debug("assertion failed at %s; packet dropped", e)
        else:
            self._fault(where)

    def _preserve(self, meta: Any, fl: int | None) -> Preserved:
        """The values of field list ``fl`` in ``meta``, with the means to write them back."""
        ops = self._fl.get(fl) if fl is not None else None
        return (ops[1], ops[0](meta)) if ops is not None else _NOTHING_PRESERVED

    def _parsed(self, port: int, data: bytes, now_us: int, itype: int, preserved: Preserved | None,
                apply: bool = True) -> Parsed:
        """Fresh headers and metadata for a frame entering ingress on ``port`` (the preserved
        field list restored first), the parser, and with ``apply`` checksum verification and
        the ingress control: ``E_ingress``'s tuple (``entries.py``). A parser error is
        recorded in ``parser_error`` and counted; the bytes after the last extracted header
        are the payload. (The first pass of a frame, every packet's, calls ``_begin`` itself.)"""
        keep = preserved if preserved is not None and preserved[0] is not None else None
        return self._begin(self._Ctx(), port, data, now_us, itype, keep, apply, self._count_parser_error)

    def _parser_error(self, code: int) -> None:
        self._stats["parser_error"] += 1
        self._stats["parser_error_" + self.prog.error_names.get(code, str(code))] += 1

    # ---- ingress ---------------------------------------------------------------------------
    def ingress(self, port: int, data: bytes, now_us: int = 0, res: IngressResult | None = None) -> IngressResult:
        """Parser, checksum verification and ingress for a frame received on ``port``, then
        BMv2's end-of-ingress logic; resubmitted passes run here, at most ``max_passes``.
        A ``RecirculatedFrame`` starts a RECIRC pass with its preserved metadata. What it
        produced is appended to ``res`` (the device passes one it empties and reuses: two
        lists and an object less per packet) or to a new result."""
        if res is None:
            res = IngressResult()
        job = self.ingress_job(port, data, now_us, res)
        if job is not None:
            res.to_egress.append(job)
        return res

    def ingress_job(self, port: int, data: bytes, now_us: int, res: IngressResult) -> EgressJob | None:
        """``ingress`` as the device calls it: a first pass that asked for a port and nothing
        else (no clone, digest, resubmit or multicast group) returns its job, not appended to
        ``res`` (an append and the list emptied again a packet-hop); every other end appends
        to ``res`` and returns None."""
        self._packets_in += 1
        if type(data) is not bytes or self.max_passes < 1:  # a RecirculatedFrame, or any bytes-like object
            itype = getattr(data, "instance_type", PKT_INSTANCE_TYPE_NORMAL)
            self._ingress_passes(port, bytes(data), now_us, itype, getattr(data, "preserved", None), res, 0)
            return None
        try:  # the first pass of a frame from a port without the resubmit loop's calls
            # typed: compiled, its items are then read from a C tuple, not by generic indexing
            parsed: Parsed = self._begin(self._ctx, port, data, now_us, PKT_INSTANCE_TYPE_NORMAL, None, True,
                                         self._count_parser_error)
            if parsed[4] >= 0 and not parsed[8]:  # a port (or the drop port), no clone
                hdr, meta, sm, _, spec, prio, itype, payload, _ = parsed
                return self._unicast(data, hdr, meta, sm, spec, prio, itype, payload)
            again = self._end_ingress(port, data, now_us, parsed, res)
            if again is not None:
                self._resubmit(port, data, now_us, again, res)
        except Exception:  # a program fault must never take the switch down
            self._failed("ingress")
        return None

    def _resubmit(self, port: int, data: bytes, now_us: int, preserved: Preserved, res: IngressResult) -> None:
        """The first pass asked to resubmit with ``preserved``: the passes after it."""
        if self.max_passes == 1:
            self._stats["dropped_pass_limit"] += 1
        else:
            self._stats["resubmitted"] += 1
            self._ingress_passes(port, data, now_us, PKT_INSTANCE_TYPE_RESUBMIT, preserved, res, 1)

    def _ingress_passes(self, port: int, data: bytes, now_us: int, itype: int, preserved: Preserved | None,
                        res: IngressResult, first: int) -> None:
        """Ingress passes ``first`` .. ``max_passes - 1`` of one frame (resubmits loop here)."""
        for n in range(first, self.max_passes):
            try:
                again = self._ingress_pass(port, data, now_us, itype, preserved, res)
            except Exception:  # a program fault must never take the switch down
                self._failed("ingress")
                return
            if again is None:
                return
            if n + 1 == self.max_passes:
                break
            self._stats["resubmitted"] += 1
            itype, preserved = PKT_INSTANCE_TYPE_RESUBMIT, again
        self._stats["dropped_pass_limit"] += 1

    def _ingress_pass(self, port: int, data: bytes, now_us: int, itype: int,
                      preserved: Preserved | None, res: IngressResult) -> Preserved | None:
        return self._end_ingress(port, data, now_us, self._parsed(port, data, now_us, itype, preserved), res)

    def _end_ingress(self, port: int, data: bytes, now_us: int, parsed: Parsed,
                     res: IngressResult) -> Preserved | None:
        """BMv2's end-of-ingress logic for a pass ``E_ingress`` returned; returns the preserved
        fields of a resubmit, else None."""
        hdr, meta, sm, ctx, spec, prio, itype, payload, clone = parsed
        if spec >= 0:  # a port (or the drop port), perhaps a clone: E_ingress read what they take
            if clone:
                self._clone_i2e(port, data, now_us, meta, ctx, clone, res)
            self._to_port(data, hdr, meta, sm, spec, prio, itype, payload, res.to_egress)
            return None
        if ctx.digests:
            res.digests.extend(DigestMessage(name, fields) for name, fields in ctx.digests)
        if clone:
            self._clone_i2e(port, data, now_us, meta, ctx, clone, res)
        if ctx.resubmit_fl is not None:
            return self._preserve(meta, ctx.resubmit_fl)
        prio = sm.priority & 7
        if sm.mcast_grp:
            replicas = self.prog.pre.mc_groups.get(sm.mcast_grp)
            if replicas is None:
                self._stats["dropped_unknown_mc_group"] += 1
                return None
            last = len(replicas) - 1
            for i, r in enumerate(replicas):  # the last replica takes this pass's state itself
                mine = i == last
                res.to_egress.append(EgressJob(r.port, prio, len(data), PKT_INSTANCE_TYPE_REPLICATION, r.instance,
                                               hdr if mine else hdr.copy(), meta if mine else meta.copy(),
                                               sm if mine else sm.copy(), payload))
            self._stats["replicated"] += len(replicas)
        else:
            self._to_port(data, hdr, meta, sm, sm.egress_spec, prio, sm.instance_type, payload, res.to_egress)
        return None

    def _to_port(self, data: bytes, hdr: Any, meta: Any, sm: Any, spec: int, prio: int, itype: int,
                 payload: bytes, jobs: list[EgressJob]) -> None:
        """The unicast end of an ingress pass, appended to ``jobs`` unless dropped."""
        job = self._unicast(data, hdr, meta, sm, spec, prio, itype, payload)
        if job is not None:
            jobs.append(job)

    def _unicast(self, data: bytes, hdr: Any, meta: Any, sm: Any, spec: int, prio: int, itype: int,
                 payload: bytes) -> EgressJob | None:
        """The unicast end of an ingress pass: a job for queue ``prio`` of port ``spec``, or
        None when dropped (counted)."""
        if spec == DROP_PORT:
            self._dropped_at_ingress(sm)
            return None
        return EgressJob(spec, prio, len(data), itype, 0, hdr, meta, sm, payload)

    def _dropped_at_ingress(self, sm: Any) -> None:
        """Count a packet ingress dropped, and whether its parser had failed."""
        self._stats["dropped_ingress"] += 1
        if sm.parser_error:
            self._stats["dropped_after_parser_error"] += 1

    def _clone_i2e(self, port: int, data: bytes, now_us: int, meta: Any, ctx: PassContext, session: int,
                   res: IngressResult) -> None:
        plan = self._clone_plans.get(session)
        if plan is None:
            self._stats["clone_unknown_session"] += 1
            return
        cos, truncate, replicas = plan
        keep = self._preserve(meta, ctx.clone_fl)
        parsed = self._parsed(port, data, now_us, PKT_INSTANCE_TYPE_NORMAL, None, False)  # keeps its headers
        chdr, cpayload = parsed[0], parsed[7]
        cmeta, csm = self._clone_state(keep, len(data), PKT_INSTANCE_TYPE_INGRESS_CLONE)
        last = len(replicas) - 1
        for i, (rport, instance) in enumerate(replicas):  # the last replica takes the fresh state itself
            mine = i == last
            res.to_egress.append(EgressJob(rport, cos, len(data), PKT_INSTANCE_TYPE_INGRESS_CLONE, instance,
                                           chdr if mine else chdr.copy(), cmeta if mine else cmeta.copy(),
                                           csm if mine else csm.copy(), cpayload, truncate))
        self._cloned += len(replicas)

    # ---- egress ----------------------------------------------------------------------------
    def egress(self, job: EgressJob, qmeta: QueueMeta | None = None, now_us: int = 0,
               res: EgressResult | None = None) -> EgressResult:
        """Egress, checksum update and deparser for a job the traffic manager dequeued, with
        the queue metadata it measured; then BMv2's end-of-egress logic. Appends to ``res``
        as ``ingress`` does. A fault of the pass drops the packet (counted). A plain
        transmission (no clone, recirculation or drop) ends here; the rest of BMv2's
        end-of-egress logic is ``_end_egress``."""
        if res is None:
            res = EgressResult()
        frame = self.egress_frame(job, qmeta, now_us, res)
        if frame is not None:
            res.transmit.append((job.egress_port, frame))
        return res

    def egress_frame(self, job: EgressJob, qmeta: QueueMeta | None, now_us: int, res: EgressResult) -> bytes | None:
        """``egress`` as the device calls it: the frame of a plain transmission (to
        ``job.egress_port``) is returned, not appended to ``res`` (a tuple made, appended and
        the list emptied again, ~500 instructions a packet-hop); the rest of the end-of-egress
        logic appends to ``res`` and returns None."""
        q = qmeta or _EMPTY_QUEUE
        try:
            hdr, meta, sm, payload = job.hdr, job.meta, job.sm, job.payload
            ctx = self._ctx
            args = self._egress_args(job.egress_port, job.egress_rid, job.instance_type, q.enq_timestamp,
                                     q.enq_qdepth, q.deq_timedelta, q.deq_qdepth, now_us, job.truncate)
            frame = self._egress_pass(ctx, hdr, meta, sm, args, payload)
            if frame is None:
                self._end_egress(job, hdr, meta, sm, payload, ctx, res)
            else:
                self._packets_out += 1
                return frame
        except Exception:  # as before the fusion: any fault of the pass drops the packet, counted
            self._failed("egress")
        return None

    def _end_egress(self, job: EgressJob, hdr: Any, meta: Any, sm: Any, payload: bytes, ctx: PassContext,
                    res: EgressResult) -> None:
        """BMv2's end-of-egress logic, checksum update and deparser."""
        if ctx.clone_session:
            self._clone_e2e(job, hdr, meta, sm, payload, ctx, res)
        if sm.egress_spec == DROP_PORT:
            self._stats["dropped_egress"] += 1
            return
        frame = self._deparse(ctx, hdr, meta, payload, ctx.truncate or job.truncate)
        if ctx.recirc_fl is not None:
            rf = RecirculatedFrame(frame)
            rf.preserved = self._preserve(meta, ctx.recirc_fl)
            rf.instance_type = PKT_INSTANCE_TYPE_RECIRC
            res.recirculate.append((sm.ingress_port, rf))
            self._stats["recirculated"] += 1
            return
        res.transmit.append((job.egress_port, frame))
        self._packets_out += 1

    def _clone_e2e(self, job: EgressJob, hdr: Any, meta: Any, sm: Any, payload: bytes, ctx: PassContext,
                   res: EgressResult) -> None:
        plan = self._clone_plans.get(ctx.clone_session)
        if plan is None:
            self._stats["clone_unknown_session"] += 1
            return
        cos, truncate, replicas = plan
        keep = self._preserve(meta, ctx.clone_fl)
        for rport, instance in replicas:
            cmeta, csm = self._clone_state(keep, sm.packet_length, PKT_INSTANCE_TYPE_EGRESS_CLONE)
            res.to_egress.append(EgressJob(rport, cos, sm.packet_length, PKT_INSTANCE_TYPE_EGRESS_CLONE,
                                           instance, hdr.copy(), cmeta, csm, payload, truncate))
        self._cloned += len(replicas)

    # ---- whole switch without queues -------------------------------------------------------
    def process(self, port: int, data: bytes, now_us: int = 0) -> list[tuple[int, bytes]]:
        """Run one packet through ingress and egress with empty queues; clones, multicast
        copies and recirculations are all followed (at most ``max_passes`` ingress passes and
        ``MAX_COPIES`` egress passes). Returns the transmitted frames in order.

        The common case (one unicast copy, or a drop) runs here in one function without
        result or job objects; as soon as the program asks for a digest, clone, resubmit,
        multicast or recirculation the packet continues on the general path from where it is
        (``_end_ingress``/``_end_egress``, then ``_follow``), so the semantics are one."""
        if type(data) is not bytes or self.max_passes < 1:
            return self._follow(self._pending(port, data), [], 0, 0, now_us)
        self._packets_in += 1
        ires = None
        try:
            parsed: Parsed = self._begin(self._Ctx(), port, data, now_us, PKT_INSTANCE_TYPE_NORMAL, None, True,
                                         self._count_parser_error)
            hdr, meta, sm, ctx, eport, _, itype, payload, clone = parsed
            if eport < 0 or clone:
                ires = IngressResult()
                again = self._end_ingress(port, data, now_us, parsed, ires)
            elif eport == DROP_PORT:
                self._dropped_at_ingress(sm)
                return []
        except Exception:
            self._failed("ingress")
            return []
        if ires is not None:
            if again is not None:
                self._resubmit(port, data, now_us, again, ires)
            return self._follow(self._pending(port, data), ires.to_egress, 0, 1, now_us)
        # egress of the one unicast copy, as egress with empty queues; the ingress
        # context serves again when ingress left nothing in it that egress must not see
        # (what the check above did not rule out: a recirculation request or a truncation)
        res: EgressResult | None = None
        if ctx.recirc_fl is not None or ctx.truncate:
            ctx = self._Ctx()
        try:
            frame = self._egress_pass(ctx, hdr, meta, sm, self._egress_args(eport, 0, itype, 0, 0, 0, 0, now_us, 0),
                                      payload)
            if frame is not None:
                self._packets_out += 1
                return [(eport, frame)]
            if ctx.clone_session or ctx.recirc_fl is not None:
                job = EgressJob(eport, sm.priority & 7, len(data), sm.instance_type, 0, hdr, meta, sm, payload)
                res = self._pending(port, data)
                res.to_egress = [job]
                self._end_egress(job, hdr, meta, sm, payload, ctx, res)
            else:
                self._stats["dropped_egress"] += 1
                return []
        except Exception:
            self._failed("egress")
            if res is None or not res.to_egress:
                return []
        return self._follow(res, res.to_egress, 1, 1, now_us)

    @staticmethod
    def _pending(port: int, data: bytes) -> EgressResult:
        """The result ``_follow`` continues from: the original frame is the first entry of
        ``recirculate`` (made only when the packet leaves the fast path)."""
        res = EgressResult()
        res.recirculate.append((port, data))
        return res

    def _follow(self, res: EgressResult, jobs: list[EgressJob], done: int, nxt: int,
                now_us: int) -> list[tuple[int, bytes]]:
        """The general rest of ``process``: egress for ``jobs[done:]`` (the list grows with
        E2E clones), then ingress and egress for each frame from ``res.recirculate[nxt]`` on
        (the list starts with the original frame and grows with recirculated ones)."""
        pending = res.recirculate
        egress = self.egress
        while True:
            res.to_egress = jobs
            while done < len(jobs):
                if len(jobs) > MAX_COPIES:
                    self._stats["dropped_copy_limit"] += 1
                    break
                egress(jobs[done], _EMPTY_QUEUE, now_us, res)
                done += 1
            if nxt >= len(pending):
                return res.transmit
            if len(pending) > self.max_passes:
                self._stats["dropped_pass_limit"] += 1
                return res.transmit
            p, d = pending[nxt]
            nxt += 1
            jobs, done = self.ingress(p, d, now_us).to_egress, 0


MAX_COPIES: Final = 1024
_EMPTY_QUEUE: Final = QueueMeta()
