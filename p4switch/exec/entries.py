"""The generated module's entry points: what the pipeline calls per packet.

``V1Pipeline`` owns BMv2's end-of-ingress and end-of-egress logic, but the work every packet
does around the six stages (fresh headers and metadata, the standard metadata fields the
target sets, the parser's error, the ingress control, the egress fields from the queue, the
deparser's frame) is generated into the program's module, next to the stages it calls. With
the mypyc backend it is then compiled too: stores into native objects from the interpreter
were most of a compiled basic L3 packet's instructions (attribute look-ups through type
descriptors, a Python frame per step), and here they are slot writes. The pipeline makes one
call into the module for each pipeline half. Each takes the packet's context first: the
mypyc backend types a generated function's ``ctx`` on its ``def`` line (``native.py``).

- ``E_ingress(ctx, port, d, now, itype, keep, apply, on_error)`` -> ``(hdr, meta, sm, ctx,
  spec, prio, itype, payload, clone)``: new headers and metadata, ``keep`` (a preserved field
  list's ``(put, values)``, or None) written back, the parser (its error in ``parser_error``
  and, unless NoError, passed to ``on_error``, which counts it; the payload after the last
  extracted header), and with ``apply`` checksum verification and ingress. When the pass
  asked for nothing but a port and perhaps a clone (no digest, resubmit or multicast group),
  ``spec`` is its ``egress_spec`` (the drop port included) and the rest what the packet's
  ``EgressJob`` takes; otherwise ``spec`` is -1: the pipeline's general end-of-ingress logic.
  ``clone`` is the clone session asked for (0: none). (Read by the pipeline from outside the
  module, each of these fields was a generic attribute look-up; fabric.p4's INT sinks clone
  every data packet they report.)
- ``E_clone_state(keep, packet_length, itype)`` -> ``(meta, sm)``: a clone's metadata as
  simple_switch makes it: everything reset, the preserved field list (``keep``, ``(None, ())``
  for none) written back, ``packet_length`` and ``instance_type`` set (egress sets the rest).
- ``E_egress(ctx, hdr, meta, sm, q, payload)`` -> the frame to send, or None when the
  end-of-egress logic has more to do (a clone, a recirculation or a drop: the pipeline's general
  path). ``q`` is a ``vec[i64]`` of (port, rid, itype, enq_ts, enq_qdepth, deq_timedelta,
  deq_qdepth, now, truncate), which the pipeline fills in place (``V1Pipeline._egress_args``):
  as arguments, the ints were boxed by the caller and parsed by the call, ~1,000 instructions
  a packet-hop.
- ``E_deparse(ctx, hdr, meta, payload, truncate)`` -> the frame: checksum update, deparser,
  payload, cut to ``truncate`` bytes when set.
"""

from __future__ import annotations

from p4switch.exec.runtime import DROP_PORT

MASK48 = (1 << 48) - 1
MASK32 = (1 << 32) - 1
MASK19 = (1 << 19) - 1
SPARE_PACKETS = 64

# Each pass starts by clearing what the externs of a pass set in its context (``E_clear``: one
# context serves many passes, V1Pipeline._ctx). A packet's headers, metadata and standard
# metadata that left by a plain transmission are reset and kept for the next packet, up to
# SPARE_PACKETS of each (``Spares``): made new and freed, they cost twice a reset. The holder
# counts the spare ones in lists of fixed length (a list popped to empty and appended to again
# was resized, a ``realloc``, at both), and is Final: compiled, a module's other names are a
# look-up in its globals dict at every use. It is the module's: in Python one switch's (a
# module per load), its passes serialized by the device's lock; compiled, the switches' of a
# process, where taking and giving back are native steps (no Python code runs between reading
# the count and writing it, so no other thread can).
_TEMPLATE = """
class Spares:
    def __init__(self) -> None:
        self.hdr: list[{H}] = [{H}() for _ in range({SPARE})]
        self.meta: list[{M}] = [{M}() for _ in range({SPARE})]
        self.sm: list[{SM}] = [{SM}() for _ in range({SPARE})]
        self.n = {SPARE}
_spares: Final = Spares()

def E_clear(ctx: Any) -> None:
    ctx.clone_type = None
    ctx.clone_session = 0
    ctx.clone_fl = None
    ctx.resubmit_fl = None
    ctx.recirc_fl = None
    ctx.digests = ()
    ctx.truncate = 0

def E_ingress(ctx: Any, port: int, d: bytes, now: int, itype: int, keep: Any, apply: bool,
              on_error: Any) -> tuple[{H}, {M}, {SM}, Any, int, int, int, bytes, int]:
    E_clear(ctx)
    spares = _spares
    if spares.n:
        spare = spares.n - 1
        spares.n = spare
        hdr = spares.hdr[spare]
        meta = spares.meta[spare]
        sm = spares.sm[spare]
    else:
        hdr = {H}()
        meta = {M}()
        sm = {SM}()
    n = len(d)
    sm.ingress_port = port
    sm.packet_length = n
    sm.instance_type = itype
    sm.ingress_global_timestamp = now & {MASK48}
    if keep is not None:
        keep[0](meta, keep[1])
    ctx.sm = sm
    ctx.nbytes = n
    ctx.now = now
    try:
        off = {parser}(d, 0, hdr, meta, sm, ctx)
    except ParserError as e:
        sm.parser_error = e.code
        if e.code:
            on_error(e.code)
        off = e.off or 0
    payload = d[off:]
    ctx.payload = payload
    if apply:
        try:
            {verify_checksum}(hdr, meta, ctx)
            {ingress}(hdr, meta, sm, ctx)
        except ExitControl:
            pass
    if ctx.digests or ctx.resubmit_fl is not None or sm.mcast_grp:
        return hdr, meta, sm, ctx, -1, 0, 0, payload, ctx.clone_session
    return hdr, meta, sm, ctx, sm.egress_spec, sm.priority & 7, sm.instance_type, payload, ctx.clone_session

def E_clone_state(keep: Any, packet_length: int, itype: int) -> tuple[{M}, {SM}]:
    meta = {M}()
    sm = {SM}()
    put = keep[0]
    if put is not None:
        put(meta, keep[1])
    sm.packet_length = packet_length
    sm.instance_type = itype
    return meta, sm

def E_egress(ctx: Any, hdr: {H}, meta: {M}, sm: {SM}, q: "vec[i64]", payload: bytes) -> bytes | None:
    E_clear(ctx)
    sm.egress_port = q[0]
    sm.egress_spec = 0
    sm.egress_rid = q[1]
    sm.instance_type = q[2]
    sm.enq_timestamp = q[3] & {MASK32}
    sm.enq_qdepth = q[4] & {MASK19}
    sm.deq_timedelta = q[5] & {MASK32}
    sm.deq_qdepth = q[6] & {MASK19}
    now = int(q[7])
    truncate = int(q[8])
    sm.egress_global_timestamp = now & {MASK48}
    ctx.sm = sm
    ctx.nbytes = sm.packet_length
    ctx.now = now
    ctx.payload = payload
    try:
        {egress}(hdr, meta, sm, ctx)
    except ExitControl:
        pass
    if ctx.clone_session or ctx.recirc_fl is not None or sm.egress_spec == {DROP_PORT}:
        return None
    frame = E_deparse(ctx, hdr, meta, payload, ctx.truncate or truncate)
    spares = _spares
    spare = spares.n
    if spare < {SPARE}:
        hdr.reset()
        meta.reset()
        sm.reset()
        spares.hdr[spare] = hdr
        spares.meta[spare] = meta
        spares.sm[spare] = sm
        spares.n = spare + 1
    return frame

def E_deparse(ctx: Any, hdr: {H}, meta: {M}, payload: bytes, truncate: int) -> bytes:
    {compute_checksum}(hdr, meta, ctx)
{deparse}    if truncate and len(frame) > truncate:
        frame = frame[:truncate]
    return frame
"""

NAMES = ("E_ingress", "E_egress", "E_deparse", "E_clone_state")


# The deparser's output and the frame made of it (``TypeClasses.out_type``): a list of chunks
# joined (Python), the context's ``BytesWriter`` the headers are written to (compiled; one
# writer for every packet of the context, emptied: a new one was an object of 300 bytes made,
# zeroed and freed each packet), the payload added to its bytes (one copy of the payload;
# written into the writer it was copied into a grown buffer and out again).
_DEPARSE = {
    False: """    out: list[bytes] = []
    {deparser}(out, hdr, ctx)
    out.append(payload)
    frame = b"".join(out)
""",
    True: """    out = ctx.out
    out.truncate(0)
    {deparser}(out, hdr, ctx)
    frame = out.getvalue() + payload
""",
}


def entry_code(stages: dict[str, str], hdr_cls: str, meta_cls: str, sm_cls: str, native: bool) -> str:
    """The entry points' source for a program whose stage functions are named in ``stages``
    (v1model's six: parser, verify_checksum, ingress, egress, compute_checksum, deparser) and
    whose parser's headers, metadata and standard metadata are the generated classes named;
    ``native``: for the mypyc backend."""
    return _TEMPLATE.format(H=hdr_cls, M=meta_cls, SM=sm_cls, MASK48=MASK48, MASK32=MASK32,
                            MASK19=MASK19, DROP_PORT=DROP_PORT, SPARE=SPARE_PACKETS,
                            deparse=_DEPARSE[native].format(**stages), **stages)
